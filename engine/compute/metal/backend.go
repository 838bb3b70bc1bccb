package metal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// Oracles of the Metal backend (house rule 10: every fast path keeps a named
// slower path, selectable with H3_ORACLE).
var (
	// OracleHandGEMM sends every MatMul to the hand kernel instead of the
	// device's library GEMM (MPSGraph).
	OracleHandGEMM = compute.RegisterOracle("metal-hand-gemm", "Metal: hand-written MatMul kernel instead of MPSGraph")
	// OracleHandAttention keeps attention on the hand kernel instead of
	// MPSGraph's scaled-dot-product attention (macOS 15).
	OracleHandAttention = compute.RegisterOracle("metal-hand-attention", "Metal: hand-written attention kernel instead of MPSGraph SDPA")
)

// Options configure a Backend.
type Options struct {
	// Oracles selects slower reference paths.
	Oracles compute.Oracles
	// MemoryLimit makes Alloc fail with *compute.AllocError past this many
	// bytes of live storage plus bound zero-copy weights (a no-copy buffer
	// over a mapped shard is part of the GPU's working set too); 0 means
	// the device's recommended working set (no limit when the device does
	// not know it).
	MemoryLimit int64
	// GEMMMinFLOPs is the smallest MatMul (2·M·N·K) sent to the device's
	// library GEMM when it has one; 0 means 1<<28. Tests lower it to 1.
	GEMMMinFLOPs float64
	// DispatchBudget bounds one dispatch's work (FLOPs plus bytes); 0 means
	// the package's DispatchBudget. Tests lower it to exercise the splits.
	DispatchBudget float64
}

// Backend is the Metal backend: compute.Backend over a Device. Kernels are
// recorded in call order and run asynchronously; errors of recorded work
// (a failed command buffer, a kernel the device could not build) come back
// from the next Sync, Download or Upload. A Backend is safe for concurrent
// use by one model at a time.
type Backend struct {
	dev  Device
	gemm GEMMDevice      // nil without a library GEMM
	att  AttentionDevice // nil without a library attention
	opts Options
	ref  *cpu.Backend // CPU reference for fallbacks

	mu    sync.Mutex // serialises encoding
	err   error      // first error of recorded work since the last Sync
	dummy Buffer     // bound where a kernel's optional operand is absent
	// flopsEncoded is flops when the last dispatch was encoded (b.mu).
	flopsEncoded uint64

	mem          compute.Memory
	dispatches   atomic.Int64
	fallbacks    atomic.Int64
	flops, moved atomic.Uint64
}

var _ compute.Backend = (*Backend)(nil)

// New returns a Backend encoding onto dev.
func New(dev Device, o Options) *Backend {
	b := &Backend{dev: dev, opts: o, ref: cpu.New(cpu.Options{})}
	if g, ok := dev.(GEMMDevice); ok {
		b.gemm = g
	}
	if a, ok := dev.(AttentionDevice); ok {
		b.att = a
	}
	if b.opts.MemoryLimit == 0 {
		b.opts.MemoryLimit = dev.Info().WorkingSetBytes
	}
	if b.opts.GEMMMinFLOPs == 0 {
		b.opts.GEMMMinFLOPs = 1 << 28
	}
	if b.opts.DispatchBudget == 0 {
		b.opts.DispatchBudget = DispatchBudget
	}
	return b
}

// Name returns "metal".
func (b *Backend) Name() string { return "metal" }

// Device describes the GPU.
func (b *Backend) Device() compute.DeviceInfo { return b.dev.Info() }

// buffer is Backend storage: a device buffer, or a view of a registered host
// region (zero-copy Wrap).
type buffer struct {
	b     *Backend
	dev   Buffer
	off   int64 // of this storage in dev
	size  int64
	owned bool // counted in live bytes (Alloc, copying Wrap); else mapped
	freed atomic.Bool
}

func (u *buffer) Backend() compute.Backend { return u.b }
func (u *buffer) Size() int64              { return u.size }

// Alloc returns storage with unspecified contents.
func (b *Backend) Alloc(dt compute.DType, shape ...int) (*compute.Tensor, error) {
	s := compute.Shape(shape)
	n := compute.AllocBytes("metal", dt, s)
	if lim := b.opts.MemoryLimit; lim > 0 && b.mem.Live()+b.mem.Mapped()+n > lim {
		return nil, &compute.AllocError{Backend: "metal", Bytes: n, Live: b.mem.Live(),
			Err: fmt.Errorf("over the GPU's working set of %d bytes (%d bytes of bound weights)", lim, b.mem.Mapped())}
	}
	db, err := b.dev.NewBuffer(max(n, 16))
	if err != nil {
		return nil, &compute.AllocError{Backend: "metal", Bytes: n, Live: b.mem.Live(), Err: err}
	}
	u := &buffer{b: b, dev: db, size: n, owned: true}
	b.mem.Add(n, true)
	return compute.NewTensor(dt, s, u, 0), nil
}

// MapHost registers a page-aligned host mapping (a checkpoint shard mapped
// as a whole) with the device, so that Wrap views its tensors without
// copying. It implements compute.HostMapper.
func (b *Backend) MapHost(region []byte) error { return b.dev.MapHost(region) }

// UnmapHost forgets a region registered with MapHost, after the recorded
// work (which may read it) has finished; an error of that work comes back
// from the next Sync.
func (b *Backend) UnmapHost(region []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.dev.Wait(context.Background()); err != nil && b.err == nil {
		b.err = fmt.Errorf("metal: %w", err)
	}
	b.dev.UnmapHost(region)
}

// Wrap views host memory without copying when it lies in a region
// registered with MapHost and is aligned for dt; otherwise it copies.
func (b *Backend) Wrap(dt compute.DType, shape compute.Shape, host []byte) (*compute.Tensor, error) {
	n := int64(shape.NumElements()) * int64(dt.Size())
	if int64(len(host)) != n {
		return nil, fmt.Errorf("metal: Wrap %v%v: %d bytes given, %d needed", dt, shape, len(host), n)
	}
	if n > 0 {
		if db, off, ok := b.dev.WrapHost(host); ok && off%int64(dt.Size()) == 0 {
			b.mem.Add(n, false)
			return compute.NewTensor(dt, shape, &buffer{b: b, dev: db, off: off, size: n}, 0), nil
		}
	}
	t, err := b.Alloc(dt, shape...)
	if err != nil {
		return nil, err
	}
	copy(b.hostBytes(t), host)
	return t, nil
}

// hostBytes is the host view of t's bytes (shared storage).
func (b *Backend) hostBytes(t *compute.Tensor) []byte {
	u, off := b.storage(t)
	start := u.off + off
	return u.dev.Bytes()[start : start+t.Bytes()]
}

func (b *Backend) storage(t *compute.Tensor) (*buffer, int64) {
	buf, off := t.Buffer()
	u, ok := buf.(*buffer)
	if !ok || u.b != b {
		panic(fmt.Sprintf("metal: tensor %v does not belong to this Metal backend", t))
	}
	if u.freed.Load() {
		panic(fmt.Sprintf("metal: tensor %v used after Free", t))
	}
	return u, off
}

// Upload copies host bytes into dst after the recorded work that may read it.
func (b *Backend) Upload(dst *compute.Tensor, src []byte) error {
	if err := compute.CheckHostBytes("metal", "Upload to", dst, len(src)); err != nil {
		return err
	}
	if err := b.Sync(context.Background()); err != nil {
		return err
	}
	copy(b.hostBytes(dst), src)
	return nil
}

// Download waits for the recorded work and copies src's bytes to dst.
func (b *Backend) Download(dst []byte, src *compute.Tensor) error {
	if err := compute.CheckHostBytes("metal", "Download from", src, len(dst)); err != nil {
		return err
	}
	if err := b.Sync(context.Background()); err != nil {
		return err
	}
	copy(dst, b.hostBytes(src))
	return nil
}

// Free releases storage made by Alloc or Wrap (views free their parent's
// storage). Pending GPU work keeps what it uses alive.
func (b *Backend) Free(ts ...*compute.Tensor) {
	compute.FreeEach(ts, func(u *buffer) {
		if u.b != b || u.freed.Swap(true) {
			return
		}
		b.mem.Remove(u.size, u.owned)
		if u.owned {
			u.dev.Release()
		}
	})
}

// Sync waits for every recorded kernel and reports the first error since
// the previous Sync.
func (b *Backend) Sync(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	werr := b.dev.Wait(ctx)
	b.mu.Lock()
	err := b.err
	b.err = nil
	b.mu.Unlock()
	return errors.Join(err, werr)
}

// Stats reports the counters.
func (b *Backend) Stats() compute.Stats {
	s := b.mem.Stats()
	s.Dispatches = b.dispatches.Load()
	s.Submissions = b.dev.Submissions()
	s.CPUFallbacks = b.fallbacks.Load()
	s.FLOPs = float64(b.flops.Load())
	s.BytesMoved = float64(b.moved.Load())
	s.DeviceTime = b.GPUTime()
	return s
}

// GPUTime is the GPU time of the command buffers completed so far (0 when
// the device does not measure it).
func (b *Backend) GPUTime() time.Duration {
	if t, ok := b.dev.(interface{ GPUTime() time.Duration }); ok {
		return t.GPUTime()
	}
	return 0
}

// ResetPeak sets the peaks to the storage now (compute.Memory.ResetPeak).
func (b *Backend) ResetPeak() { b.mem.ResetPeak() }

// Close waits for pending work and releases the device.
func (b *Backend) Close() error {
	err := b.dev.Wait(context.Background())
	return errors.Join(err, b.dev.Close())
}

// fail records the first error of recorded work.
func (b *Backend) fail(err error) {
	if err == nil {
		return
	}
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
}

// encode records one dispatch.
func (b *Backend) encode(d *Dispatch) {
	b.dispatches.Add(1)
	for _, a := range d.Args {
		if a.Buf != nil {
			n := a.Size
			if a.Touched > 0 {
				n = a.Touched
			}
			b.moved.Add(uint64(n))
			d.Work += float64(n)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.flops.Load()
	d.Work += float64(f - b.flopsEncoded) // the op's FLOPs go with its first dispatch
	b.flopsEncoded = f
	if err := b.dev.Encode(d); err != nil && b.err == nil {
		b.err = fmt.Errorf("metal: %s: %w", d.Kernel, err)
	}
}

func (b *Backend) count(flops float64) {
	if flops > 0 {
		b.flops.Add(uint64(flops))
	}
}

// arg binds tensor t.
func (b *Backend) arg(t *compute.Tensor, write bool) Arg {
	u, off := b.storage(t)
	return Arg{Buf: u.dev, Offset: u.off + off, Size: t.Bytes(), Write: write, Align: t.DType().Size()}
}

// optArg binds t, or a small placeholder device buffer when t is nil (the
// kernel does not read it; Metal still wants every declared buffer bound).
func (b *Backend) optArg(t *compute.Tensor) Arg {
	if t != nil {
		return b.arg(t, false)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dummy == nil {
		d, err := b.dev.NewBuffer(16)
		if err != nil {
			panic(&compute.AllocError{Backend: "metal", Bytes: 16, Err: err})
		}
		b.dummy = d
	}
	return Arg{Buf: b.dummy, Size: 16, Align: 1}
}

// dtCode is a tensor's kargs.h DT_* code (0 for nil).
func dtCode(t *compute.Tensor) uint32 {
	if t == nil {
		return 0
	}
	return uint32(t.DType())
}

func b2u(v bool) uint32 {
	if v {
		return 1
	}
	return 0
}
