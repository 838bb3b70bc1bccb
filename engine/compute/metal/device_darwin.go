//go:build darwin

package metal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"h3studio/darwin/mtl"
	"h3studio/engine/compute"
	"h3studio/shaders"
)

// A command buffer is committed once its estimated work reaches
// DispatchBudget, so that no buffer runs long enough for macOS's GPU
// watchdog, or after batchDispatches dispatches, so that the GPU starts while
// the host keeps encoding.
const batchDispatches = 64

// OpenOptions configure Open.
type OpenOptions struct {
	Options
	// MinWorkingSet fails Open with a *MemoryError when the GPU's
	// recommended working set is smaller (0: no minimum).
	MinWorkingSet int64
}

// Open returns the Metal backend on the system's default GPU: the shader
// library compiled from the embedded sources (a compile error names the
// kernel and the line) and a command queue. It fails with mtl.ErrNoDevice without a GPU
// and with mtl.ErrOldMacOS before macOS 14.
func Open(o OpenOptions) (*Backend, error) {
	if !mtl.OSAtLeast(mtl.MinMacOS[0], mtl.MinMacOS[1]) {
		return nil, mtl.ErrOldMacOS
	}
	dev, err := mtl.DefaultDevice()
	if err != nil {
		return nil, err
	}
	g, err := newGPU(dev, o.MinWorkingSet)
	if err != nil {
		dev.Release()
		return nil, err
	}
	return New(g, o.Options), nil
}

// DeviceFacts describes the default GPU without building the shader library
// (cheap: for `h3studio info` and plans). It fails with mtl.ErrNoDevice.
func DeviceFacts() (compute.DeviceInfo, error) {
	dev, err := mtl.DefaultDevice()
	if err != nil {
		return compute.DeviceInfo{}, err
	}
	defer dev.Release()
	return deviceInfo(dev), nil
}

func deviceInfo(dev *mtl.Device) compute.DeviceInfo {
	info := compute.DeviceInfo{Backend: "metal", Name: dev.Name(), UnifiedMemory: dev.UnifiedMemory(),
		WorkingSetBytes: dev.RecommendedMaxWorkingSetSize(), Family: dev.Family()}
	if mem, err := unix.SysctlUint64("hw.memsize"); err == nil {
		info.MemoryBytes = int64(mem)
	}
	return info
}

// gpu is the Device of a real MTLDevice.
type gpu struct {
	dev   *mtl.Device
	lib   *mtl.Library
	queue *mtl.Queue
	host  HostRegions
	info  compute.DeviceInfo

	mu       sync.Mutex // encoding state
	cb       *mtl.CommandBuffer
	n        int      // dispatches in cb
	work     float64  // estimated work in cb (Dispatch.Work)
	releases []func() // to run when cb completes
	pending  []submitted
	gemms    map[mtl.GEMMSpec]*mtl.Graph[mtl.GEMMSpec]
	sdpas    map[mtl.SDPASpec]*mtl.Graph[mtl.SDPASpec]
	noSDPA   bool // MPSGraph has no scaled-dot-product attention (before macOS 15)

	errMu   sync.Mutex
	err     error // first command-buffer error since the last Wait
	subs    atomic.Int64
	gpuTime atomic.Int64
}

func newGPU(dev *mtl.Device, minWorkingSet int64) (*gpu, error) {
	info := deviceInfo(dev)
	if minWorkingSet > 0 && info.WorkingSetBytes < minWorkingSet {
		return nil, &MemoryError{Device: info.Name, Have: info.WorkingSetBytes, Need: minWorkingSet}
	}
	lib, err := dev.NewLibrary(shaders.Source())
	if err != nil {
		var ce *mtl.CompileError
		if errors.As(err, &ce) {
			return nil, NewShaderError(ce.Log)
		}
		return nil, err
	}
	q, err := dev.NewQueue()
	if err != nil {
		lib.Release()
		return nil, err
	}
	g := &gpu{dev: dev, lib: lib, queue: q, info: info, gemms: map[mtl.GEMMSpec]*mtl.Graph[mtl.GEMMSpec]{}, sdpas: map[mtl.SDPASpec]*mtl.Graph[mtl.SDPASpec]{}}
	g.host = HostRegions{PageSize: int64(os.Getpagesize()), MaxBuffer: dev.MaxBufferLength(), Wrap: g.wrapWindow}
	return g, nil
}

func (g *gpu) Info() compute.DeviceInfo { return g.info }

// gpuBuffer is a metal.Buffer over an mtl.Buffer.
type gpuBuffer struct {
	b *mtl.Buffer
	g *gpu
}

func (b *gpuBuffer) Bytes() []byte { return b.b.Bytes() }

func (b *gpuBuffer) Release() {
	b.b.Release()
}

func (g *gpu) NewBuffer(size int64) (Buffer, error) {
	b, err := g.dev.NewBuffer(size)
	if err != nil {
		return nil, err
	}
	return &gpuBuffer{b: b, g: g}, nil
}

func (g *gpu) wrapWindow(w []byte) (Buffer, error) {
	b, err := g.dev.NewBufferNoCopy(w)
	if err != nil {
		return nil, err
	}
	// No residency set holds the windows over mapped shards: asking for
	// their residency would page the whole checkpoint in, defeating block
	// streaming; the OS pages them on use.
	return &gpuBuffer{b: b, g: g}, nil
}

func (g *gpu) MapHost(region []byte) error                { return g.host.Add(region) }
func (g *gpu) UnmapHost(region []byte)                    { g.host.Remove(region) }
func (g *gpu) WrapHost(host []byte) (Buffer, int64, bool) { return g.host.Find(host) }
func (g *gpu) Submissions() int64                         { return g.subs.Load() }
func (g *gpu) GPUTime() time.Duration                     { return time.Duration(g.gpuTime.Load()) }

// current returns the open command buffer (g.mu held).
func (g *gpu) current() *mtl.CommandBuffer {
	if g.cb == nil {
		g.cb = g.queue.CommandBuffer()
		g.n = 0
	}
	return g.cb
}

func (g *gpu) Encode(d *Dispatch) error {
	p, err := g.lib.Pipeline(d.Kernel)
	if err != nil {
		return err
	}
	if t := d.Threads[0] * d.Threads[1] * d.Threads[2]; t > p.MaxThreads {
		return fmt.Errorf("%d threads per threadgroup; this device runs at most %d for %s", t, p.MaxThreads, d.Kernel)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	enc := g.current().Encoder()
	enc.SetPipeline(p)
	for i, a := range d.Args {
		if a.Buf == nil {
			enc.SetBytes(a.Bytes, i)
			continue
		}
		enc.SetBuffer(a.Buf.(*gpuBuffer).b, a.Offset, i)
	}
	for i, n := range d.TGMem {
		if n > 0 {
			enc.SetThreadgroupMemory(n, i)
		}
	}
	enc.Dispatch(d.Groups, d.Threads)
	g.n++
	g.work += d.Work
	if g.n >= batchDispatches || g.work >= DispatchBudget {
		g.commit()
	}
	return nil
}

// graphTypes maps the float types to MPSGraph's element types.
var graphTypes = map[compute.DType]mtl.ElemType{compute.F32: mtl.Float32, compute.F16: mtl.Float16, compute.BF16: mtl.BFloat16}

// EncodeGEMM sends a product of one float type to MPSGraph.
func (g *gpu) EncodeGEMM(m *GEMM) (bool, error) {
	t, ok := graphTypes[m.DType]
	if !ok || m.XType != m.DType || m.WType != m.DType || (m.Bias.Buf != nil && m.BiasType != m.DType) {
		return false, nil
	}
	spec := mtl.GEMMSpec{M: m.M, N: m.N, K: m.K, Type: t, Bias: m.Bias.Buf != nil}
	args := []Arg{m.X, m.W, m.Dst}
	if spec.Bias {
		args = []Arg{m.X, m.W, m.Bias, m.Dst}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return encodeGraph(g, g.gemms, spec, 2*float64(m.M)*float64(m.N)*float64(m.K), args...)
}

// EncodeAttention sends one head to MPSGraph's scaled-dot-product attention
// (macOS 15); ok is false before macOS 15 and for non-float types.
func (g *gpu) EncodeAttention(a *AttentionHead) (bool, error) {
	t, ok := graphTypes[a.DType]
	if !ok {
		return false, nil
	}
	spec := mtl.SDPASpec{Sq: a.Sq, Sk: a.Sk, D: a.D, Type: t, Scale: a.Scale}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.noSDPA {
		return false, nil
	}
	ok, err := encodeGraph(g, g.sdpas, spec, 4*float64(a.Sq)*float64(a.Sk)*float64(a.D), a.Q, a.K, a.V, a.Dst)
	if errors.Is(err, mtl.ErrUnsupported) {
		g.noSDPA = true
		return false, nil
	}
	return ok, err
}

// encodeGraph records the MPSGraph operation spec over args (its inputs,
// then its output) into the open command buffer, building the graph on
// first use and keeping it in graphs; work is its estimated work
// (Dispatch.Work). ok is false, with nothing encoded, when this macOS cannot
// view one of the regions. g.mu held.
func encodeGraph[S mtl.GraphSpec](g *gpu, graphs map[S]*mtl.Graph[S], spec S, work float64, args ...Arg) (bool, error) {
	gr, ok := graphs[spec]
	if !ok {
		var err error
		if gr, err = mtl.NewGraph(spec); err != nil {
			gr.Release()
			return false, err
		}
		graphs[spec] = gr
	}
	views := make([]mtl.View, len(args))
	for i, a := range args {
		views[i] = mtl.View{Buf: a.Buf.(*gpuBuffer).b, Offset: a.Offset}
	}
	rel, ok := gr.Encode(g.current(), views...)
	if !ok {
		return false, nil
	}
	g.releases = append(g.releases, rel)
	g.n++
	g.work += work
	if g.n >= batchDispatches || g.work >= DispatchBudget {
		g.commit()
	}
	return true, nil
}

// submitted is a committed command buffer and what to release once it has
// completed.
type submitted struct {
	cb   *mtl.CommandBuffer
	rels []func()
}

// commit submits the open command buffer (g.mu held).
func (g *gpu) commit() {
	if g.cb == nil {
		return
	}
	g.cb.Commit()
	g.subs.Add(1)
	g.pending = append(g.pending, submitted{g.cb, g.releases})
	g.cb, g.releases, g.n, g.work = nil, nil, 0, 0
}

// Wait commits the open work and waits for every committed command buffer;
// each buffer's status, error and GPU time are read after it completed.
func (g *gpu) Wait(ctx context.Context) error {
	g.mu.Lock()
	g.commit()
	pending := g.pending
	g.pending = nil
	g.mu.Unlock()
	done := make(chan struct{})
	go func() {
		for _, s := range pending {
			c := s.cb.Wait()
			g.gpuTime.Add(int64(c.GPUTime))
			if c.Err != nil {
				g.errMu.Lock()
				if g.err == nil {
					g.err = c.Err
				}
				g.errMu.Unlock()
			}
			for _, r := range s.rels {
				r()
			}
			s.cb.Release()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err() // the work goes on; a later Wait sees its errors
	}
	g.errMu.Lock()
	err := g.err
	g.err = nil
	g.errMu.Unlock()
	return err
}

func (g *gpu) Close() error {
	err := g.Wait(context.Background())
	g.mu.Lock()
	for _, gm := range g.gemms {
		gm.Release()
	}
	g.gemms = nil
	for _, sd := range g.sdpas {
		sd.Release()
	}
	g.sdpas = nil
	g.mu.Unlock()
	g.queue.Release()
	g.lib.Release()
	g.dev.Release()
	return err
}
