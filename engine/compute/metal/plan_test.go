package metal

import (
	"context"
	"fmt"
	"math"
	"testing"

	"h3studio/engine/compute"
)

// countingDevice records dispatches without storage or execution: it runs
// the op layer over full-size shapes to count what a forward costs.
type countingDevice struct {
	kernels map[string]int
	gemm    bool // offer a library GEMM, as the darwin device does
	gemms   int
	// the largest estimated work of one dispatch or library product
	maxWork   float64
	maxKernel string
}

type nullBuffer struct{ size int64 } // distinct pointers: distinct storage

func (*nullBuffer) Bytes() []byte { return nil }
func (*nullBuffer) Release()      {}

func (d *countingDevice) Info() compute.DeviceInfo {
	return compute.DeviceInfo{Backend: "metal", Name: "counting"}
}
func (d *countingDevice) NewBuffer(n int64) (Buffer, error)     { return &nullBuffer{n}, nil }
func (d *countingDevice) MapHost([]byte) error                  { return nil }
func (d *countingDevice) UnmapHost([]byte)                      {}
func (d *countingDevice) WrapHost([]byte) (Buffer, int64, bool) { return nil, 0, false }
func (d *countingDevice) Encode(p *Dispatch) error {
	d.kernels[p.Kernel]++
	d.work(p.Kernel, p.Work)
	return nil
}
func (d *countingDevice) Wait(context.Context) error { return nil }
func (d *countingDevice) Submissions() int64         { return 0 }
func (d *countingDevice) Close() error               { return nil }
func (d *countingDevice) EncodeGEMM(g *GEMM) (bool, error) {
	d.gemms++
	if d.gemm {
		d.work(fmt.Sprintf("MPSGraph GEMM %d×%d×%d", g.M, g.N, g.K), 2*float64(g.M)*float64(g.N)*float64(g.K))
	}
	return d.gemm, nil
}

func (d *countingDevice) work(what string, w float64) {
	if w > d.maxWork {
		d.maxWork, d.maxKernel = w, what
	}
}

// ditBlock records one main DiT block (spec H3-DIT §9.3) on rows packed rows
// with BF16 activations: RMSNorm + AdaLN modulation, the QKV product,
// de-interleaving, QK-norm, RoPE, attention, the output product and gated
// residual, then the SwiGLU MLP and its gated residual; with the fused
// kernels when fused (the MLP residual then also writes the next block's
// attention input, as engine/dit does between blocks). All heads are
// projected at once (engine/dit projects 8 heads at a time: 7 QKV products
// and 7 splits per block; TestDispatchesPerBlock there pins that count).
func ditBlock(b *Backend, rows int, fused bool) {
	const (
		H, NH, HD, FFN = 5376, 56, 128, 14336
	)
	bf := compute.BF16
	a := func(dt compute.DType, s ...int) *compute.Tensor { return compute.MustAlloc(b, dt, s...) }
	x := a(bf, rows, H)
	table := a(compute.F32, 8, 6*H) // the block's modulation rows (§8.4)
	idx := a(compute.I32, rows)
	norm1, norm2, qn, kn := a(bf, H), a(bf, H), a(bf, HD), a(bf, HD)
	wqkv, wout, wfc1, wfc2 := a(bf, 3*NH*HD, H), a(bf, H, NH*HD), a(bf, 2*FFN, H), a(bf, H, FFN)
	cos, sin := a(bf, rows, 48), a(bf, rows, 48)

	if fused {
		ditBlockFused(b, rows, x, table, idx, norm1, norm2, qn, kn, wqkv, wout, wfc1, wfc2, cos, sin)
		return
	}
	n := a(bf, rows, H)
	b.RMSNorm(n, x, norm1, 1e-5)
	b.Modulate(n, n, table, idx, 0, H)
	qkv := a(bf, rows, 3*NH*HD)
	b.MatMul(qkv, n, wqkv, nil)
	heads := a(bf, 3, NH, rows, HD)
	b.Transpose(heads, qkv.Reshape(rows, NH, 3, HD), 2, 1, 0, 3)
	q, k, v := heads.Row(0), heads.Row(1), heads.Row(2)
	b.RMSNorm(q, q, qn, 1e-5)
	b.RMSNorm(k, k, kn, 1e-5)
	b.RoPE(q, q, cos, sin, 96)
	b.RoPE(k, k, cos, sin, 96)
	o := a(bf, NH, rows, HD)
	b.Attention(o, q, k, v, compute.AttentionParams{Scale: float32(1 / math.Sqrt(HD))})
	oc := a(bf, rows, NH, HD)
	b.Transpose(oc, o, 1, 0, 2)
	attn := a(bf, rows, H)
	b.MatMul(attn, oc.Reshape(rows, NH*HD), wout, nil)
	b.GatedAdd(x, x, attn, table, idx, 2*H)
	b.RMSNorm(n, x, norm2, 1e-5)
	b.Modulate(n, n, table, idx, 3*H, 4*H)
	u := a(bf, rows, 2*FFN)
	b.MatMul(u, n, wfc1, nil)
	g := a(bf, rows, FFN)
	b.GLU(g, u, compute.SiLU, true)
	b.MatMul(attn, g, wfc2, nil)
	b.GatedAdd(x, x, attn, table, idx, 5*H)
}

func ditBlockFused(b *Backend, rows int, x, table, idx, norm1, norm2, qn, kn, wqkv, wout, wfc1, wfc2, cos, sin *compute.Tensor) {
	const (
		H, NH, HD, FFN = 5376, 56, 128, 14336
	)
	bf := compute.BF16
	a := func(dt compute.DType, s ...int) *compute.Tensor { return compute.MustAlloc(b, dt, s...) }
	pre := func(w *compute.Tensor, shift int) compute.NormModulation {
		return compute.NormModulation{Weight: w, Eps: 1e-5, Table: table, Rows: idx, ShiftCol: shift * H, ScaleCol: (shift + 1) * H}
	}
	n := a(bf, rows, H)
	b.RMSNormModulate(n, x, pre(norm1, 0)) // the first block only; later ones receive n
	qkv := a(bf, rows, 3*NH*HD)
	b.MatMul(qkv, n, wqkv, nil)
	heads := a(bf, 3, NH, rows, HD)
	b.QKNormRoPE(heads.Row(0), heads.Row(1), heads.Row(2), qkv.Reshape(rows, NH, 3, HD),
		compute.QKNormRoPEParams{Layout: compute.QKVInterleaved, NormQ: qn, NormK: kn, Eps: 1e-5, Cos: cos, Sin: sin, RotDim: 96})
	o := a(bf, NH, rows, HD)
	b.Attention(o, heads.Row(0), heads.Row(1), heads.Row(2), compute.AttentionParams{Scale: float32(1 / math.Sqrt(HD))})
	oc := a(bf, rows, NH, HD)
	b.Transpose(oc, o, 1, 0, 2)
	attn := a(bf, rows, H)
	b.MatMul(attn, oc.Reshape(rows, NH*HD), wout, nil)
	b.GatedAddRMSNormModulate(x, n, x, attn, table, 2*H, pre(norm2, 3))
	u := a(bf, rows, 2*FFN)
	b.MatMul(u, n, wfc1, nil)
	g := a(bf, rows, FFN)
	b.GLU(g, u, compute.SiLU, true)
	b.MatMul(attn, g, wfc2, nil)
	b.GatedAddRMSNormModulate(x, n, x, attn, table, 5*H, pre(norm1, 0)) // the next block's table in engine/dit
}

// TestDiTForwardCost pins the structure of a DiT block on the Metal backend
// (18 dispatches unfused, 11 fused, 4 of them library GEMMs; at 37,838 rows
// attention runs in 48 dispatches of query tiles and the products in 34 runs
// of rows, to stay within DispatchBudget) and logs the FLOPs and the bytes
// the kernels read and write per 50-block forward (docs/metal.md quotes them).
func TestDiTForwardCost(t *testing.T) {
	for _, fused := range []bool{false, true} {
		for _, rows := range []int{1994, 37838} { // h3studio plan: 512²×22 and 1344×768×124, 128 text rows
			dev := &countingDevice{kernels: map[string]int{}, gemm: true}
			b := New(dev, Options{})
			ditBlock(b, rows, fused)
			st := b.Stats()
			want, gemms := int64(18), 4
			if fused {
				want = 11 // 10 in a block that receives its attention input
			}
			if rows == 37838 {
				want, gemms = want+47+30, 34
			}
			if st.Dispatches != want || dev.gemms != gemms {
				t.Errorf("fused %v, %d rows: %d dispatches (%d library GEMMs), want %d (%d): %v", fused, rows, st.Dispatches, dev.gemms, want, gemms, dev.kernels)
			}
			weights := 2.0 * (3*56*128*5376 + 5376*7168 + 2*14336*5376 + 5376*14336)
			t.Logf("fused %v, %d rows, per 50-block forward: %.1f TFLOP, %.1f GB moved (%.1f GB of it BF16 weights), %d dispatches; kernels %v",
				fused, rows, 50*st.FLOPs/1e12, 50*st.BytesMoved/1e9, 50*weights/1e9, 50*st.Dispatches, dev.kernels)
		}
	}
	// Without a library GEMM every product is the hand kernel.
	dev := &countingDevice{kernels: map[string]int{}}
	ditBlock(New(dev, Options{}), 2066, false)
	if dev.kernels["kernel_matmul_bf16_bf16"] != 4 {
		t.Errorf("hand GEMMs %v", dev.kernels)
	}
}

// TestDispatchWithinBudget: at the largest legal request (1344×768×124: a
// DiT sequence of 37,838 tokens, H3-DIT §9) no single dispatch or library
// product of a DiT block exceeds DispatchBudget, the work a command buffer
// may take before macOS's GPU watchdog is a risk (unsplit, one attention
// dispatch is ≈ 41 TFLOP).
func TestDispatchWithinBudget(t *testing.T) {
	const rows = 37838
	for _, gemm := range []bool{true, false} {
		for _, fused := range []bool{false, true} {
			d := &countingDevice{kernels: map[string]int{}, gemm: gemm}
			b := New(d, Options{MemoryLimit: 1 << 50})
			ditBlock(b, rows, fused)
			if d.maxWork > DispatchBudget {
				t.Errorf("gemm %v fused %v: %s does %.3g FLOP+bytes in one dispatch, over the budget %.3g", gemm, fused, d.maxKernel, d.maxWork, DispatchBudget)
			}
			t.Logf("gemm %v fused %v: largest dispatch %s, %.3g", gemm, fused, d.maxKernel, d.maxWork)
		}
	}
}

// TestDispatchBudgetPlanted: the check sees an unsplit attention.
func TestDispatchBudgetPlanted(t *testing.T) {
	d := &countingDevice{kernels: map[string]int{}}
	b := New(d, Options{MemoryLimit: 1 << 50})
	a := func(s ...int) *compute.Tensor { return compute.MustAlloc(b, compute.BF16, s...) }
	q := a(56, 37838, 128)
	b.count(4 * 56 * 37838 * 37838 * 128)
	b.encode(&Dispatch{Kernel: "kernel_attention_bf16_bf16_d128", Args: []Arg{b.arg(q, false)}})
	if d.maxWork <= DispatchBudget || d.maxKernel != "kernel_attention_bf16_bf16_d128" {
		t.Fatalf("an unsplit attention dispatch of %.3g was not seen over the budget", d.maxWork)
	}
}

// attentionDevice is a countingDevice with a library attention that accepts
// (MPSGraph SDPA on macOS 15) or declines (before).
type attentionDevice struct {
	*countingDevice
	accept bool
	heads  int
}

func (d *attentionDevice) EncodeAttention(a *AttentionHead) (bool, error) {
	if !d.accept {
		return false, nil
	}
	d.heads++
	d.work("MPSGraph SDPA", 4*float64(a.Sq)*float64(a.Sk)*float64(a.D))
	return true, nil
}

// TestLibraryAttentionRouting: unmasked attention goes to the library, one
// head (and run of rows) at a time within DispatchBudget; the oracle, a
// causal mask, rounded probabilities and a declining library keep the hand
// kernel.
func TestLibraryAttentionRouting(t *testing.T) {
	run := func(accept bool, o compute.Oracles, p compute.AttentionParams, sq int) (*attentionDevice, *Backend) {
		d := &attentionDevice{countingDevice: &countingDevice{kernels: map[string]int{}}, accept: accept}
		b := New(d, Options{MemoryLimit: 1 << 50, Oracles: o})
		a := func(s ...int) *compute.Tensor { return compute.MustAlloc(b, compute.BF16, s...) }
		b.Attention(a(56, sq, 128), a(56, sq, 128), a(8, sq, 128), a(8, sq, 128), p)
		return d, b
	}
	hand := func(d *attentionDevice) int { return d.kernels["kernel_attention_bf16_bf16_d128"] }
	p := compute.AttentionParams{Scale: 0.088}
	if d, b := run(true, 0, p, 1994); d.heads != 56 || hand(d) != 0 || b.Stats().FLOPs != 4*56*1994*1994*128 {
		t.Errorf("library: %d heads, %d hand dispatches, %.4g FLOP", d.heads, hand(d), b.Stats().FLOPs)
	}
	if d, _ := run(true, 0, p, 37838); d.maxWork > DispatchBudget || d.heads != 56 { // one run of rows per head fits
		t.Errorf("37,838 rows: %d encodes (want 56), largest %.3g (budget %.3g)", d.heads, d.maxWork, DispatchBudget)
	}
	for name, c := range map[string]struct {
		accept bool
		o      compute.Oracles
		p      compute.AttentionParams
	}{
		"oracle":   {true, compute.Oracles(0).With(OracleHandAttention), p},
		"causal":   {true, 0, compute.AttentionParams{Scale: 0.088, Causal: true}},
		"rounded":  {true, 0, compute.AttentionParams{Scale: 0.088, RoundProbs: true}},
		"declined": {false, 0, p},
	} {
		if d, b := run(c.accept, c.o, c.p, 1994); d.heads != 0 || hand(d) == 0 || b.Sync(context.Background()) != nil {
			t.Errorf("%s: %d library heads, %d hand dispatches", name, d.heads, hand(d))
		}
	}
}
