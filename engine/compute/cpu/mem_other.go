//go:build !linux

package cpu

// physicalMemory is unknown here; the darwin build reports it through the
// Metal device instead.
func physicalMemory() int64 { return 0 }
