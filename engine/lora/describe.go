package lora

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"h3studio/engine/dit"
)

// Describe is the human-readable summary `h3studio lora inspect` prints.
func Describe(f *File) string {
	var b strings.Builder
	var formats []string
	for _, x := range f.Formats() {
		formats = append(formats, string(x))
	}
	fmt.Fprintf(&b, "file     %s\n", f.Path)
	fmt.Fprintf(&b, "size     %d bytes (%.1f MiB), %s\n", f.Size, float64(f.Size)/(1<<20), f.DType)
	fmt.Fprintf(&b, "sha256   %s\n", f.SHA256)
	fmt.Fprintf(&b, "format   %s\n", strings.Join(formats, " + "))
	// Count targets per projection kind and stack.
	type kind struct {
		stack dit.Stack
		name  string
	}
	counts := map[kind]int{}
	ranks := map[kind]map[int]bool{}
	blocks := map[dit.Stack]map[int]bool{}
	var qkvOrder []string
	for _, m := range f.Modules {
		k := kind{m.Target.Site.Stack, shortName(m)}
		counts[k]++
		if ranks[k] == nil {
			ranks[k] = map[int]bool{}
		}
		ranks[k][m.Rank()] = true
		if blocks[k.stack] == nil {
			blocks[k.stack] = map[int]bool{}
		}
		blocks[k.stack][m.Target.Site.Block] = true
		if m.Target.Site.Proj == dit.ProjQKV && m.Target.Part < 0 && len(qkvOrder) == 0 {
			if m.Target.Interleaved {
				qkvOrder = append(qkvOrder, "qkv_proj rows interleaved per head (the release checkpoint's order)")
			} else {
				qkvOrder = append(qkvOrder, "qkv_proj rows contiguous [q; k; v] (ComfyUI's order; permuted on load)")
			}
		}
	}
	fmt.Fprintf(&b, "modules  %d (%d blocks, %d refiner blocks, final layer %v)\n", len(f.Modules),
		len(blocks[dit.StackBlocks]), len(blocks[dit.StackRefiner]), len(blocks[dit.StackFinal]) > 0)
	keys := make([]kind, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].stack != keys[j].stack {
			return keys[i].stack < keys[j].stack
		}
		return keys[i].name < keys[j].name
	})
	for _, k := range keys {
		var rs []string
		for r := range ranks[k] {
			if r == 0 {
				rs = append(rs, "full delta")
			} else {
				rs = append(rs, fmt.Sprint(r))
			}
		}
		sort.Strings(rs)
		stack := map[dit.Stack]string{dit.StackBlocks: "blocks", dit.StackRefiner: "refiner", dit.StackFinal: "final"}[k.stack]
		fmt.Fprintf(&b, "  %-8s %-20s ×%-4d rank %s\n", stack, k.name, counts[k], strings.Join(rs, ", "))
	}
	for _, o := range qkvOrder {
		fmt.Fprintf(&b, "order    %s\n", o)
	}
	lx := f.lightx2v()
	srcs := map[string]bool{}
	alphas := map[float64]bool{}
	for _, m := range f.Modules {
		if m.Rank() > 0 {
			a, s := f.alpha(m, Use{Strength: 1}, lx)
			srcs[s], alphas[a] = true, true
		}
	}
	var as []string
	for a := range alphas {
		as = append(as, fmt.Sprintf("%g", a))
	}
	sort.Strings(as)
	var ss []string
	for s := range srcs {
		ss = append(ss, s)
	}
	sort.Strings(ss)
	if len(as) > 0 {
		fmt.Fprintf(&b, "alpha    %s (%s)\n", strings.Join(as, ", "), strings.Join(ss, "; "))
	}
	if a, src := f.metadataAlpha(); !math.IsNaN(a) {
		fmt.Fprintf(&b, "metadata %s = %g\n", src, a)
	}
	if len(f.Unknown) > 0 {
		fmt.Fprintf(&b, "unknown  %d tensors, not applied:\n", len(f.Unknown))
		for _, u := range f.Unknown {
			fmt.Fprintf(&b, "  %s\n", u)
		}
	}
	return b.String()
}

// shortName is the module's name within its block ("attn.to_q").
func shortName(m *Module) string {
	n := m.Name
	if i := strings.Index(n, "blocks."); i >= 0 {
		rest := n[i+len("blocks."):]
		if j := strings.IndexByte(rest, '.'); j >= 0 {
			return rest[j+1:]
		}
	}
	if i := strings.LastIndex(n, "final_layer."); i >= 0 {
		return n[i+len("final_layer."):]
	}
	if i := strings.LastIndex(n, "norm_out."); i >= 0 {
		return n[i:]
	}
	return n
}
