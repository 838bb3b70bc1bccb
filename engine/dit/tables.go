package dit

import (
	"context"
	"fmt"
	"math"
	"sort"

	"h3studio/engine/compute"
	"h3studio/engine/nn"
)

// Tables are the per-request AdaLN modulation tables: everything the model
// derives from the timesteps alone (H3-DIT §8), computed once before the
// denoising loop for every distinct timestep of the request, after which
// the 13 B parameters of the AdaLN projections are no longer needed.
type Tables struct {
	// Timesteps are the distinct timesteps, in the order given to Tables;
	// a row's timestep index points into it.
	Timesteps []float32
	// Blocks[i] is block i's table [rows, 6·hidden], columns
	// [shift_msa|scale_msa|gate_msa|shift_mlp|scale_mlp|gate_mlp]; the row of
	// timestep index ti and tag is RowOf[ti·3 + tag]. Nil for a block pruned
	// by Prune.
	Blocks []*compute.Tensor
	// RowOf maps ti·3 + tag to a table row, −1 for a pair that was not kept.
	// Without a keep list it is the identity (the reference's row = t·3 + tag).
	RowOf []int
	// Scores are the blocks' gate scores (see GateScores), computed over
	// every timestep and modality before unkept rows were dropped, when
	// TableOptions.Scores asked for them (NaN otherwise).
	Scores []float64
	// Final is the final layer's [len(Timesteps), 2·hidden] = [shift|scale].
	Final *compute.Tensor

	b compute.Backend
}

// Index returns the position of timestep t in Timesteps.
func (t *Tables) Index(v float32) (int, bool) {
	for i, u := range t.Timesteps {
		if u == v {
			return i, true
		}
	}
	return 0, false
}

// Bytes is the storage of the tables.
func (t *Tables) Bytes() int64 {
	var n int64
	for _, x := range append(append([]*compute.Tensor(nil), t.Blocks...), t.Final) {
		if x != nil {
			n += x.Bytes()
		}
	}
	return n
}

// Prune frees the tables of inactive blocks.
func (t *Tables) Prune(active []bool) {
	for i, on := range active {
		if !on && t.Blocks[i] != nil {
			t.b.Free(t.Blocks[i])
			t.Blocks[i] = nil
		}
	}
}

// Release frees every table.
func (t *Tables) Release() {
	for i, x := range t.Blocks {
		if x != nil {
			t.b.Free(x)
			t.Blocks[i] = nil
		}
	}
	if t.Final != nil {
		t.b.Free(t.Final)
		t.Final = nil
	}
}

// gateScore is the mean absolute value of a table's two residual gates
// (gate_msa and gate_mlp) over every row: h3.c's ranking for layer thinning
// (H3-DIT §13.2).
func gateScore(x *compute.Tensor) (float64, error) {
	v, err := compute.ToFloat32(x)
	if err != nil {
		return 0, fmt.Errorf("dit: gate scores: %w", err)
	}
	W := x.Dim(1)
	H := W / numSlots
	var sum float64
	var n int
	for r := 0; r < x.Dim(0); r++ {
		for _, slot := range []int{SlotGateMSA, SlotGateMLP} {
			for _, g := range v[r*W+slot*H : r*W+(slot+1)*H] {
				sum += math.Abs(float64(g))
			}
			n += H
		}
	}
	return sum / float64(n), nil
}

// TableOptions select what Tables keeps.
type TableOptions struct {
	// Keep, when non-nil, has one flag per (timestep index ti, tag) at
	// ti·3 + tag and keeps only the flagged rows of the block tables (a
	// request reads about half of them: an audio timestep only by audio
	// rows); nil keeps all. See MarkUsed.
	Keep []bool
	// Scores computes every block's gate score (for SelectBlocks) from its
	// whole table.
	Scores bool
}

// Tables evaluates the time MLP and every AdaLN projection for the distinct
// timesteps ts (t = 1 − σ ∈ [0, 1], unscaled), as MiniMaxH3TransformerBlock
// and MiniMaxH3AdaLayerNormOut do at the top of every forward:
// temb = time_embedder(time_proj(t)) in float32, then each projection of
// BF16(SiLU_f32(temb)) (H3-DIT §8.3–8.5). The caller releases the tables.
func (m *Model) Tables(ctx context.Context, ts []float32, o TableOptions) (tab *Tables, err error) {
	keep := o.Keep
	defer compute.Recover(&err)
	if len(ts) == 0 {
		return nil, fmt.Errorf("dit: Tables needs at least one timestep")
	}
	seen := map[float32]bool{}
	for _, t := range ts {
		if math.IsNaN(float64(t)) || t < 0 || t > 1 {
			return nil, fmt.Errorf("dit: timestep %v outside [0, 1]", t)
		}
		if seen[t] {
			return nil, fmt.Errorf("dit: timestep %v given twice; the table rows must be distinct", t)
		}
		seen[t] = true
	}
	c := m.cfg
	T := len(ts)
	if keep != nil && len(keep) != T*Modalities {
		return nil, fmt.Errorf("dit: %d keep flags for %d timesteps × %d tags", len(keep), T, Modalities)
	}
	rowOf := make([]int, T*Modalities)
	var kept []int64
	for i := range rowOf {
		rowOf[i] = -1
		if keep == nil || keep[i] {
			rowOf[i] = len(kept)
			kept = append(kept, int64(i))
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("dit: Tables keeps no row")
	}
	if err := m.bindTimeMLP(); err != nil {
		return nil, err
	}
	a := nn.NewArena(m.b)
	defer a.Release()
	feat, err := compute.FromFloat32(m.b, compute.F32, compute.Shape{T, c.FreqDim}, TimestepFeatures(ts, c.FreqDim))
	compute.Try(err)
	defer m.b.Free(feat)
	m.trace("time_proj", feat)
	hid := a.New(compute.F32, T, c.TimeHiddenDim)
	m.timeIn.Forward(m.b, hid, feat)
	m.b.Unary(hid, hid, compute.SiLU)
	temb := a.New(compute.F32, T, c.TimeEmbedDim)
	m.timeOut.Forward(m.b, temb, hid)
	m.trace("temb", temb)
	if !m.opts.KeepPrep {
		m.releaseTimeMLP()
	}
	// SiLU in float32, then one rounding to the projections' dtype.
	act := a.New(m.dt, T, c.TimeEmbedDim)
	m.b.Unary(act, temb, compute.SiLU)

	tab = &Tables{Timesteps: append([]float32(nil), ts...), Blocks: make([]*compute.Tensor, c.NumLayers),
		RowOf: rowOf, Scores: make([]float64, c.NumLayers), b: m.b}
	for i := range tab.Scores {
		tab.Scores[i] = math.NaN()
	}
	var keptT *compute.Tensor
	if len(kept) < T*Modalities {
		keptT = a.New(compute.I64, len(kept))
		compute.Try(m.b.Upload(keptT, compute.EncodeInt64(compute.I64, kept)))
	}
	defer func() {
		if err != nil {
			tab.Release()
			tab = nil
		}
	}()
	for i := 0; i < c.NumLayers; i++ {
		if err := cancelled(ctx, fmt.Sprintf("computing the modulation table of block %d", i)); err != nil {
			return nil, err
		}
		w := m.w.Sub(m.n.block(i))
		proj := m.bindLinearOn(w.TensorAs(m.n.blockAdaLN()+".weight", m.wdt(), c.AdaLNWidth(), c.TimeEmbedDim),
			w.TensorAs(m.n.blockAdaLN()+".bias", m.wdt(), c.AdaLNWidth()))
		if err := m.bindErr(fmt.Sprintf("the AdaLN projection of block %d", i)); err != nil {
			return nil, err
		}
		// An AdaLN LoRA depends on the timestep alone: it lands in the table.
		proj.LoRA = m.adaptLinear(Site{StackBlocks, i, ProjAdaLN}, &proj.W, &proj.B)
		full := compute.MustAlloc(m.b, m.dt, T*Modalities, numSlots*c.HiddenSize)
		proj.Forward(m.b, full.Reshape(T, c.AdaLNWidth()), act)
		m.trace(fmt.Sprintf("block%d.adaln_table", i), full)
		if !m.opts.KeepPrep {
			m.free(proj.W, proj.B)
		}
		if o.Scores {
			if tab.Scores[i], err = gateScore(full); err != nil {
				m.b.Free(full)
				return nil, err
			}
		}
		if keptT != nil {
			out := compute.MustAlloc(m.b, m.dt, len(kept), numSlots*c.HiddenSize)
			m.b.GatherRows(out, full, keptT)
			m.b.Free(full)
			full = out
		}
		tab.Blocks[i] = full
	}
	fw := m.w.TensorAs(m.n.finalAdaLN()+".weight", m.wdt(), 2*c.HiddenSize, c.TimeEmbedDim)
	fb := m.w.TensorAs(m.n.finalAdaLN()+".bias", m.wdt(), 2*c.HiddenSize)
	if err := m.bindErr("the final AdaLN projection"); err != nil {
		return nil, err
	}
	fl := m.adaptLinear(Site{StackFinal, 0, ProjAdaLN}, &fw, &fb)
	tab.Final = compute.MustAlloc(m.b, m.dt, T, 2*c.HiddenSize)
	nn.Linear{W: fw, B: fb, LoRA: fl}.Forward(m.b, tab.Final, act)
	if !m.opts.KeepPrep {
		m.free(fw, fb)
	}
	m.tableSets.Add(1)
	return tab, nil
}

func (m *Model) bindLinearOn(w, b *compute.Tensor) nn.Linear { return nn.Linear{W: w, B: b} }

// GateScores returns every block's gate score: the mean absolute value of
// its gate_msa and gate_mlp over every timestep and modality (h3.c's
// h3_dit_schedule_gate_score).
func (t *Tables) GateScores() []float64 { return append([]float64(nil), t.Scores...) }

// SelectBlocks chooses which blocks run when only `layers` of the released
// 50 are kept (h3.c --layers, H3-DIT §13.2): the first blocks and the last
// block are protected, and the lowest-scoring candidates (GateScores) are
// skipped. For a stack of N ≠ 50 blocks the numbers scale with N: it keeps
// round(layers·N/50) blocks and protects the first round(2N/50) (at least 1)
// and the last round(N/50) (at least 1), so the released stack protects
// blocks 0, 1 and 49 exactly as h3.c does. Ties skip the lower block first.
func SelectBlocks(scores []float64, layers int) ([]bool, error) {
	N := len(scores)
	if layers < 35 || layers > 50 {
		return nil, fmt.Errorf("dit: layers %d outside 35..50 (the released stack's active-block count)", layers)
	}
	active := make([]bool, N)
	for i := range active {
		active[i] = true
	}
	keep := int(math.Round(float64(layers) * float64(N) / 50))
	first := max(1, int(math.Round(2*float64(N)/50)))
	last := max(1, int(math.Round(float64(N)/50)))
	var cand []int
	for i := first; i < N-last; i++ {
		cand = append(cand, i)
	}
	skip := min(max(N-keep, 0), len(cand))
	for _, i := range cand {
		if math.IsNaN(scores[i]) {
			return nil, fmt.Errorf("dit: block %d has no gate score", i)
		}
	}
	sort.SliceStable(cand, func(x, y int) bool { return scores[cand[x]] < scores[cand[y]] })
	for _, i := range cand[:skip] {
		active[i] = false
	}
	return active, nil
}

// MarkUsed sets keep[ti·3 + tag] for every row of one forward, given the
// rows' tags and timestep indices: accumulated over a request's steps it is
// the keep list of Tables.
func MarkUsed(keep []bool, tags, timestepIndex []int64) {
	for r, ti := range timestepIndex {
		keep[ti*Modalities+tags[r]] = true
	}
}
