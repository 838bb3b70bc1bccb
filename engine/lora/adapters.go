package lora

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"h3studio/engine/dit"
)

// Use is one LoRA of a request: a file, its strength and, optionally, the
// alpha to assume (0: from the file, see Alpha rules in docs/lora.md).
type Use struct {
	Path     string  `json:"path"`
	Strength float64 `json:"strength"`
	Alpha    float64 `json:"alpha,omitempty"`
}

// ParseUse parses PATH[:STRENGTH[:ALPHA]] (strength 1 when omitted). Only
// trailing numeric fields are taken, so a path may contain colons.
func ParseUse(s string) (Use, error) {
	u := Use{Path: s, Strength: 1}
	num := func(f string) (float64, bool) {
		v, err := strconv.ParseFloat(f, 64)
		return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	if i := strings.LastIndexByte(s, ':'); i > 0 {
		if v, ok := num(s[i+1:]); ok {
			u.Path, u.Strength = s[:i], v
			if j := strings.LastIndexByte(u.Path, ':'); j > 0 {
				if w, ok := num(u.Path[j+1:]); ok {
					u.Path, u.Strength, u.Alpha = u.Path[:j], w, v
				}
			}
		}
	}
	switch {
	case u.Path == "":
		return u, fmt.Errorf("lora: %q names no file (want PATH[:STRENGTH[:ALPHA]])", s)
	case math.Abs(u.Strength) > 100:
		return u, fmt.Errorf("lora: %q: strength %g outside −100..100", s, u.Strength)
	case u.Alpha < 0:
		return u, fmt.Errorf("lora: %q: alpha %g must be positive", s, u.Alpha)
	}
	return u, nil
}

// String is the PATH[:STRENGTH[:ALPHA]] form.
func (u Use) String() string {
	s := u.Path + ":" + strconv.FormatFloat(u.Strength, 'g', -1, 64)
	if u.Alpha > 0 {
		s += ":" + strconv.FormatFloat(u.Alpha, 'g', -1, 64)
	}
	return s
}

// Applied records what one LoRA of a request did: enough to reproduce it
// (path, content hash, strength, alpha and where the alpha came from) and
// to judge it (what it touched, what it could not).
type Applied struct {
	Path        string   `json:"path"`
	SHA256      string   `json:"sha256"`
	Strength    float64  `json:"strength"`
	Alpha       float64  `json:"alpha,omitempty"` // 0 when it varies per module (see AlphaSource)
	AlphaSource string   `json:"alpha_source"`
	Format      string   `json:"format"`
	Ranks       []int    `json:"ranks,omitempty"`
	Modules     int      `json:"modules"`
	Unmatched   []string `json:"unmatched,omitempty"` // modules this transformer does not have
	Unknown     []string `json:"unknown,omitempty"`   // tensors that name no MiniMax-H3 module
}

// Warnings are the lines a user must see about a: what was not applied and
// what was assumed.
func (a Applied) Warnings() []string {
	var w []string
	name := filepath.Base(a.Path)
	if n := len(a.Unmatched); n > 0 {
		w = append(w, fmt.Sprintf("LoRA %s: %d module(s) match no module of this transformer, not applied: %s", name, n, firstFew(a.Unmatched)))
	}
	if n := len(a.Unknown); n > 0 {
		w = append(w, fmt.Sprintf("LoRA %s: %d tensor(s) are not MiniMax-H3 LoRA tensors, not applied: %s", name, n, firstFew(a.Unknown)))
	}
	if strings.HasPrefix(a.AlphaSource, "assumed") {
		w = append(w, fmt.Sprintf("LoRA %s: alpha %g %s", name, a.Alpha, a.AlphaSource))
	}
	return w
}

// lightx2vModules are the six diffusers projections of every block and
// refiner block in lightx2v's Minimax-H3-Turbo diffusers files.
var lightx2vModules = []string{"attn.to_q", "attn.to_k", "attn.to_v", "attn.to_out.0", "ff.net.0.proj", "ff.net.2"}

// lightx2v reports whether f has exactly the tensor inventory of
// lightx2v's Minimax-H3-Turbo diffusers/PEFT files: 312 modules (50 blocks
// and 2 refiner blocks × the six projections), lora_A/lora_B.default,
// rank 128, no alpha anywhere. Those files are published for alpha 8 (544p
// 4-step v0.1, 8-step v1.0) or 128 (768p 4-step v1.0).
func (f *File) lightx2v() bool {
	if len(f.Modules) != 52*len(lightx2vModules) || len(f.Unknown) > 0 {
		return false
	}
	if a, _ := f.metadataAlpha(); !math.IsNaN(a) {
		return false
	}
	want := map[string]bool{}
	for i := 0; i < 50; i++ {
		for _, m := range lightx2vModules {
			want[fmt.Sprintf("transformer_blocks.%d.%s", i, m)] = true
		}
	}
	for i := 0; i < 2; i++ {
		for _, m := range lightx2vModules {
			want[fmt.Sprintf("token_refiner.refiner_blocks.%d.%s", i, m)] = true
		}
	}
	for _, m := range f.Modules {
		if !want[m.Name] || m.Rank() != 128 || !math.IsNaN(m.Alpha) || !m.Diff.Empty() || !m.DiffB.Empty() ||
			!strings.HasSuffix(m.keys[RoleA], ".lora_A.default.weight") {
			return false
		}
	}
	return true
}

// alpha is the alpha of module m for use u and where it came from:
// the request's, then the module's .alpha, then __metadata__, then the
// lightx2v inventory's published value, then the rank.
func (f *File) alpha(m *Module, u Use, lightx2v bool) (float64, string) {
	if u.Alpha > 0 {
		return u.Alpha, "given with the LoRA"
	}
	if !math.IsNaN(m.Alpha) {
		return m.Alpha, "the file's .alpha tensors"
	}
	if a, src := f.metadataAlpha(); !math.IsNaN(a) {
		return a, "the file's " + src
	}
	if lightx2v {
		// The 544p and 768p files share one inventory; only the published
		// file name tells them apart.
		if strings.Contains(strings.ToLower(filepath.Base(f.Path)), "768p") {
			return 128, "assumed: lightx2v Turbo diffusers inventory (312 modules, rank 128, no alpha) with 768p in its name, published for alpha 128"
		}
		return 8, "assumed: lightx2v Turbo diffusers inventory (312 modules, rank 128, no alpha), published for alpha 8 (the 768p 4-step v1.0 file needs PATH:STRENGTH:128)"
	}
	return float64(m.Rank()), "rank (no alpha in the file)"
}

// rowsOf returns the source rows of B (or a delta) that form part c of
// target t, or nil for all rows in order.
func rowsOf(t Target, cfg dit.Config, c int) []int {
	if t.Site.Proj != dit.ProjQKV || t.Part >= 0 {
		return nil
	}
	I, D := cfg.Inner(), cfg.HeadDim
	rows := make([]int, I)
	for j := range rows {
		if t.Interleaved {
			rows[j] = (j/D)*3*D + c*D + j%D
		} else {
			rows[j] = c*I + j
		}
	}
	return rows
}

// pick returns the rows of x at idx (a row-permuted copy), or x itself for
// nil idx.
func pick(x dit.Matrix, idx []int) dit.Matrix {
	if idx == nil {
		return x
	}
	if x.Data == nil {
		return dit.Matrix{DType: x.DType, Rows: len(idx), Cols: x.Cols} // shape-only
	}
	w := x.Cols * x.DType.Size()
	out := dit.Matrix{DType: x.DType, Rows: len(idx), Cols: x.Cols, Data: make([]byte, len(idx)*w)}
	for i, r := range idx {
		copy(out.Data[i*w:(i+1)*w], x.Data[r*w:(r+1)*w])
	}
	return out
}

// swapHalves is [value; gate] → [gate; value] for a diffusers fc1.
func swapHalves(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = (i + n/2) % n
	}
	return idx
}

// vector views a [1, n] bias as [n, 1] rows (and back).
func vector(x dit.Matrix) dit.Matrix {
	return dit.Matrix{DType: x.DType, Rows: x.Cols, Cols: x.Rows, Data: x.Data}
}

// update turns module m into the transformer's updates (the low-rank pair
// at scale, the full deltas at diffScale), checking every shape against cfg
// and naming the tensor that does not fit.
func (f *File) update(m *Module, cfg dit.Config, scale, diffScale float32) ([]dit.Update, error) {
	t := m.Target
	parts, in, err := cfg.SiteShape(t.Site)
	if err != nil {
		return nil, err
	}
	whole := 0
	for _, p := range parts {
		whole += p
	}
	out := whole
	if t.Part >= 0 {
		out = parts[t.Part]
	}
	rank := m.Rank()
	check := func(role Role, x dit.Matrix, rows, cols int) error {
		if !x.Empty() && (x.Rows != rows || x.Cols != cols) {
			return fmt.Errorf("lora: %s: %s is [%d, %d], the module needs [%d, %d] (%s of the %d-block transformer)",
				f.Path, m.keys[role], x.Rows, x.Cols, rows, cols, t.Site, cfg.NumLayers)
		}
		return nil
	}
	if err := check(RoleA, m.A, rank, in); err != nil {
		return nil, err
	}
	if err := check(RoleB, m.B, out, rank); err != nil {
		return nil, err
	}
	if err := check(RoleDiff, m.Diff, out, in); err != nil {
		return nil, err
	}
	if err := check(RoleDiffB, m.DiffB, 1, out); err != nil {
		return nil, err
	}
	var order []int
	if t.ValueFirst {
		order = swapHalves(out)
	}
	// One update for the low-rank pair, one for the full deltas (diff,
	// diff_b) when the file has them too.
	build := func(a, mat, bias dit.Matrix, scale float32) dit.Update {
		u := dit.Update{A: a, Scale: scale, Source: f.Path + ": " + m.Name, B: make([]dit.Matrix, len(parts))}
		if !bias.Empty() {
			u.Bias = make([]dit.Matrix, len(parts))
		}
		for c := range parts {
			if t.Part >= 0 && c != t.Part {
				continue
			}
			rows := rowsOf(t, cfg, c)
			if rows == nil {
				rows = order
			}
			if !mat.Empty() {
				u.B[c] = pick(mat, rows)
			}
			if u.Bias != nil {
				u.Bias[c] = vector(pick(vector(bias), rows))
			}
		}
		return u
	}
	var us []dit.Update
	if !m.A.Empty() {
		us = append(us, build(m.A, m.B, dit.Matrix{}, scale))
	}
	if !m.Diff.Empty() || !m.DiffB.Empty() {
		us = append(us, build(dit.Matrix{}, m.Diff, m.DiffB, diffScale))
	}
	return us, nil
}

// Adapters maps f onto the transformer of cfg at use u's strength. Shapes
// that do not fit are refused naming the tensor; modules the transformer
// lacks (a block beyond its depth) are listed in Applied.Unmatched, not
// applied. A strength of 0 yields no update at all.
func (f *File) Adapters(cfg dit.Config, u Use) (dit.Adapters, Applied, error) {
	ap := Applied{Path: f.Path, SHA256: f.SHA256, Strength: u.Strength, Ranks: f.Ranks(), Unknown: f.Unknown}
	var formats []string
	for _, x := range f.Formats() {
		formats = append(formats, string(x))
	}
	ap.Format = strings.Join(formats, " + ")
	lx := f.lightx2v()
	ad := dit.Adapters{}
	alphas, sources := map[float64]bool{}, map[string]bool{}
	for _, m := range f.Modules {
		if _, _, err := cfg.SiteShape(m.Target.Site); err != nil {
			ap.Unmatched = append(ap.Unmatched, m.Name)
			continue
		}
		scale := u.Strength
		if m.Rank() > 0 {
			a, src := f.alpha(m, u, lx)
			alphas[a], sources[src] = true, true
			ap.Alpha, ap.AlphaSource = a, src
			scale *= a / float64(m.Rank())
		}
		up, err := f.update(m, cfg, float32(scale), float32(u.Strength))
		if err != nil {
			return nil, ap, err
		}
		ap.Modules++
		if u.Strength != 0 {
			ad[m.Target.Site] = append(ad[m.Target.Site], up...)
		}
	}
	if len(alphas) > 1 {
		ap.Alpha = 0
	}
	if len(sources) > 1 {
		var s []string
		for k := range sources {
			s = append(s, k)
		}
		sort.Strings(s)
		ap.AlphaSource = strings.Join(s, "; ")
	}
	if len(sources) == 0 {
		ap.AlphaSource = "none (full deltas only)"
	}
	if ap.Modules == 0 {
		return nil, ap, fmt.Errorf("lora: %s: none of its %d modules is in this transformer (%d blocks, %d refiner blocks): %s",
			f.Path, len(f.Modules), cfg.NumLayers, cfg.RefinerLayers, firstFew(ap.Unmatched))
	}
	if u.Strength == 0 {
		ad = nil
	}
	return ad, ap, nil
}

// Shapes is Load from the files' headers: shape-only updates for planning.
func Shapes(cfg dit.Config, uses []Use) (dit.Adapters, error) {
	all := dit.Adapters{}
	for _, u := range uses {
		f, err := ReadShapes(u.Path)
		if err != nil {
			return nil, err
		}
		ad, _, err := f.Adapters(cfg, u)
		if err != nil {
			return nil, err
		}
		for s, us := range ad {
			all[s] = append(all[s], us...)
		}
	}
	if len(all) == 0 {
		all = nil
	}
	return all, nil
}

// Load reads every LoRA of uses and combines their updates for cfg (each
// with its own strength, applied in order).
func Load(cfg dit.Config, uses []Use) (dit.Adapters, []Applied, error) {
	all := dit.Adapters{}
	var out []Applied
	for _, u := range uses {
		f, err := Read(u.Path)
		if err != nil {
			return nil, nil, err
		}
		ad, ap, err := f.Adapters(cfg, u)
		if err != nil {
			return nil, nil, err
		}
		for s, us := range ad {
			all[s] = append(all[s], us...)
		}
		out = append(out, ap)
	}
	if len(all) == 0 {
		all = nil
	}
	return all, out, nil
}
