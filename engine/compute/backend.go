package compute

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Backend owns device memory and executes kernels. Kernels are recorded in
// call order and may run asynchronously (Metal encodes them into command
// buffers); the host may read results only after Sync returns nil. The CPU
// backend runs each kernel before returning. A Backend is safe for concurrent
// use by one model at a time: kernels from two goroutines interleave
// unpredictably.
type Backend interface {
	Kernels

	// Name is "cpu", "metal" or "meta".
	Name() string
	// Device describes the processor and its memory.
	Device() DeviceInfo

	// Alloc returns a new tensor with unspecified contents. It fails with an
	// *AllocError when the device is out of memory.
	Alloc(dt DType, shape ...int) (*Tensor, error)
	// Wrap returns a tensor viewing host memory without copying when the
	// device allows it (the CPU backend always, Metal when the range lies in
	// a page-aligned mapping registered with Map). Otherwise it copies. The
	// caller keeps host alive as long as the tensor is used.
	Wrap(dt DType, shape Shape, host []byte) (*Tensor, error)
	// Upload copies host bytes (little-endian, in dst's dtype) into dst.
	Upload(dst *Tensor, src []byte) error
	// Download copies dst's bytes to host memory. It waits for pending work.
	Download(dst []byte, src *Tensor) error
	// Free releases tensors made by Alloc or Wrap. Views share storage with
	// their parent and are freed with it. Freeing is optional on the CPU
	// backend (the garbage collector reclaims storage) but keeps Stats honest.
	Free(ts ...*Tensor)

	// Sync waits for every recorded kernel and reports device faults. It
	// returns ctx.Err() if ctx is done before the work completes (the work
	// itself is not interrupted).
	Sync(ctx context.Context) error
	// Stats reports storage and dispatch counters.
	Stats() Stats
	// ResetPeak sets the peak-storage counters to the current storage:
	// PeakBytes to the live storage, FootprintPeakBytes to the live and
	// mapped storage.
	ResetPeak()
	// Close releases the device.
	Close() error
}

// DeviceInfo describes the compute device.
type DeviceInfo struct {
	Backend string // "cpu", "metal", "meta"
	Name    string // e.g. "Apple M3 Max" or "CPU (16 threads)"
	// MemoryBytes is the physical memory the device can address.
	MemoryBytes int64
	// WorkingSetBytes is the recommended maximum working set (Metal's
	// recommendedMaxWorkingSetSize); 0 when unknown.
	WorkingSetBytes int64
	// UnifiedMemory is true when host and device share memory.
	UnifiedMemory bool
	// Threads is the number of CPU threads kernels use (CPU backend).
	Threads int
	// Family is the GPU family, e.g. "apple9" (Metal only).
	Family string
}

// Stats are a backend's counters.
type Stats struct {
	LiveBytes   int64 // storage currently allocated (Alloc + copying Wrap)
	PeakBytes   int64 // maximum of LiveBytes since creation or ResetPeak
	MappedBytes int64 // zero-copy views of host memory (Wrap without copy)
	// FootprintPeakBytes is the maximum of LiveBytes + MappedBytes since
	// creation or ResetPeak (0 where the backend does not track it): the weights a
	// checkpoint maps count in memory too.
	FootprintPeakBytes int64
	Dispatches         int64 // kernels recorded
	Submissions        int64 // command buffers committed (Metal) or Syncs
	CPUFallbacks       int64 // kernels a device backend ran on the CPU reference
	FLOPs              float64
	BytesMoved         float64 // bytes read and written by kernels (estimate)
	// DeviceTime is the time the device spent executing kernels, for the
	// work completed so far (read it after Sync): on Metal the sum of
	// GPUEndTime − GPUStartTime of the command buffers, on the emulated
	// Metal device the time in its kernel runtime. 0 where it is not
	// measured: the CPU backend runs kernels synchronously on the calling
	// goroutine, so there the wall time of the work is its device time.
	DeviceTime time.Duration
}

// Memory counts a backend's storage for Stats: live bytes (owned: Alloc, a
// copying Wrap) and their peak, mapped bytes (zero-copy Wrap) and the peak
// of live plus mapped. Safe for concurrent use.
type Memory struct {
	live, peak, mapped, footprint atomic.Int64
}

// Add counts n bytes of new storage, owned or mapped.
func (m *Memory) Add(n int64, owned bool) {
	if owned {
		raise(&m.peak, m.live.Add(n))
	} else {
		m.mapped.Add(n)
	}
	raise(&m.footprint, m.live.Load()+m.mapped.Load())
}

// Remove forgets n bytes of freed storage, owned or mapped.
func (m *Memory) Remove(n int64, owned bool) {
	if owned {
		m.live.Add(-n)
	} else {
		m.mapped.Add(-n)
	}
}

// Live is the owned storage now.
func (m *Memory) Live() int64 { return m.live.Load() }

// Mapped is the mapped storage now.
func (m *Memory) Mapped() int64 { return m.mapped.Load() }

// ResetPeak sets the peak to the live storage and the footprint peak to
// the live and mapped storage.
func (m *Memory) ResetPeak() {
	m.peak.Store(m.live.Load())
	m.footprint.Store(m.live.Load() + m.mapped.Load())
}

// Stats are the storage counters (LiveBytes, PeakBytes, MappedBytes,
// FootprintPeakBytes), the other fields zero.
func (m *Memory) Stats() Stats {
	return Stats{LiveBytes: m.live.Load(), PeakBytes: m.peak.Load(), MappedBytes: m.mapped.Load(), FootprintPeakBytes: m.footprint.Load()}
}

// raise lifts the maximum p to v.
func raise(p *atomic.Int64, v int64) {
	for {
		old := p.Load()
		if v <= old || p.CompareAndSwap(old, v) {
			return
		}
	}
}

// FootprintPeak is the peak of everything the backend holds, allocated
// and mapped (FootprintPeakBytes), or PeakBytes where the footprint is not
// tracked: the storage a memory plan predicts (on unified memory a mapped
// weight occupies memory like an allocated one).
func (s Stats) FootprintPeak() int64 { return max(s.PeakBytes, s.FootprintPeakBytes) }

// AllocBytes is the size of storage for dt and shape, as a backend's Alloc
// (named by backend) computes it; it panics for a negative dimension.
func AllocBytes(backend string, dt DType, shape Shape) int64 {
	for _, d := range shape {
		if d < 0 {
			panic(fmt.Sprintf("%s: Alloc %v%v: negative dimension", backend, dt, shape))
		}
	}
	return int64(shape.NumElements()) * int64(dt.Size())
}

// CheckHostBytes is the error of a backend's Upload or Download (op: "Upload
// to", "Download from") when the n host bytes do not match t's size.
func CheckHostBytes(backend, op string, t *Tensor, n int) error {
	if int64(n) != t.Bytes() {
		return fmt.Errorf("%s: %s %v: %d bytes given, %d needed", backend, op, t, n, t.Bytes())
	}
	return nil
}

// FreeEach calls free with the storage of each of ts (nil ones skipped)
// held in a B: a backend's Free, which decides whether that storage is its
// own and not yet freed.
func FreeEach[B Buffer](ts []*Tensor, free func(B)) {
	for _, t := range ts {
		if t == nil {
			continue
		}
		buf, _ := t.Buffer()
		if u, ok := buf.(B); ok {
			free(u)
		}
	}
}

// AllocError reports that a device could not provide storage.
type AllocError struct {
	Backend string
	Bytes   int64
	Live    int64
	Err     error
}

func (e *AllocError) Error() string {
	return fmt.Sprintf("compute: %s: cannot allocate %d bytes (%d live): %v", e.Backend, e.Bytes, e.Live, e.Err)
}

func (e *AllocError) Unwrap() error { return e.Err }

// ErrNotImplemented is returned (or wrapped) by a backend lacking an operation.
var ErrNotImplemented = errors.New("compute: not implemented")

// MustAlloc allocates or panics with the *AllocError. Model code uses it (via
// its scratch helpers) and converts the panic back to an error at its entry
// point with Recover.
func MustAlloc(b Backend, dt DType, shape ...int) *Tensor {
	t, err := b.Alloc(dt, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// failure carries an error out of deep model code to the entry point's
// Recover.
type failure struct{ err error }

// Try panics with err, when it is set, for the entry point's Recover to
// return (an upload or download fault deep in model code).
func Try(err error) {
	if err != nil {
		panic(failure{err})
	}
}

// Recover converts a panic carrying an error that model code may raise on
// purpose (Try's, an *AllocError, a cancellation) into *err. Other
// panics — bugs, such as shape mismatches — propagate. Use as
// `defer compute.Recover(&err)`.
func Recover(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if f, ok := r.(failure); ok {
		*err = f.err
		return
	}
	var ae *AllocError
	if e, ok := r.(error); ok && (errors.As(e, &ae) || errors.Is(e, context.Canceled) || errors.Is(e, context.DeadlineExceeded)) {
		*err = e
		return
	}
	panic(r)
}
