//go:build linux

package mslcpu

import "unsafe"

func unsafeBytes(words []uint64, n int64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// overlapMem reports whether two byte slices share memory.
func overlapMem(a, b []byte) bool {
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}
