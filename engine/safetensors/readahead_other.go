//go:build !(linux || darwin)

package safetensors

// adviseWillNeed: no read-ahead advice on this platform (the files may not
// even be mapped: mmap_other.go reads them).
var adviseWillNeed = func([]byte) bool { return false }

// adviseDontNeed: no release either; a file read into memory stays there
// until the checkpoint is closed.
var adviseDontNeed = func([]byte) bool { return false }
