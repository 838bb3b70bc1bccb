package dit

import (
	"h3studio/engine/compute"
	"h3studio/engine/nn"
)

// reduction holds the maps of h3.c's token reduction for one layout
// (H3-DIT §13.4): the target video rows, which end the sequence in
// frame-major, row-major token order, are pooled in horizontally adjacent
// pairs (2k, 2k+1) of each token row; an odd last column stays a singleton.
// Every other row is kept as is.
type reduction struct {
	rows          int     // reduced sequence length S'
	first, second []int64 // sources of every reduced row (equal for kept rows)

	firstIdx, secondIdx *compute.Tensor // [S']
	// Full rows whose reduced parent pools a true pair get
	// original + (reduced_out − pooled_in); every other row takes its
	// parent's reduced value.
	pairRows, pairParent     *compute.Tensor
	singleRows, singleParent *compute.Tensor
	rope                     Rotary
}

func (r *reduction) tensors() []*compute.Tensor {
	return []*compute.Tensor{r.firstIdx, r.secondIdx, r.pairRows, r.pairParent, r.singleRows, r.singleParent, r.rope.Cos, r.rope.Sin}
}

// reduction builds (once) the token-reduction maps of s.
func (s *Sequence) reduction(m *Model) (*reduction, error) {
	if s.reduced != nil {
		return s.reduced, nil
	}
	g := s.Layout.TargetGrid
	S := s.rows
	T, hh, ww := g[0], g[1], g[2]
	start := S - T*hh*ww
	rw := (ww + 1) / 2
	Sr := start + T*hh*rw
	r := &reduction{rows: Sr, first: make([]int64, Sr), second: make([]int64, Sr)}
	for i := 0; i < Sr; i++ {
		if i < start {
			r.first[i], r.second[i] = int64(i), int64(i)
			continue
		}
		local := i - start
		src := start + (local/rw)*ww + (local%rw)*2
		r.first[i], r.second[i] = int64(src), int64(src)
		if (src-start)%ww+1 < ww {
			r.second[i] = int64(src + 1)
		}
	}
	var pairRows, pairParent, singleRows, singleParent []int64
	for i := 0; i < S; i++ {
		p := i
		if i >= start {
			local := i - start
			p = start + (local/ww)*rw + (local%ww)/2
		}
		if r.first[p] != r.second[p] {
			pairRows, pairParent = append(pairRows, int64(i)), append(pairParent, int64(p))
		} else {
			singleRows, singleParent = append(singleRows, int64(i)), append(singleParent, int64(p))
		}
	}
	up := func(v []int64) *compute.Tensor {
		t, err := compute.FromInt64(m.b, compute.I64, compute.Shape{len(v)}, v)
		compute.Try(err)
		return t
	}
	r.firstIdx, r.secondIdx = up(r.first), up(r.second)
	r.pairRows, r.pairParent, r.singleRows, r.singleParent = up(pairRows), up(pairParent), up(singleRows), up(singleParent)
	// Reduced rows take the averaged (t, h, w) coordinates of their sources.
	pos := make([]float64, 3*Sr)
	for i := 0; i < Sr; i++ {
		a, b := r.first[i], r.second[i]
		for k := 0; k < 3; k++ {
			pos[3*i+k] = (s.Layout.Positions[3*a+int64(k)] + s.Layout.Positions[3*b+int64(k)]) * 0.5
		}
	}
	cos, sin, err := RotaryTables(pos, m.invFreq)
	if err != nil {
		return nil, err
	}
	half := 3 * m.cfg.RopeFreqDim
	r.rope.Dim = 2 * half
	r.rope.Cos, err = compute.FromFloat32(m.b, m.dt, compute.Shape{Sr, half}, cos)
	compute.Try(err)
	r.rope.Sin, err = compute.FromFloat32(m.b, m.dt, compute.Shape{Sr, half}, sin)
	compute.Try(err)
	s.reduced = r
	return r, nil
}

// modRows maps the full-sequence modulation rows to the reduced rows: a
// pooled row takes its first source's row.
func (r *reduction) modRows(full []int64) []int64 {
	out := make([]int64, r.rows)
	for i, f := range r.first {
		out[i] = full[f]
	}
	return out
}

// pool returns the reduced hidden state (each pair averaged in float32 and
// rounded once to the activation dtype) and a copy of it, the baseline the
// restore subtracts. h, the full state, is left untouched as the bypass.
func (r *reduction) pool(k compute.Backend, a *nn.Arena, h *compute.Tensor) (cur, baseline *compute.Tensor) {
	H, dt := h.Dim(1), h.DType()
	x1, x2 := a.New(dt, r.rows, H), a.New(dt, r.rows, H)
	k.GatherRows(x1, h, r.firstIdx)
	k.GatherRows(x2, h, r.secondIdx)
	sum := a.New(compute.F32, r.rows, H)
	k.Add(sum, x1, x2)
	cur = a.New(dt, r.rows, H)
	k.Scale(cur, sum, 0.5, 0)
	baseline = a.New(dt, r.rows, H)
	k.Copy(baseline, cur)
	return cur, baseline
}

// expand restores the full state into h: pair rows become
// original + (reduced − baseline), every other row its reduced value.
func (r *reduction) expand(k compute.Backend, a *nn.Arena, h, reduced, baseline *compute.Tensor) {
	H, dt := h.Dim(1), h.DType()
	delta := a.New(compute.F32, r.rows, H)
	neg := a.New(compute.F32, r.rows, H)
	k.Scale(neg, baseline, -1, 0)
	k.Add(delta, reduced, neg)
	if np := r.pairRows.Dim(0); np > 0 {
		d := a.New(compute.F32, np, H)
		k.GatherRows(d, delta, r.pairParent)
		o := a.New(dt, np, H)
		k.GatherRows(o, h, r.pairRows)
		k.Add(o, o, d)
		k.ScatterRows(h, o, r.pairRows)
	}
	if ns := r.singleRows.Dim(0); ns > 0 {
		v := a.New(dt, ns, H)
		k.GatherRows(v, reduced, r.singleParent)
		k.ScatterRows(h, v, r.singleRows)
	}
}
