// Package cpu is the pure-Go reference backend of package compute: the
// executable specification every other backend is tested against.
//
// Every kernel computes in float32 (float64 where the reference does, and
// in the accumulators of 1-D convolutions: see wideConv) and rounds once on
// store unless package compute documents otherwise. Work is
// split over goroutines by output element, and each output element is
// computed by one goroutine in a fixed order, so results are bit-identical for
// any GOMAXPROCS. The backend is safe for concurrent use.
package cpu

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"h3studio/engine/compute"
)

// Options configure a CPU backend. The zero value uses every CPU.
type Options struct {
	// Threads bounds the goroutines a kernel uses; 0 means GOMAXPROCS.
	Threads int
	// Oracles selects slower reference paths inside kernels.
	Oracles compute.Oracles
	// MemoryLimit makes Alloc fail with *compute.AllocError past this many
	// live bytes (0: no limit). Tests use it to exercise out-of-memory paths.
	MemoryLimit int64
}

// Backend is the CPU backend.
type Backend struct {
	opts       Options
	threads    int
	mem        compute.Memory
	maps       mappings
	dispatches atomic.Int64
	syncs      atomic.Int64
	flops      atomic.Uint64 // float64 bits are awkward; count in units of 1 FLOP
	watch      watches
}

var _ compute.Interruptible = (*Backend)(nil)

var _ compute.Backend = (*Backend)(nil)

// New returns a CPU backend.
func New(o Options) *Backend {
	t := o.Threads
	if t <= 0 {
		t = runtime.GOMAXPROCS(0)
	}
	return &Backend{opts: o, threads: t}
}

// Name returns "cpu".
func (b *Backend) Name() string { return "cpu" }

// Device describes the host.
func (b *Backend) Device() compute.DeviceInfo {
	return compute.DeviceInfo{
		Backend:       "cpu",
		Name:          fmt.Sprintf("CPU (%s/%s, %d threads)", runtime.GOOS, runtime.GOARCH, b.threads),
		MemoryBytes:   physicalMemory(),
		UnifiedMemory: true,
		Threads:       b.threads,
	}
}

// buffer is CPU storage: a page-aligned anonymous mapping (storage.go), an
// 8-byte-aligned Go slice or a view of host memory.
type buffer struct {
	b      *Backend
	data   []byte
	owned  bool // counted in live bytes
	mapped bool // data is a mapping, given back by Free
	freed  atomic.Bool
}

func (u *buffer) Backend() compute.Backend { return u.b }
func (u *buffer) Size() int64              { return int64(len(u.data)) }

// Alloc returns zeroed storage: storage of 1 MiB or more is an anonymous
// mapping that Free returns to the OS (OracleGoAlloc: the Go heap), smaller
// storage a Go slice.
func (b *Backend) Alloc(dt compute.DType, shape ...int) (*compute.Tensor, error) {
	s := compute.Shape(shape)
	n := compute.AllocBytes("cpu", dt, s)
	if lim := b.opts.MemoryLimit; lim > 0 && b.mem.Live()+n > lim {
		return nil, &compute.AllocError{Backend: "cpu", Bytes: n, Live: b.mem.Live(), Err: fmt.Errorf("memory limit %d bytes", lim)}
	}
	data, mapped := b.maps.alloc(n, b.opts.Oracles.Has(OracleGoAlloc))
	u := &buffer{b: b, data: data, owned: true, mapped: mapped}
	b.mem.Add(n, true)
	return compute.NewTensor(dt, s, u, 0), nil
}

// Wrap views host memory without copying when it is suitably aligned for the
// dtype; otherwise it copies into aligned storage.
func (b *Backend) Wrap(dt compute.DType, shape compute.Shape, host []byte) (*compute.Tensor, error) {
	n := int64(shape.NumElements()) * int64(dt.Size())
	if int64(len(host)) != n {
		return nil, fmt.Errorf("cpu: Wrap %v%v: %d bytes given, %d needed", dt, shape, len(host), n)
	}
	if n > 0 && uintptr(unsafe.Pointer(&host[0]))%uintptr(dt.Size()) != 0 {
		t, err := b.Alloc(dt, shape...)
		if err != nil {
			return nil, err
		}
		copy(bytesOf(t), host)
		return t, nil
	}
	b.mem.Add(n, false)
	return compute.NewTensor(dt, shape, &buffer{b: b, data: host}, 0), nil
}

// Upload copies little-endian bytes into dst.
func (b *Backend) Upload(dst *compute.Tensor, src []byte) error {
	if err := compute.CheckHostBytes("cpu", "Upload to", dst, len(src)); err != nil {
		return err
	}
	copy(bytesOf(dst), src)
	return nil
}

// Download copies src's bytes to dst.
func (b *Backend) Download(dst []byte, src *compute.Tensor) error {
	if err := compute.CheckHostBytes("cpu", "Download from", src, len(dst)); err != nil {
		return err
	}
	copy(dst, bytesOf(src))
	return nil
}

// Free releases storage made by Alloc or Wrap; a mapping goes back to the
// OS now. A tensor must not be used after Free: its kernels and Bytes panic.
func (b *Backend) Free(ts ...*compute.Tensor) {
	compute.FreeEach(ts, func(u *buffer) {
		if u.b == b && !u.freed.Swap(true) {
			b.mem.Remove(int64(len(u.data)), u.owned)
			if u.mapped {
				b.maps.release(u.data)
			}
		}
	})
}

// Sync returns ctx's error, if any: CPU kernels complete before returning.
func (b *Backend) Sync(ctx context.Context) error {
	b.syncs.Add(1)
	if ctx != nil {
		return ctx.Err()
	}
	return nil
}

// Stats reports the counters.
func (b *Backend) Stats() compute.Stats {
	s := b.mem.Stats()
	s.Dispatches = b.dispatches.Load()
	s.Submissions = b.syncs.Load()
	s.FLOPs = float64(b.flops.Load())
	return s
}

// ResetPeak sets the peaks to the storage now (compute.Memory.ResetPeak).
func (b *Backend) ResetPeak() { b.mem.ResetPeak() }

// Close unmaps the freed storage the backend still holds reserved. Storage
// not yet freed stays valid.
func (b *Backend) Close() error {
	b.maps.flush()
	return nil
}

func (b *Backend) dispatch(flops float64) {
	b.dispatches.Add(1)
	if flops > 0 {
		b.flops.Add(uint64(flops))
	}
}

// bytesOf returns the bytes of t's view. It panics for a foreign tensor.
func bytesOf(t *compute.Tensor) []byte {
	buf, off := t.Buffer()
	u, ok := buf.(*buffer)
	if !ok {
		panic(fmt.Sprintf("cpu: tensor %v does not belong to a CPU backend", t))
	}
	if u.freed.Load() {
		panic(fmt.Sprintf("cpu: tensor %v used after Free", t))
	}
	return u.data[off : off+t.Bytes()]
}

// Bytes returns the bytes of a CPU tensor's view, for packages that read or
// fill CPU tensors directly (tests, host-side preparation). It panics for a
// tensor of another backend.
func Bytes(t *compute.Tensor) []byte { return bytesOf(t) }

// Float32s returns the elements of an F32 CPU tensor as a slice sharing its
// storage. It panics for other dtypes.
func Float32s(t *compute.Tensor) []float32 {
	return view[float32](t, "Float32s", t.DType() == compute.F32)
}

// Uint16s returns the raw elements of a BF16 or F16 CPU tensor.
func Uint16s(t *compute.Tensor) []uint16 {
	return view[uint16](t, "Uint16s", t.DType() == compute.BF16 || t.DType() == compute.F16)
}

// view is t's bytes as elements of type E, sharing its storage (nil for an
// empty tensor); it panics, naming what, unless ok (t's dtype fits E).
func view[E any](t *compute.Tensor, what string, ok bool) []E {
	if !ok {
		panic(fmt.Sprintf("cpu: %s of %v", what, t))
	}
	b := bytesOf(t)
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*E)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(*new(E))))
}
