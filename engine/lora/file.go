package lora

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"h3studio/engine/compute"
	"h3studio/engine/dit"
	"h3studio/engine/safetensors"
)

// Module is one module's tensors in a LoRA file.
type Module struct {
	Name   string // as the file spells it, prefix included ("diffusion_model.blocks.0.attn.qkv_proj")
	Target Target
	Format Format
	// A [rank, in] and B [out, rank] (both or neither); Diff [out, in];
	// DiffB [1, out]. Empty when absent.
	A, B, Diff, DiffB dit.Matrix
	// Alpha is the file's .alpha for this module (NaN when absent).
	Alpha   float64
	keys    map[Role]string
	lowRank Format // the family of the lora_A/lora_B keys
}

// Rank is the module's rank (0 for full deltas only).
func (m *Module) Rank() int { return m.A.Rows }

// File is a parsed, validated LoRA file.
type File struct {
	Path   string
	SHA256 string
	Size   int64
	// Modules in name order.
	Modules []*Module
	// Unknown lists the tensors that name no MiniMax-H3 module, with why.
	Unknown []string
	// Metadata is the safetensors __metadata__.
	Metadata map[string]string
	// DType is the dtype of the tensors ("BF16"; "mixed" when several).
	DType string
}

// Formats lists the key families present, in a stable order.
func (f *File) Formats() []Format {
	seen := map[Format]bool{}
	var out []Format
	for _, m := range f.Modules {
		if !seen[m.Format] {
			seen[m.Format] = true
			out = append(out, m.Format)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Ranks lists the distinct ranks of the low-rank modules, ascending.
func (f *File) Ranks() []int {
	seen := map[int]bool{}
	var out []int
	for _, m := range f.Modules {
		if r := m.Rank(); r > 0 && !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	sort.Ints(out)
	return out
}

// Read opens, validates and parses the LoRA file at path: the safetensors
// container is checked as a checkpoint is (header rules, exact tiling),
// every tensor name is parsed, each module's tensors must pair up (lora_A
// with lora_B, ranks agreeing, 2-D float tensors, a scalar alpha), and
// names that are no MiniMax-H3 module are listed in Unknown.
func Read(path string) (*File, error) { return read(path, false) }

// ReadShapes is Read from the header alone: the same validation of names
// and shapes, shape-only matrices (no Data), no hash. Planning uses it to
// count the low-rank branch's FLOPs and storage.
func ReadShapes(path string) (*File, error) { return read(path, true) }

func read(path string, shapesOnly bool) (*File, error) {
	st, err := safetensors.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lora: %w", err)
	}
	defer st.Close()
	var sum string
	var size int64
	if shapesOnly {
		if fi, err := os.Stat(path); err == nil {
			size = fi.Size()
		}
	} else if sum, size, err = hashFile(path); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	f := &File{Path: abs, SHA256: sum, Size: size, Metadata: st.Header.Metadata}
	byName := map[string]*Module{}
	dtypes := map[compute.DType]bool{}
	for _, name := range st.Names() {
		k, err := ParseKey(name)
		if err != nil {
			f.Unknown = append(f.Unknown, name+" (not a LoRA tensor name)")
			continue
		}
		t, err := Resolve(k)
		if err != nil {
			f.Unknown = append(f.Unknown, name+" (no such MiniMax-H3 module)")
			continue
		}
		info, _ := st.Info(name)
		if !info.DType.IsFloat() {
			return nil, fmt.Errorf("lora: %s: %s is %s, want a float type", path, name, info.DType)
		}
		dtypes[info.DType] = true
		data, err := st.Data(name)
		if err != nil {
			return nil, fmt.Errorf("lora: %w", err)
		}
		mname := k.Prefix + k.Module
		m := byName[mname]
		if m == nil {
			m = &Module{Name: mname, Target: t, Alpha: math.NaN(), keys: map[Role]string{}}
			byName[mname] = m
		}
		if prev, dup := m.keys[k.Role]; dup {
			return nil, fmt.Errorf("lora: %s: %s and %s are both the %s of %s", path, prev, name, k.Role, mname)
		}
		m.keys[k.Role] = name
		if k.Role == RoleA || k.Role == RoleB {
			ff := k.format(t)
			if m.lowRank != "" && m.lowRank != ff {
				return nil, fmt.Errorf("lora: %s: %s mixes key families (%s and %s)", path, mname, m.lowRank, ff)
			}
			m.lowRank, m.Target = ff, t
		}
		mat := dit.Matrix{DType: info.DType}
		if !shapesOnly || k.Role == RoleAlpha {
			mat.Data = append([]byte(nil), data...)
		}
		shape := info.Shape
		switch k.Role {
		case RoleAlpha:
			if shape.NumElements() != 1 {
				return nil, fmt.Errorf("lora: %s: %s has shape %v, want a scalar", path, name, shape)
			}
			m.Alpha = float64(mat.Float32s()[0])
			if !(m.Alpha > 0) || math.IsInf(m.Alpha, 0) {
				return nil, fmt.Errorf("lora: %s: %s = %v, want a positive number", path, name, m.Alpha)
			}
			continue
		case RoleDiffB:
			if len(shape) != 1 || shape[0] == 0 {
				return nil, fmt.Errorf("lora: %s: %s has shape %v, want [out]", path, name, shape)
			}
			mat.Rows, mat.Cols = 1, shape[0]
			m.DiffB = mat
			continue
		}
		if len(shape) == 4 && shape[2] == 1 && shape[3] == 1 {
			shape = shape[:2] // a 1×1 convolution's [out, in, 1, 1]
		}
		if len(shape) != 2 || shape[0] == 0 || shape[1] == 0 {
			return nil, fmt.Errorf("lora: %s: %s has shape %v, want a non-empty 2-D matrix", path, name, shape)
		}
		mat.Rows, mat.Cols = shape[0], shape[1]
		switch k.Role {
		case RoleA:
			m.A = mat
		case RoleB:
			m.B = mat
		case RoleDiff:
			m.Diff = mat
		}
	}
	for _, m := range byName {
		m.Format = m.lowRank
		if m.Format == "" {
			m.Format = FormatDiff
		}
		switch {
		case m.A.Empty() != m.B.Empty():
			have, miss := RoleA, RoleB
			if m.A.Empty() {
				have, miss = RoleB, RoleA
			}
			return nil, fmt.Errorf("lora: %s: %s has a %s (%s) but no %s", path, m.Name, have, m.keys[have], miss)
		case !m.A.Empty() && m.A.Rows != m.B.Cols:
			return nil, fmt.Errorf("lora: %s: %s is [%d, %d] but %s is [%d, %d]: the ranks disagree",
				path, m.keys[RoleA], m.A.Rows, m.A.Cols, m.keys[RoleB], m.B.Rows, m.B.Cols)
		case m.A.Empty() && m.Diff.Empty() && m.DiffB.Empty():
			return nil, fmt.Errorf("lora: %s: %s has only an alpha (%s)", path, m.Name, m.keys[RoleAlpha])
		}
		f.Modules = append(f.Modules, m)
	}
	sort.Slice(f.Modules, func(i, j int) bool { return f.Modules[i].Name < f.Modules[j].Name })
	switch len(dtypes) {
	case 0:
	case 1:
		for d := range dtypes {
			f.DType = d.String()
		}
	default:
		f.DType = "mixed"
	}
	if len(f.Modules) == 0 {
		return nil, fmt.Errorf("lora: %s holds no LoRA module of the MiniMax-H3 transformer (%d tensors: %s)", path, len(f.Unknown), firstFew(f.Unknown))
	}
	return f, nil
}

func firstFew(s []string) string {
	if len(s) > 4 {
		return strings.Join(s[:4], ", ") + fmt.Sprintf(", … %d more", len(s)-4)
	}
	return strings.Join(s, ", ")
}

func hashFile(path string) (string, int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("lora: %w", err)
	}
	defer fh.Close()
	h := sha256.New()
	n, err := io.Copy(h, fh)
	if err != nil {
		return "", 0, fmt.Errorf("lora: reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// metadataAlpha is the file-wide alpha of __metadata__ ("alpha",
// "lora_alpha" or "ss_network_alpha"), or NaN.
func (f *File) metadataAlpha() (float64, string) {
	for _, k := range []string{"alpha", "lora_alpha", "ss_network_alpha"} {
		if s, ok := f.Metadata[k]; ok {
			if v, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && v > 0 && !math.IsInf(v, 0) {
				return v, "__metadata__ " + k
			}
		}
	}
	return math.NaN(), ""
}
