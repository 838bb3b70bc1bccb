package metal

import (
	"context"

	"h3studio/engine/compute"
)

// Device is a GPU as the op layer needs it: storage, and an ordered stream
// of dispatches of named kernels. The darwin implementation wraps an
// MTLDevice; package mslcpu provides one that runs the kernels on the CPU.
// Implementations are safe for use by one Backend (which serialises calls).
type Device interface {
	// Info describes the device (Backend "metal").
	Info() compute.DeviceInfo
	// NewBuffer returns size bytes of storage shared with the host.
	NewBuffer(size int64) (Buffer, error)
	// MapHost registers a page-aligned host region (a mapped checkpoint
	// shard) once, so that WrapHost can view ranges of it without copying.
	MapHost(region []byte) error
	// UnmapHost forgets a region registered with MapHost.
	UnmapHost(region []byte)
	// WrapHost returns the registered region holding host and the byte
	// offset of host in it; ok is false when no region holds it.
	WrapHost(host []byte) (buf Buffer, off int64, ok bool)
	// Encode records a dispatch after every dispatch recorded before it.
	Encode(d *Dispatch) error
	// Wait commits the recorded work and waits for all of it; it returns the
	// first device error (a failed command buffer) since the last Wait.
	Wait(ctx context.Context) error
	// Submissions counts command buffers committed.
	Submissions() int64
	// Close releases the device.
	Close() error
}

// DispatchBudget bounds the estimated work (Dispatch.Work: FLOPs plus bytes
// bound) of one dispatch and of one command buffer. macOS ends a command
// buffer that runs for more than a few seconds
// (kIOGPUCommandBufferCallbackErrorTimeout; the limit is undocumented,
// reports put it near 5 s); the budget is about 0.4 s at the peak of the
// slowest supported chip (M1, ≈ 2.6 TFLOPS fp32). Ops whose single dispatch
// would exceed it split along rows or query tiles.
const DispatchBudget = 1e12

// Buffer is device storage; contents are visible to the host (shared
// storage on unified memory).
type Buffer interface {
	// Bytes is the host view of the whole buffer.
	Bytes() []byte
	// Release frees the storage once pending GPU work no longer needs it.
	Release()
}

// Arg is one [[buffer(n)]] binding of a dispatch: a view of a buffer, or
// argument bytes (setBytes).
type Arg struct {
	Buf    Buffer
	Offset int64
	Size   int64 // bytes of the view
	Write  bool  // the kernel writes it
	Align  int   // element size: the view's alignment
	Bytes  []byte
	// Touched is how many bytes of the view the dispatch reads or writes,
	// when fewer than Size (one run of query tiles of a split attention);
	// 0 means Size. It only counts traffic (Stats, Dispatch.Work).
	Touched int64
}

// Dispatch is one kernel launch (dispatchThreadgroups).
type Dispatch struct {
	Kernel  string
	Args    []Arg  // Args[i] binds [[buffer(i)]]
	Groups  [3]int // threadgroups per grid
	Threads [3]int // threads per threadgroup
	TGMem   []int  // [[threadgroup(i)]] lengths in bytes
	// InPlace says that a written view may be the same view as a read one
	// (elementwise kernels read their element before writing it).
	InPlace bool
	// Work estimates the dispatch's cost (FLOPs counted by the op plus
	// bytes bound): devices cut command buffers by it.
	Work float64
}

// GEMM is a matrix product the device may run with a vendor library:
// dst[M, N] = x[M, K] · w[N, K]ᵀ (+ bias[N]).
type GEMM struct {
	M, N, K             int
	X, W, Bias, Dst     Arg
	XType, WType, DType compute.DType
	BiasType            compute.DType
}

// GEMMDevice is a Device with a library matrix product (MPSGraph on macOS).
type GEMMDevice interface {
	Device
	// EncodeGEMM records g in order with the dispatches (its work is
	// 2·M·N·K FLOPs); ok is false when
	// the library does not handle g's types (the caller uses a hand kernel).
	EncodeGEMM(g *GEMM) (ok bool, err error)
}

// AttentionHead is one head of softmax(q·kᵀ·Scale)·v without a mask: q and
// dst are [Sq, D] rows, k and v [Sk, D], one float type throughout.
type AttentionHead struct {
	Sq, Sk, D    int
	Q, K, V, Dst Arg
	DType        compute.DType
	Scale        float32
}

// AttentionDevice is a Device with a library attention (MPSGraph's
// scaled-dot-product attention, macOS 15).
type AttentionDevice interface {
	Device
	// EncodeAttention records a in order with the dispatches (its work is
	// 4·Sq·Sk·D FLOPs); ok is false when the library cannot run it (the
	// caller uses the hand kernel).
	EncodeAttention(a *AttentionHead) (ok bool, err error)
}
