// Package dit implements the MiniMax-H3 diffusion transformer (checkpoint
// folder transformer/, class MiniMaxH3DiTModel in the original release and
// MiniMaxH3Transformer3DModel in diffusers), to the specification
// shared/spec/H3-DIT.md as corrected by shared/spec/ERRATA.md. It mirrors
// diffusers src/diffusers/models/transformers/transformer_minimax_h3.py:
// one struct and one Forward per layer (layers.go), over the narrow
// compute.Kernels interface.
//
// # Checkpoints
//
// Both layouts load through the same code (names.go): the original FL2VA/ and
// Ref2VA/ transformer (per-head interleaved attn.qkv_proj, mlp.fc1 =
// [gate; value]) and the diffusers transformer/ and transformer_ref/
// (attn.to_q/to_k/to_v, ff.net.0.proj = [value; gate], renamed keys). The
// config is read in either spelling (config.go) and any size loads: the tiny
// oracle model and the released 50-block, 5376-wide model run the same code.
// Open checks the whole inventory strictly (safetensors.Binder.Finish); the
// weights themselves are bound per phase, so the 13 B parameters of the AdaLN
// projections are only touched while the per-request modulation tables are
// computed.
//
// # Precision
//
// The default is the released mixed precision: BF16 blocks and residual
// stream, F32 patch projections, time MLP and heads, BF16 rounding where
// torch's operator chain rounds (H3-DIT §15 with ERRATA F3: RMSNorm rounds
// once). The float32 oracle (compute oracle "dit-f32") upcasts every weight
// and runs every activation in float32, as the oracle's f32 fixtures do.
//
// # Phases
//
// A request runs RefineText once (context embedder, token refiner), Tables
// once (time MLP and every AdaLN projection for the request's distinct
// timesteps), then Forward once per denoising step over a Sequence (the
// packed layout, constant over the loop). Cancellation is checked between
// blocks.
package dit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"h3studio/engine/compute"
	"h3studio/engine/nn"
	"h3studio/engine/safetensors"
)

// OracleF32 selects the pure-float32 DiT: every weight upcast at bind time,
// every activation float32. It is the reference the f32.* fixtures check.
var OracleF32 = compute.RegisterOracle("dit-f32",
	"DiT in float32 throughout (weights upcast at load) instead of the released BF16 mixed precision")

// Options configure a Model. The zero value is the released mixed precision
// with the active blocks resident after their first use.
type Options struct {
	// Oracles selects slower reference paths (OracleF32).
	Oracles compute.Oracles
	// Residency is how the block weights are held: compute.Resident keeps
	// them bound after their first use; compute.Streaming binds them for
	// each forward and releases them after the block, keeping at most two
	// blocks bound (the next block is bound before the current one runs).
	Residency compute.Residency
	// KeepPrep keeps the context embedder, token refiner, time MLP and AdaLN
	// projections bound after RefineText and Tables (by default they are
	// released once used: the tables make them unnecessary for the loop).
	KeepPrep bool
	// Trace, when set, receives intermediates under the oracle fixtures'
	// mid.* names ("context_embedder", "token_refiner", "time_proj", "temb",
	// "block0.adaln_table", "rope_cos", "block0.out", "norm_out",
	// "proj_out_all_rows"). The tensor is only valid during the call.
	Trace func(name string, t *compute.Tensor)
	// Quant, when its Bits are set, binds the linear weights of the blocks
	// and token-refiner blocks (attention and feed-forward projections)
	// quantized (compute.Quantized; quant.go); AdaLN projections, embedders
	// and the F32 heads stay unquantized. The zero value is BF16.
	Quant compute.QuantFormat
	// Profile, when set, receives what each completed Forward cost
	// (dispatches, device time, peak storage: ForwardProfile). A profiled
	// forward resets the backend's peak counter when it starts and waits
	// for its device work before it returns. ProfileSummary.Add fits here.
	Profile func(ForwardProfile)
	// Adapters are LoRA updates applied from the start (see SetAdapters).
	Adapters Adapters
}

// Counters count the work a model did, for tests and benchmarks.
type Counters struct {
	Forwards      int64 // Forward calls that completed
	CoreForwards  int64 // forwards that ran the block stack (not core reuse)
	Blocks        int64 // block forwards run
	ReducedBlocks int64 // of which on a token-reduced sequence
	RefinerRuns   int64 // RefineText calls that completed
	TableSets     int64 // Tables calls that completed
	// ReadAheadBytes is checkpoint data asked to be read from disk ahead of
	// use: in streaming mode, the next block's weights while a block runs.
	ReadAheadBytes int64
	// ReleasedBytes is checkpoint data whose pages were dropped from the
	// process after its weights were released (Binder.Release).
	ReleasedBytes int64
}

// Model is a MiniMax-H3 transformer bound to a checkpoint. A Model is not
// safe for concurrent use (its phases bind and release weights); Counters
// may be read from any goroutine.
type Model struct {
	cfg  Config
	n    names
	b    compute.Backend // compute
	wb   compute.Backend // weight storage (the binder's backend)
	w    *safetensors.Binder
	ck   *safetensors.Checkpoint // mapped by Open, unmapped by Close
	opts Options
	dt   compute.DType // activation dtype
	f32  bool
	fz   fusions // fused kernels in use (oracles turn them off)

	// prep phase (bound on demand)
	contextEmbedder nn.Linear
	refiner         []*RefinerBlock
	refinerNorm     *compute.Tensor
	timeIn, timeOut nn.Linear

	// per-forward weights
	blocks   []*Block
	videoIn  nn.Linear
	audioIn  nn.Linear
	final    *AdaLNOut
	videoOut nn.Linear
	audioOut nn.Linear
	edge     bool // videoIn … audioOut bound

	invFreq []float32

	ad    Adapters                // LoRA updates (SetAdapters)
	bound map[Site][][]nn.LowRank // their device copies, bound on first use

	forwards, coreForwards, blocksRun, reducedBlocks, refinerRuns, tableSets atomic.Int64
	readAhead, released                                                      atomic.Int64
}

// Open reads the config in configDir, maps the weights in weightsDir and
// opens them on b as Load does (a snapshot.Component's ConfigDir and Dir).
// Close unmaps the checkpoint.
func Open(b compute.Backend, configDir, weightsDir string, o *Options) (*Model, error) {
	cfg, err := ReadConfig(configDir)
	if err != nil {
		return nil, err
	}
	m, ck, err := safetensors.BindDir("dit", weightsDir, b, func(w *safetensors.Binder) (*Model, error) { return Load(b, w, &cfg, o) })
	if err != nil {
		return nil, err
	}
	m.ck = ck
	return m, nil
}

// Load checks that w's source holds exactly the tensors of a MiniMax-H3
// transformer with configuration cfg, in either layout, and returns a model
// computing on b (nil options are the defaults). Weights are bound
// (zero-copy where the backend allows) when a phase first needs them, onto
// w's backend. The model keeps its own copy of cfg.
func Load(b compute.Backend, w *safetensors.Binder, cfg *Config, o *Options) (m *Model, err error) {
	defer compute.Recover(&err)
	if cfg == nil {
		return nil, errors.New("dit: Load needs a config")
	}
	var opts Options
	if o != nil {
		opts = *o
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var n names
	switch {
	case w.Has("blocks.0.norm1.weight") || w.Has("condition_proj.weight"):
		n = names{OriginalLayout}
	case w.Has("transformer_blocks.0.norm1.weight") || w.Has("context_embedder.weight"):
		n = names{DiffusersLayout}
	default:
		return nil, errors.New("dit: the checkpoint has neither condition_proj.weight (original layout) nor context_embedder.weight (diffusers layout)")
	}
	if err := checkDepth(w, n, *cfg); err != nil {
		return nil, err
	}
	for _, s := range n.inventory(*cfg) {
		info, ok := w.Info(s.name)
		switch {
		case !ok:
			w.Fail("missing tensor %s (%s)", s.name, n.l)
		case info.DType == compute.U32 && QuantizedWeight(s.name):
			checkMLXWeight(w, s.name, info, s.shape, opts.Quant) // quant.go
		case !info.Shape.Equal(compute.Shape(s.shape)):
			w.Fail("%s: want shape %v, have %s%v", s.name, compute.Shape(s.shape), info.DType, info.Shape)
		case !info.DType.IsFloat():
			w.Fail("%s: dtype %s is not a float type", s.name, info.DType)
		}
		w.Skip(s.name)
	}
	if err := w.Finish(); err != nil {
		return nil, err
	}
	m = &Model{cfg: *cfg, n: n, b: b, wb: w.Backend(), w: w, opts: opts, dt: compute.BF16}
	if opts.Oracles.Has(OracleF32) {
		m.dt, m.f32 = compute.F32, true
	}
	m.fz = fusionsOf(opts.Oracles)
	m.invFreq = InvFreq(cfg.RopeTheta, cfg.RopeFreqDim)
	if n.orig() {
		got := w.Float32s(n.ropeInvFreq(), cfg.RopeFreqDim)
		if got != nil && !sameFreqs(got, m.invFreq) {
			return nil, fmt.Errorf("dit: %s %v disagrees with 1/rope_theta^(2i/%d) = %v: the config does not describe this checkpoint",
				n.ropeInvFreq(), got, 2*cfg.RopeFreqDim, m.invFreq)
		}
		if err := w.Err(); err != nil {
			return nil, err
		}
	}
	m.blocks = make([]*Block, cfg.NumLayers)
	if err := m.SetAdapters(opts.Adapters); err != nil {
		return nil, err
	}
	return m, nil
}

// checkDepth refuses a configuration whose depth (num_layers,
// token_refiner_num_layers) needs far more tensors than the whole source
// holds, before the inventory of that depth is built: a corrupt config.json
// with num_layers 100000000 would otherwise exhaust memory listing (and
// reporting as missing) a billion tensors. Smaller disagreements (a missing
// tensor, a block too many) are left to the strict accounting, which names
// every tensor.
func checkDepth(w *safetensors.Binder, n names, cfg Config) error {
	count := func(layers, refiners int) int64 {
		c := cfg
		c.NumLayers, c.RefinerLayers = layers, refiners
		return int64(len(n.inventory(c)))
	}
	base := count(0, 0)
	need := base + int64(cfg.NumLayers)*(count(1, 0)-base) + int64(cfg.RefinerLayers)*(count(0, 1)-base)
	if have := int64(len(w.Source().Names())); need > 2*have+1024 {
		return fmt.Errorf("dit: config num_layers %d and token_refiner_num_layers %d need %d tensors (%s), the checkpoint holds %d: the config does not describe this checkpoint",
			cfg.NumLayers, cfg.RefinerLayers, need, n.l, have)
	}
	return nil
}

// sameFreqs compares frequency buffers to 1 ulp (a data-less planning
// source yields zeros and is accepted).
func sameFreqs(a, b []float32) bool {
	zeros := 0
	for _, v := range a {
		if v == 0 {
			zeros++
		}
	}
	if zeros == len(a) {
		return true
	}
	for i := range a {
		if math.Abs(float64(a[i])-float64(b[i])) > 1.2e-7*math.Abs(float64(b[i])) {
			return false
		}
	}
	return true
}

// Config returns the architecture.
func (m *Model) Config() Config { return m.cfg }

// Layout returns the checkpoint layout the model was opened from.
func (m *Model) Layout() WeightLayout { return m.n.l }

// DType is the activation dtype: BF16 (released mixed precision) or F32
// (OracleF32).
func (m *Model) DType() compute.DType { return m.dt }

// Backend is the compute backend.
func (m *Model) Backend() compute.Backend { return m.b }

// Counters returns the work counters.
func (m *Model) Counters() Counters {
	return Counters{
		Forwards: m.forwards.Load(), CoreForwards: m.coreForwards.Load(), Blocks: m.blocksRun.Load(),
		ReducedBlocks: m.reducedBlocks.Load(), RefinerRuns: m.refinerRuns.Load(), TableSets: m.tableSets.Load(),
		ReadAheadBytes: m.readAhead.Load(), ReleasedBytes: m.released.Load(),
	}
}

// wdt is the dtype to bind a weight of a BF16 module with: its stored dtype
// converted to BF16 (what torch_dtype=bfloat16 loading does), or F32 for the
// oracle.
func (m *Model) wdt() compute.DType {
	if m.f32 {
		return compute.F32
	}
	return compute.BF16
}

func (m *Model) trace(name string, t *compute.Tensor) {
	if m.opts.Trace != nil {
		m.opts.Trace(name, t)
	}
}

// free releases bound weights: their storage, and the pages of the mapped
// checkpoint they were bound from (safetensors.Binder.Release), so that a
// weight the model no longer holds — an AdaLN projection once the tables
// exist, the token refiner once the text is refined, a streamed block after
// its forward — no longer occupies memory either. The CPU backend computes
// synchronously, so no recorded kernel still reads them; a backend whose
// device buffers view the mapping (Metal) keeps the pages (Release says why).
func (m *Model) free(ts ...*compute.Tensor) {
	m.released.Add(m.w.Free(ts...))
}

func (m *Model) bindErr(what string) error {
	if err := m.w.Err(); err != nil {
		return fmt.Errorf("dit: binding %s: %w", what, err)
	}
	return nil
}

func (m *Model) bindLinear(name string, dt compute.DType, out, in int) nn.Linear {
	return nn.LoadLinear(m.w, name, dt, out, in, true)
}

// bindPrepText binds the context embedder and the refiner's final norm;
// the refiner blocks are bound one at a time by RefineText.
func (m *Model) bindPrepText() error {
	if m.contextEmbedder.W != nil {
		return nil
	}
	c := m.cfg
	m.contextEmbedder = m.bindLinear(m.n.contextEmbedder(), m.wdt(), c.HiddenSize, c.TextDim)
	m.refinerNorm = m.w.TensorAs(m.n.refinerNorm()+".weight", m.wdt(), c.HiddenSize)
	if m.refiner == nil {
		m.refiner = make([]*RefinerBlock, c.RefinerLayers)
	}
	return m.bindErr("the context embedder")
}

func (m *Model) bindRefinerBlock(i int) (*RefinerBlock, error) {
	if m.refiner[i] == nil {
		r := bindRefinerBlock(m.w.Sub(m.n.refinerBlock(i)), m.n, m.cfg, m.wdt(), m.opts.Quant, m.fz)
		if err := m.adaptBound(fmt.Sprintf("token refiner block %d", i), r.Attn, r.FF, StackRefiner, i); err != nil {
			return nil, err
		}
		m.refiner[i] = r
	}
	return m.refiner[i], nil
}

func (m *Model) releaseRefinerBlock(i int) {
	if m.refiner[i] != nil {
		m.free(m.refiner[i].tensors()...)
		m.refiner[i] = nil
	}
}

func (m *Model) releasePrepText() {
	for i := range m.refiner {
		m.releaseRefinerBlock(i)
	}
	if m.contextEmbedder.W == nil {
		return
	}
	m.free(m.contextEmbedder.W, m.contextEmbedder.B, m.refinerNorm)
	m.contextEmbedder, m.refinerNorm = nn.Linear{}, nil
}

func (m *Model) bindTimeMLP() error {
	if m.timeIn.W != nil {
		return nil
	}
	c := m.cfg
	m.timeIn = m.bindLinear(m.n.timeIn(), compute.F32, c.TimeHiddenDim, c.FreqDim)
	m.timeOut = m.bindLinear(m.n.timeOut(), compute.F32, c.TimeEmbedDim, c.TimeHiddenDim)
	return m.bindErr("the time MLP")
}

func (m *Model) releaseTimeMLP() {
	m.free(m.timeIn.W, m.timeIn.B, m.timeOut.W, m.timeOut.B)
	m.timeIn, m.timeOut = nn.Linear{}, nn.Linear{}
}

// bindEdge binds the per-forward weights outside the block stack: patch
// projections, final norm and heads (F32 modules stay F32).
func (m *Model) bindEdge() error {
	if m.edge {
		return nil
	}
	c := m.cfg
	m.videoIn = m.bindLinear(m.n.videoIn(), compute.F32, c.HiddenSize, c.PatchDim())
	m.audioIn = m.bindLinear(m.n.audioIn(), compute.F32, c.HiddenSize, c.AudioInChannels)
	m.final = &AdaLNOut{Norm: m.w.TensorAs(m.n.finalNorm()+".weight", m.wdt(), c.HiddenSize), eps: c.FinalNormEps, fused: m.fz.adaLN}
	m.videoOut = m.bindLinear(m.n.videoOut(), compute.F32, c.PatchDim(), c.HiddenSize)
	m.audioOut = m.bindLinear(m.n.audioOut(), compute.F32, c.AudioInChannels, c.HiddenSize)
	if err := m.bindErr("the patch projections and heads"); err != nil {
		return err
	}
	m.edge = true
	return nil
}

func (m *Model) bindBlock(i int) (*Block, error) {
	if m.blocks[i] != nil {
		return m.blocks[i], nil
	}
	blk := bindBlock(m.w.Sub(m.n.block(i)), m.n, m.cfg, m.wdt(), m.opts.Quant, m.fz)
	if err := m.adaptBound(fmt.Sprintf("block %d", i), blk.Attn, blk.FF, StackBlocks, i); err != nil {
		return nil, err
	}
	m.blocks[i] = blk
	return blk, nil
}

// adaptBound reports a failed binding of the block named what, else gives
// stack/block's attention and MLP their adapters.
func (m *Model) adaptBound(what string, at *Attention, ff *FeedForward, stack Stack, block int) error {
	if err := m.bindErr(what); err != nil {
		return err
	}
	m.adaptAttention(at, stack, block)
	m.adaptFeedForward(ff, stack, block)
	return nil
}

func (m *Model) releaseBlock(i int) {
	if m.blocks[i] == nil {
		return
	}
	m.free(m.blocks[i].tensors()...)
	m.blocks[i] = nil
}

// BindCore binds the weights every forward reads: the active blocks (all
// when active is nil) unless the model streams them, plus the patch
// projections and heads. Forward binds lazily what is missing, so calling
// BindCore is optional; it makes the residency explicit (and lets a planner
// measure it). Blocks bound earlier but now inactive are released.
func (m *Model) BindCore(active []bool) (err error) {
	defer compute.Recover(&err)
	if err := m.bindEdge(); err != nil {
		return err
	}
	for i := range m.blocks {
		on := active == nil || active[i]
		if !on || m.opts.Residency == compute.Streaming {
			m.releaseBlock(i)
			continue
		}
		if _, err := m.bindBlock(i); err != nil {
			return err
		}
	}
	return nil
}

// WeightBytes is the storage of the weights currently bound.
func (m *Model) WeightBytes() int64 {
	var n int64
	add := func(ts ...*compute.Tensor) {
		for _, t := range ts {
			if t != nil {
				n += t.Bytes()
			}
		}
	}
	add(m.contextEmbedder.W, m.contextEmbedder.B, m.refinerNorm, m.timeIn.W, m.timeIn.B, m.timeOut.W, m.timeOut.B)
	for _, r := range m.refiner {
		if r != nil {
			add(r.tensors()...)
		}
	}
	for _, b := range m.blocks {
		if b != nil {
			add(b.tensors()...)
		}
	}
	if m.edge {
		add(m.videoIn.W, m.videoIn.B, m.audioIn.W, m.audioIn.B, m.final.Norm, m.videoOut.W, m.videoOut.B, m.audioOut.W, m.audioOut.B)
	}
	return n + m.AdapterBytes()
}

// Close releases every bound weight and unmaps the checkpoint Open mapped.
func (m *Model) Close() error {
	m.releaseAdapters()
	m.releasePrepText()
	m.releaseTimeMLP()
	for i := range m.blocks {
		m.releaseBlock(i)
	}
	if m.edge {
		m.free(m.videoIn.W, m.videoIn.B, m.audioIn.W, m.audioIn.B, m.final.Norm, m.videoOut.W, m.videoOut.B, m.audioOut.W, m.audioOut.B)
		m.edge = false
	}
	if m.ck != nil {
		err := m.ck.Close()
		m.ck = nil
		return err
	}
	return nil
}

func cancelled(ctx context.Context, where string) error {
	if ctx == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("dit: cancelled %s: %w", where, err)
	}
	return nil
}

// RefineText runs context_embedder and the token refiner over the text
// conditioning emb [L, TextDim] (any float dtype; the mixed precision rounds
// it to BF16 first, as the reference passes bfloat16 prompt embeddings) and
// returns the refined text rows [L, hidden] in the activation dtype. The
// caller frees the result.
func (m *Model) RefineText(ctx context.Context, emb *compute.Tensor) (out *compute.Tensor, err error) {
	defer compute.Recover(&err)
	c := m.cfg
	if emb.Rank() != 2 || emb.Dim(1) != c.TextDim || emb.Dim(0) < 1 {
		return nil, fmt.Errorf("dit: text embeddings %v: want [rows ≥ 1, %d]", emb, c.TextDim)
	}
	if err := cancelled(ctx, "before the token refiner"); err != nil {
		return nil, err
	}
	if err := m.bindPrepText(); err != nil {
		return nil, err
	}
	a := nn.NewArena(m.b)
	defer a.Release()
	L := emb.Dim(0)
	x := emb
	if emb.DType() != m.dt {
		x = a.New(m.dt, L, c.TextDim)
		m.b.Copy(x, emb)
	}
	h := compute.MustAlloc(m.b, m.dt, L, c.HiddenSize)
	defer func() {
		if err != nil {
			m.b.Free(h)
		}
	}()
	m.contextEmbedder.Forward(m.b, h, x)
	m.trace("context_embedder", h)
	for i := range m.refiner {
		if err := cancelled(ctx, fmt.Sprintf("before token refiner block %d", i)); err != nil {
			return nil, err
		}
		r, err := m.bindRefinerBlock(i)
		if err != nil {
			return nil, err
		}
		ra := nn.NewArena(m.b)
		r.Forward(m.b, ra, h)
		ra.Release()
		if !m.opts.KeepPrep {
			m.releaseRefinerBlock(i)
		}
	}
	m.b.RMSNorm(h, h, m.refinerNorm, c.FinalNormEps)
	m.trace("token_refiner", h)
	if !m.opts.KeepPrep {
		m.releasePrepText()
	}
	m.refinerRuns.Add(1)
	return h, nil
}
