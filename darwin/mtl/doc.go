// Package mtl is H3 Studio's Metal device layer: Go types over darwinkit
// v0.5.0 (github.com/progrium/darwinkit) for what the Metal backend needs —
// device selection and facts (name, GPU family, unified memory, recommended
// working set, largest buffer), shared-storage buffers and zero-copy buffers
// over mapped files, libraries compiled at run time from source with fast
// math off, a compute-pipeline cache by kernel name, command queues, command
// buffers with completion status and GPU timing, compute encoders, residency
// sets (macOS 15) and an MPSGraph matrix product for large GEMMs.
//
// darwinkit binds Objective-C classes but no C functions, and some of its
// wrappers are unusable as generated; each gap is wrapped once here:
// MTLCreateSystemDefaultDevice/MTLCopyAllDevices come from a small cgo shim
// (shim_darwin.go); endEncoding needs the MTLCommandEncoder view of an encoder
// (protocol types do not inherit); newBufferWithBytesNoCopy with no
// deallocator, MTLResidencySet and every MPSGraph call taking shapes or
// dictionaries are raw objc.Call message sends (the generated wrappers pass
// Go pointers to Objective-C). No darwinkit or objc type appears in this
// package's exported API, and every exported call runs in its own
// autorelease pool.
//
// Everything here is macOS-only (//go:build darwin) except this file and
// errors.go. Status: written and type-checked for darwin/arm64, never run on
// a Mac.
package mtl
