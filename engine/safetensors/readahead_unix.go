//go:build linux || darwin

package safetensors

import "golang.org/x/sys/unix"

// adviseWillNeed is replaced by tests to see the ranges advised.
var adviseWillNeed = func(b []byte) bool { return unix.Madvise(b, unix.MADV_WILLNEED) == nil }

// adviseDontNeed drops the pages of b (whole pages of a read-only shared
// file mapping) from the process: Linux unmaps them at once, so they leave
// the resident set, and a later touch reads them again from the file (or
// the page cache); macOS takes it as a hint and deactivates them. The
// mapping is read-only and file-backed, so no data can be lost. Replaced by
// tests to see the ranges released.
var adviseDontNeed = func(b []byte) bool { return unix.Madvise(b, unix.MADV_DONTNEED) == nil }
