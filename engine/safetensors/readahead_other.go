//go:build !(linux || darwin)

package safetensors

// adviseWillNeed: no read-ahead advice on this platform (the files may not
// even be mapped: mmap_other.go reads them).
var adviseWillNeed = func([]byte) bool { return false }
