//go:build !unix

package cpu

// Without anonymous mappings every Alloc takes Go-heap storage.

func pageRound(n uintptr) uintptr { return n }

func mapRegion(uintptr) (region, bool) { return region{}, false }

func poisonRegion(region) bool { return false }

func unmapRegion(region) { panic("cpu: no mappings on this platform") }
