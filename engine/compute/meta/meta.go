// Package meta is a compute.Backend that computes nothing: it tracks the
// storage model code allocates and accounts the work its kernels would do.
// Running a model's Load and Forward on it (with a data-less weight source)
// is a shape-only pass over the same code that runs for real, which is how
// `h3studio plan` predicts memory and work without any weights.
//
// Storage is counted in two categories: weights (tensors allocated or
// wrapped through the view Weights returns, which is the backend model
// binders should be given) and activations (everything else). Each kernel
// adds its floating-point operations, the bytes of its operands
// (read), the bytes of its destination (written), and separately the bytes
// of weight operands it reads. Data never exists: Upload discards, Download
// returns zeros, so values a model derives from its data (gate scores, say)
// are meaningless here, while shapes, counts and storage are exact.
//
// The kernels check shapes like the CPU reference does (the checks that
// matter for planning: matrix and attention shapes, element counts), so a
// plan also catches shape bugs.
package meta

import (
	"context"
	"fmt"
	"sync"

	"h3studio/engine/compute"
)

// Backend is the planning backend. It is safe for concurrent use.
type Backend struct {
	mu    sync.Mutex
	u     Usage
	epoch int64 // read epoch for DistinctWeightBytes
}

// Usage is what a Backend has tracked.
type Usage struct {
	// Live and peak storage in bytes: weights, activations and their sum.
	// PeakTotal is the peak of the sum (not the sum of the peaks), and
	// WeightsAtPeak the weight share at that moment.
	LiveWeights, LiveActivations int64
	PeakWeights, PeakActivations int64
	PeakTotal, WeightsAtPeak     int64
	// MappedBytes are zero-copy views (Wrap).
	MappedBytes int64

	Dispatches      int64
	FLOPs           float64
	BytesRead       float64 // operand bytes read by kernels
	BytesWritten    float64 // destination bytes written by kernels
	WeightBytesRead float64 // of BytesRead, bytes of weight tensors
	// DistinctWeightBytes counts every weight buffer read since the last
	// MarkReads once, however often it was read (a chunked kernel re-reads
	// its weights; this is the checkpoint bytes one forward touches).
	DistinctWeightBytes float64
}

// Sub returns u − v for the cumulative counters (dispatches, FLOPs, bytes),
// e.g. the work of one forward; storage fields are u's.
func (u Usage) Sub(v Usage) Usage {
	u.Dispatches -= v.Dispatches
	u.DistinctWeightBytes -= v.DistinctWeightBytes
	u.FLOPs -= v.FLOPs
	u.BytesRead -= v.BytesRead
	u.BytesWritten -= v.BytesWritten
	u.WeightBytesRead -= v.WeightBytesRead
	return u
}

var _ compute.Backend = (*Backend)(nil)

// New returns an empty planning backend.
func New() *Backend { return &Backend{} }

type buffer struct {
	b      *Backend
	size   int64
	weight bool
	mapped bool
	freed  bool
	epoch  int64 // last read epoch + 1 (0: never read)
}

func (u *buffer) Backend() compute.Backend { return u.b }
func (u *buffer) Size() int64              { return u.size }

// Name returns "meta".
func (b *Backend) Name() string { return "meta" }

// Device describes no device.
func (b *Backend) Device() compute.DeviceInfo {
	return compute.DeviceInfo{Backend: "meta", Name: "planning (no device)", UnifiedMemory: true}
}

func (b *Backend) alloc(dt compute.DType, shape compute.Shape, weight, mapped bool) *compute.Tensor {
	n := compute.AllocBytes("meta", dt, shape)
	u := &buffer{b: b, size: n, weight: weight, mapped: mapped}
	b.mu.Lock()
	defer b.mu.Unlock()
	if mapped {
		b.u.MappedBytes += n
	} else {
		b.addLive(n, weight)
	}
	return compute.NewTensor(dt, shape, u, 0)
}

// addLive adjusts live storage (mu held).
func (b *Backend) addLive(n int64, weight bool) {
	u := &b.u
	if weight {
		u.LiveWeights += n
		u.PeakWeights = max(u.PeakWeights, u.LiveWeights)
	} else {
		u.LiveActivations += n
		u.PeakActivations = max(u.PeakActivations, u.LiveActivations)
	}
	if t := u.LiveWeights + u.LiveActivations; t > u.PeakTotal {
		u.PeakTotal, u.WeightsAtPeak = t, u.LiveWeights
	}
}

// Alloc returns a data-less activation tensor.
func (b *Backend) Alloc(dt compute.DType, shape ...int) (*compute.Tensor, error) {
	return b.alloc(dt, compute.Shape(shape), false, false), nil
}

// Wrap returns a data-less tensor counted as mapped storage.
func (b *Backend) Wrap(dt compute.DType, shape compute.Shape, host []byte) (*compute.Tensor, error) {
	if int64(len(host)) != int64(shape.NumElements())*int64(dt.Size()) {
		return nil, fmt.Errorf("meta: Wrap %v%v: %d bytes given", dt, shape, len(host))
	}
	return b.alloc(dt, shape, false, true), nil
}

// Upload checks the size and discards the data.
func (b *Backend) Upload(dst *compute.Tensor, src []byte) error {
	if int64(len(src)) != dst.Bytes() {
		return fmt.Errorf("meta: Upload to %v: %d bytes given, %d needed", dst, len(src), dst.Bytes())
	}
	return nil
}

// Download writes zeros.
func (b *Backend) Download(dst []byte, src *compute.Tensor) error {
	if int64(len(dst)) != src.Bytes() {
		return fmt.Errorf("meta: Download from %v: %d bytes given, %d needed", src, len(dst), src.Bytes())
	}
	clear(dst)
	return nil
}

// Free releases tracked storage; freeing twice is harmless.
func (b *Backend) Free(ts ...*compute.Tensor) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range ts {
		if t == nil {
			continue
		}
		buf, _ := t.Buffer()
		u, ok := buf.(*buffer)
		if !ok || u.b != b || u.freed {
			continue
		}
		u.freed = true
		if u.mapped {
			b.u.MappedBytes -= u.size
			continue
		}
		if u.weight {
			b.u.LiveWeights -= u.size
		} else {
			b.u.LiveActivations -= u.size
		}
	}
}

// Sync returns ctx's error.
func (b *Backend) Sync(ctx context.Context) error {
	if ctx != nil {
		return ctx.Err()
	}
	return nil
}

// Stats reports the counters in compute's form.
func (b *Backend) Stats() compute.Stats {
	u := b.Usage()
	return compute.Stats{
		LiveBytes: u.LiveWeights + u.LiveActivations, PeakBytes: u.PeakTotal, MappedBytes: u.MappedBytes,
		Dispatches: u.Dispatches, FLOPs: u.FLOPs, BytesMoved: u.BytesRead + u.BytesWritten,
	}
}

// Usage returns the detailed counters.
func (b *Backend) Usage() Usage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.u
}

// ResetPeak sets every peak to the current live storage.
func (b *Backend) ResetPeak() {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := &b.u
	u.PeakWeights, u.PeakActivations = u.LiveWeights, u.LiveActivations
	u.PeakTotal, u.WeightsAtPeak = u.LiveWeights+u.LiveActivations, u.LiveWeights
}

// MarkReads starts a new read epoch: weight buffers read after it count
// again in DistinctWeightBytes.
func (b *Backend) MarkReads() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.epoch++
}

// Close does nothing.
func (b *Backend) Close() error { return nil }

// Weights returns the view of b that allocates weight storage: give it to
// a safetensors.Binder so bound weights count as weights. Its tensors belong
// to b (kernels on b accept them).
func (b *Backend) Weights() compute.Backend { return weightView{b} }

type weightView struct{ *Backend }

func (w weightView) Alloc(dt compute.DType, shape ...int) (*compute.Tensor, error) {
	return w.alloc(dt, compute.Shape(shape), true, false), nil
}

func (w weightView) Wrap(dt compute.DType, shape compute.Shape, host []byte) (*compute.Tensor, error) {
	if int64(len(host)) != int64(shape.NumElements())*int64(dt.Size()) {
		return nil, fmt.Errorf("meta: Wrap %v%v: %d bytes given", dt, shape, len(host))
	}
	return w.alloc(dt, shape, true, false), nil
}

// op accounts one kernel.
func (b *Backend) op(flops float64, dst *compute.Tensor, srcs ...*compute.Tensor) {
	b.opN(flops, []*compute.Tensor{dst}, srcs...)
}

// opN accounts one kernel with several destinations.
func (b *Backend) opN(flops float64, dsts []*compute.Tensor, srcs ...*compute.Tensor) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := &b.u
	u.Dispatches++
	u.FLOPs += flops
	for _, dst := range dsts {
		if dst != nil {
			u.BytesWritten += float64(dst.Bytes())
		}
	}
	for _, s := range srcs {
		if s == nil {
			continue
		}
		n := float64(s.Bytes())
		u.BytesRead += n
		if buf, _ := s.Buffer(); buf != nil {
			if bb, ok := buf.(*buffer); ok && bb.weight {
				u.WeightBytesRead += n
				if bb.epoch != b.epoch+1 {
					bb.epoch = b.epoch + 1
					u.DistinctWeightBytes += float64(bb.size)
				}
			}
		}
	}
}

func own(b *Backend, op string, ts ...*compute.Tensor) {
	for _, t := range ts {
		if t == nil {
			continue
		}
		buf, _ := t.Buffer()
		u, ok := buf.(*buffer)
		compute.Check(ok && u.b == b, op, "tensor %v does not belong to this meta backend", t)
		compute.Check(!u.freed, op, "tensor %v was freed", t)
	}
}
