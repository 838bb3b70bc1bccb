package dit

import (
	"fmt"

	"h3studio/engine/compute"
	"h3studio/engine/nn"
)

// This file holds the transformer's adapters (LoRAs): low-rank and full
// updates of its linear modules, named by Site whatever the checkpoint
// layout, applied at run time as y += s·((x·Aᵀ)·Bᵀ + b) after the base
// projection (nn.LowRank), or merged into the weights in float32 by the
// oracle lora-merge-f32. Package lora reads the files and produces them.

// OracleLoRAMerge merges every adapter into its weights in float32 when the
// weights are bound (W' = round(W + Σ s·B·A)) instead of applying it at run
// time: the reference the run-time branch is checked against (a BF16 merge
// keeps only part of a small update; under dit-f32 the merge is exact).
var OracleLoRAMerge = compute.RegisterOracle("lora-merge-f32",
	"DiT: LoRA updates merged into the weights in float32 at bind time instead of the run-time low-rank branch")

// Stack is a part of the transformer that holds adaptable modules.
type Stack uint8

// Stacks.
const (
	StackBlocks  Stack = iota + 1 // blocks.N / transformer_blocks.N
	StackRefiner                  // token_refiner.blocks.N / token_refiner.refiner_blocks.N
	StackFinal                    // final_layer / norm_out (Block 0)
)

// Proj is an adaptable linear module of a stack.
type Proj uint8

// Projections.
const (
	// ProjQKV is the attention's q, k and v projections, as three parts of
	// Inner rows each (q, k, v; planar, not the release's per-head
	// interleaving).
	ProjQKV Proj = iota + 1
	ProjOut      // attn.out_proj / attn.to_out.0
	// ProjFC1 is the SwiGLU input projection, rows in the release order
	// [gate; value] (diffusers' ff.net.0.proj stores [value; gate]).
	ProjFC1
	ProjFC2   // mlp.fc2 / ff.net.2
	ProjAdaLN // adaln_proj.linear of a block, or the final layer's
)

// Site names one adaptable module independently of the checkpoint layout.
type Site struct {
	Stack Stack
	Block int
	Proj  Proj
}

// String is the module's release name ("blocks.3.attn.qkv_proj").
func (s Site) String() string {
	var p string
	switch s.Stack {
	case StackBlocks:
		p = fmt.Sprintf("blocks.%d.", s.Block)
	case StackRefiner:
		p = fmt.Sprintf("token_refiner.blocks.%d.", s.Block)
	case StackFinal:
		p = "final_layer."
	default:
		return "unknown module"
	}
	switch s.Proj {
	case ProjQKV:
		return p + "attn.qkv_proj"
	case ProjOut:
		return p + "attn.out_proj"
	case ProjFC1:
		return p + "mlp.fc1"
	case ProjFC2:
		return p + "mlp.fc2"
	case ProjAdaLN:
		return p + "adaln_proj.linear"
	}
	return p + "unknown"
}

// SiteShape returns the output rows of each part of site's module (three
// parts for ProjQKV, one otherwise) and its input width, or an error when
// the transformer has no such module.
func (c Config) SiteShape(s Site) (parts []int, in int, err error) {
	ok := s.Block >= 0
	switch s.Stack {
	case StackBlocks:
		ok = ok && s.Block < c.NumLayers
	case StackRefiner:
		ok = ok && s.Block < c.RefinerLayers && s.Proj != ProjAdaLN
	case StackFinal:
		ok = ok && s.Block == 0 && s.Proj == ProjAdaLN
	default:
		ok = false
	}
	if !ok {
		return nil, 0, fmt.Errorf("dit: the transformer (%d blocks, %d refiner blocks) has no module %s", c.NumLayers, c.RefinerLayers, s)
	}
	H := c.HiddenSize
	switch s.Proj {
	case ProjQKV:
		return []int{c.Inner(), c.Inner(), c.Inner()}, H, nil
	case ProjOut:
		return []int{H}, c.Inner(), nil
	case ProjFC1:
		return []int{2 * c.FFNDim}, H, nil
	case ProjFC2:
		return []int{H}, c.FFNDim, nil
	case ProjAdaLN:
		if s.Stack == StackFinal {
			return []int{2 * H}, c.TimeEmbedDim, nil
		}
		return []int{c.AdaLNWidth()}, c.TimeEmbedDim, nil
	}
	return nil, 0, fmt.Errorf("dit: unknown projection in %v", s)
}

// Matrix is a host matrix in a float dtype (little-endian, row-major);
// the zero value is empty. A Matrix with rows and columns but no Data is
// shape-only: planning binds it uninitialised (the meta backend counts its
// storage and FLOPs); the merge oracle cannot use it.
type Matrix struct {
	DType      compute.DType
	Rows, Cols int
	Data       []byte
}

// Empty reports whether m holds nothing.
func (m Matrix) Empty() bool { return m.Rows == 0 && m.Cols == 0 }

// Float32s decodes the matrix.
func (m Matrix) Float32s() []float32 { return compute.DecodeFloat32(m.DType, m.Data) }

// Update is one adapter's update of one module: per part c,
// ΔW_c = Scale·B[c]·A (B[c] [out_c, rank], A [rank, in]); with A empty,
// B[c] is the full delta [out_c, in]. Bias[c] [1, out_c] (a .diff_b) adds
// Scale·Bias[c]. An empty part leaves those rows alone.
type Update struct {
	A     Matrix
	B     []Matrix
	Bias  []Matrix
	Scale float32
	// Source names the update for messages (file and module key).
	Source string
}

// Adapters are the updates of a request, per module, applied in order.
type Adapters map[Site][]Update

// Check verifies that every update fits its module in c, naming the
// update's source when it does not.
func (ad Adapters) Check(c Config) error {
	for s, us := range ad {
		parts, in, err := c.SiteShape(s)
		if err != nil {
			return err
		}
		for _, u := range us {
			if err := u.check(parts, in); err != nil {
				return fmt.Errorf("dit: %s (for %s): %w", u.Source, s, err)
			}
		}
	}
	return nil
}

func (u Update) check(parts []int, in int) error {
	if len(u.B) != len(parts) || (u.Bias != nil && len(u.Bias) != len(parts)) {
		return fmt.Errorf("%d parts, the module has %d", len(u.B), len(parts))
	}
	rank := in // a full delta
	if !u.A.Empty() {
		if u.A.Cols != in {
			return fmt.Errorf("lora_A is [%d, %d], the module's input is %d wide", u.A.Rows, u.A.Cols, in)
		}
		rank = u.A.Rows
	}
	for c, out := range parts {
		if b := u.B[c]; !b.Empty() && (b.Rows != out || b.Cols != rank) {
			return fmt.Errorf("lora_B part %d is [%d, %d], want [%d, %d]", c, b.Rows, b.Cols, out, rank)
		}
		if u.Bias != nil {
			if b := u.Bias[c]; !b.Empty() && (b.Rows != 1 || b.Cols != out) {
				return fmt.Errorf("bias delta part %d has %d values, want %d", c, b.Rows*b.Cols, out)
			}
		}
	}
	return nil
}

// Bytes is the host storage of the updates.
func (ad Adapters) Bytes() int64 {
	var n int64
	for _, us := range ad {
		for _, u := range us {
			n += int64(len(u.A.Data))
			for _, b := range u.B {
				n += int64(len(b.Data))
			}
			for _, b := range u.Bias {
				n += int64(len(b.Data))
			}
		}
	}
	return n
}

// SetAdapters replaces the model's adapters (nil removes them). Bound
// blocks are released so that they bind again with the new updates. The
// updates' device copies stay bound (in resident and streaming mode alike:
// they are small) until the adapters change or the model closes.
// Under the lora-merge-f32 oracle, updates cannot be merged into quantized
// weights (Options.Quant): they are refused.
func (m *Model) SetAdapters(ad Adapters) error {
	if err := ad.Check(m.cfg); err != nil {
		return err
	}
	if len(ad) > 0 && m.merging() && m.opts.Quant.Bits != 0 {
		return fmt.Errorf("dit: the lora-merge-f32 oracle merges LoRA updates into float weights; the weights are quantized (%s)", m.opts.Quant)
	}
	m.releaseAdapters()
	for i := range m.blocks {
		m.releaseBlock(i)
	}
	for i := range m.refiner {
		m.releaseRefinerBlock(i)
	}
	m.ad = ad
	return nil
}

// Adapters returns the model's adapters.
func (m *Model) Adapters() Adapters { return m.ad }

func (m *Model) releaseAdapters() {
	for _, us := range m.bound {
		for _, u := range us {
			for _, p := range u {
				m.free(p.B, p.Bias)
			}
			if len(u) > 0 {
				m.free(u[0].A)
			}
		}
	}
	m.bound = nil
}

func (m *Model) merging() bool { return m.opts.Oracles.Has(OracleLoRAMerge) }

// upload copies x to the weight backend in the model's weight dtype, with
// the rows permuted by perm (nil: in order).
func (m *Model) upload(x Matrix, perm func(int) int) *compute.Tensor {
	if x.Empty() {
		return nil
	}
	shape := compute.Shape{x.Rows, x.Cols}
	if x.Cols == 1 {
		shape = compute.Shape{x.Rows} // a bias
	}
	if x.Data == nil {
		return compute.MustAlloc(m.wb, m.wdt(), shape...)
	}
	v := x.Float32s()
	if perm != nil {
		p := make([]float32, len(v))
		for r := 0; r < x.Rows; r++ {
			copy(p[perm(r)*x.Cols:(perm(r)+1)*x.Cols], v[r*x.Cols:(r+1)*x.Cols])
		}
		v = p
	}
	t, err := compute.FromFloat32(m.wb, m.wdt(), shape, v)
	compute.Try(err)
	return t
}

// layoutRows maps a row of part c of site's canonical order to the row of
// the model's layout (fc1 halves swapped for the diffusers layout), or nil
// when the orders agree.
func (m *Model) layoutRows(s Site, rows int) func(int) int {
	if s.Proj != ProjFC1 || m.n.gateFirst() {
		return nil
	}
	F := rows / 2
	return func(r int) int { return (r + F) % (2 * F) }
}

// deviceUpdates returns site's updates bound on the weight backend: per
// update, one nn.LowRank per part (sharing A; a part with neither B nor
// Bias has a nil B and Bias).
func (m *Model) deviceUpdates(s Site) [][]nn.LowRank {
	us := m.ad[s]
	if len(us) == 0 {
		return nil
	}
	if got, ok := m.bound[s]; ok {
		return got
	}
	out := make([][]nn.LowRank, len(us))
	for i, u := range us {
		a := m.upload(u.A, nil)
		for c, b := range u.B {
			p := nn.LowRank{A: a, Scale: u.Scale}
			if !b.Empty() {
				p.B = m.upload(b, m.layoutRows(s, b.Rows))
			}
			if u.Bias != nil && !u.Bias[c].Empty() {
				bb := u.Bias[c]
				col := Matrix{DType: bb.DType, Rows: bb.Cols, Cols: 1, Data: bb.Data} // the same values as a column
				p.Bias = m.upload(col, m.layoutRows(s, bb.Cols))
			}
			out[i] = append(out[i], p)
		}
	}
	if m.bound == nil {
		m.bound = map[Site][][]nn.LowRank{}
	}
	m.bound[s] = out
	return out
}

// linearUpdates is deviceUpdates for a one-part module, as nn.Linear's LoRA.
func (m *Model) linearUpdates(s Site) []nn.LowRank {
	var l []nn.LowRank
	for _, u := range m.deviceUpdates(s) {
		if u[0].B != nil || u[0].Bias != nil {
			l = append(l, u[0])
		}
	}
	return l
}

// AdapterBytes is the device storage of the adapters bound now.
func (m *Model) AdapterBytes() int64 {
	var n int64
	for _, us := range m.bound {
		for _, u := range us {
			for i, p := range u {
				for _, t := range []*compute.Tensor{p.B, p.Bias} {
					if t != nil {
						n += t.Bytes()
					}
				}
				if i == 0 && p.A != nil {
					n += p.A.Bytes()
				}
			}
		}
	}
	return n
}

// delta returns Σ s·ΔW of site's part c as float64 [out, in] in the
// canonical row order, and the bias delta [out] (nil when none).
func (m *Model) delta(s Site, c, out, in int) (dw, db []float64) {
	for _, u := range m.ad[s] {
		if b := u.B[c]; !b.Empty() {
			if dw == nil {
				dw = make([]float64, out*in)
			}
			bv := b.Float32s()
			if u.A.Empty() {
				for i, v := range bv {
					dw[i] += float64(u.Scale) * float64(v)
				}
			} else {
				av, r := u.A.Float32s(), u.A.Rows
				for o := 0; o < out; o++ {
					row := dw[o*in : (o+1)*in]
					for k := 0; k < r; k++ {
						f := float64(u.Scale) * float64(bv[o*r+k])
						if f == 0 {
							continue
						}
						for j, a := range av[k*in : (k+1)*in] {
							row[j] += f * float64(a)
						}
					}
				}
			}
		}
		if u.Bias != nil && !u.Bias[c].Empty() {
			if db == nil {
				db = make([]float64, out)
			}
			for i, v := range u.Bias[c].Float32s() {
				db[i] += float64(u.Scale) * float64(v)
			}
		}
	}
	return dw, db
}

// mergeRows returns a copy of w [R, in] (in w's dtype, on the weight
// backend) with d [out, in] added at rows row(0..out) in float32 and frees
// free (w's own storage; w may be a view of it). A nil d returns w.
func (m *Model) mergeRows(w, free *compute.Tensor, d []float64, row func(int) int) *compute.Tensor {
	if d == nil || w == nil {
		return w
	}
	v, err := compute.ToFloat32(w)
	compute.Try(err)
	in := w.Dim(-1)
	for o := 0; o < len(d)/in; o++ {
		r := o
		if row != nil {
			r = row(o)
		}
		for j := 0; j < in; j++ {
			v[r*in+j] = float32(float64(v[r*in+j]) + d[o*in+j])
		}
	}
	t, err := compute.FromFloat32(m.wb, w.DType(), w.Shape(), v)
	compute.Try(err)
	m.free(free)
	return t
}

// mergeLinear merges site's one-part updates into weight w and bias b (the
// oracle path). A bias delta on a module without a bias stays a run-time
// update (the returned LoRA).
func (m *Model) mergeLinear(s Site, w, b *compute.Tensor) (*compute.Tensor, *compute.Tensor, []nn.LowRank) {
	out, in := w.Dim(0), w.Dim(1)
	dw, db := m.delta(s, 0, out, in)
	perm := m.layoutRows(s, out)
	w = m.mergeRows(w, w, dw, perm)
	if db == nil {
		return w, b, nil
	}
	if b == nil {
		var keep []nn.LowRank
		for _, u := range m.deviceUpdates(s) {
			if u[0].Bias != nil {
				keep = append(keep, nn.LowRank{Bias: u[0].Bias, Scale: u[0].Scale})
			}
		}
		return w, b, keep
	}
	// A bias [out] is one row of out columns.
	return w, m.mergeRows(b, b, db, nil), nil
}

// adaptLinear gives site's updates to a one-part module: merged into w
// (and b) under OracleLoRAMerge, else as run-time updates.
func (m *Model) adaptLinear(s Site, w, b **compute.Tensor) []nn.LowRank {
	if len(m.ad[s]) == 0 {
		return nil
	}
	if m.merging() {
		var l []nn.LowRank
		*w, *b, l = m.mergeLinear(s, *w, *b)
		return l
	}
	return m.linearUpdates(s)
}

// adaptAttention gives the attention of stack/block its q, k, v and output
// updates.
func (m *Model) adaptAttention(at *Attention, stack Stack, block int) {
	qkv := Site{stack, block, ProjQKV}
	if len(m.ad[qkv]) > 0 {
		if m.merging() {
			m.mergeQKV(at, qkv)
		} else {
			at.qkvLoRA = m.deviceUpdates(qkv)
		}
	}
	var nobias *compute.Tensor
	at.outLoRA = m.adaptLinear(Site{stack, block, ProjOut}, &at.Out, &nobias)
}

func (m *Model) mergeQKV(at *Attention, s Site) {
	I, D, in := m.cfg.Inner(), m.cfg.HeadDim, m.cfg.HiddenSize
	for c := 0; c < 3; c++ {
		dw, db := m.delta(s, c, I, in)
		if db != nil {
			panic(fmt.Errorf("dit: %s: a bias delta on the bias-free q/k/v projections is not supported by lora-merge-f32", s))
		}
		if at.QKV != nil {
			c := c
			at.QKV = m.mergeRows(at.QKV, at.QKV, dw, func(r int) int { return (r/D)*3*D + c*D + r%D })
		} else {
			w := []**compute.Tensor{&at.Q, &at.K, &at.V}[c]
			*w = m.mergeRows(*w, *w, dw, nil)
		}
	}
}

func (m *Model) adaptFeedForward(f *FeedForward, stack Stack, block int) {
	var nobias *compute.Tensor
	f.Up.LoRA = m.adaptLinear(Site{stack, block, ProjFC1}, &f.Up.W, &nobias)
	f.Down.LoRA = m.adaptLinear(Site{stack, block, ProjFC2}, &f.Down.W, &nobias)
}

// qkvDowns computes every q/k/v update's rank-side product of x once per
// attention forward.
func qkvDowns(k compute.Kernels, a *nn.Arena, x *compute.Tensor, us [][]nn.LowRank) []*compute.Tensor {
	ts := make([]*compute.Tensor, len(us))
	for i, u := range us {
		ts[i] = u[0].Down(k, a, x)
	}
	return ts
}

func releaseDowns(a *nn.Arena, x *compute.Tensor, ts []*compute.Tensor) {
	for _, t := range ts {
		if t != x {
			a.Free(t)
		}
	}
}

// addQKVPart adds the updates of part c, rows [r0, r1), into dst [S, r1−r0].
func addQKVPart(k compute.Kernels, a *nn.Arena, dst *compute.Tensor, ts []*compute.Tensor, us [][]nn.LowRank, c, r0, r1 int) {
	for i, u := range us {
		if p := u[c]; p.B != nil || p.Bias != nil {
			p.Up(k, a, dst, ts[i], r0, r1)
		}
	}
}

// addQKVInterleaved adds the q, k and v updates of heads [h0, h0+n) into the
// interleaved projection dst [S, n, 3, D]: each part's rows are computed
// planar ([3, S, n·D]) and transposed into place, so a planar update costs
// no more than on the diffusers layout.
func addQKVInterleaved(k compute.Kernels, a *nn.Arena, dst *compute.Tensor, ts []*compute.Tensor, us [][]nn.LowRank, h0, n, D int) {
	S := dst.Dim(0)
	u3 := a.New(dst.DType(), 3, S, n*D)
	tr := a.New(dst.DType(), S, n, 3, D)
	for i, u := range us {
		k.Fill(u3, 0)
		for c := 0; c < 3; c++ {
			if p := u[c]; p.B != nil || p.Bias != nil {
				p.Up(k, a, u3.Row(c), ts[i], h0*D, (h0+n)*D)
			}
		}
		k.Transpose(tr, u3.Reshape(3, S, n, D), 1, 2, 0, 3)
		k.Add(dst, dst, tr)
	}
	a.Free(u3, tr)
}
