//go:build linux || darwin

package safetensors

import "golang.org/x/sys/unix"

// adviseWillNeed is replaced by tests to see the ranges advised.
var adviseWillNeed = func(b []byte) bool { return unix.Madvise(b, unix.MADV_WILLNEED) == nil }
