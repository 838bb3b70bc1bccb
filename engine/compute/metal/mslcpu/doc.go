// Package mslcpu runs Metal Shading Language compute kernels on the CPU, so
// that H3 Studio's shaders are executed and checked on Linux, where there is
// no Metal. It is test machinery: the Metal backend never uses it.
//
// A .metal file is preprocessed by clang (with empty <metal_*> headers),
// translated by a line-preserving token rewriter (translate.go) and compiled
// as C++17 by clang ≥ 17 against a shim header standing in for
// <metal_stdlib> (cxx/msl_shim.h), then linked with a small runtime
// (cxx/mslrt.cpp) into one executable per file. Each launch runs in its own
// process: every GPU thread is a fiber, one OS thread runs one threadgroup at a
// time, and barriers and simdgroup operations (reductions, shuffles, 8×8
// simdgroup matrices) are rendezvous points of a scheduler.
//
// Every launch is checked: it runs under two thread schedules (index order and
// reverse order, optionally shuffled) whose results must agree bit for bit
// (data races, missing barriers); buffers end flush against PROT_NONE guard
// pages and read-only bindings are mapped read-only (out-of-bounds and stray
// writes); threadgroup memory starts filled with 0xFF bytes (reads before
// writes give NaN); barriers reached by part of a group, divergent barriers
// or simd operations, deadlocks and endless loops (a watchdog) are errors
// naming the .metal line.
//
// Limits: it cannot prove that Apple's compiler accepts a kernel (address
// spaces are erased here), and results match a GPU to rounding, not bit for
// bit, where the GPU's own order of operations differs (simd_sum, matrix
// multiply). The package builds on Linux only (//go:build linux).
package mslcpu
