// Package metal is H3 Studio's Metal backend: compute.Backend on Apple GPUs.
//
// The package has two halves. The op layer (untagged: backend.go, ops_*.go,
// kargs.go) implements every compute.Kernels operation by encoding dispatches
// of the hand kernels in shaders/ — choosing the kernel by name
// (kernel_<op>[_<fused>]_<in>_<out>[_<variant>]), filling its argument struct
// (kargs.go mirrors shaders/kargs.h) and sizing the grid — against a small
// Device interface that sees buffers and pipelines as opaque handles. The
// device half is platform code: on macOS (device_darwin.go, over darwin/mtl)
// it is a real MTLDevice with a command queue, a pipeline cache by kernel
// name, zero-copy buffers over mapped checkpoint shards and an MPSGraph fast
// path for large matrix products; on Linux the tests drive the same op layer
// through package mslcpu, which executes the MSL kernels on the CPU. So every
// line that decides what the GPU runs is exercised by the conformance suite
// (package computetest) on Linux; only the Objective-C calls of the darwin
// device are not, and they are type-checked for darwin/arm64.
//
// Status: written, type-checked and CPU-emulated; never run on a Mac.
package metal
