//go:build unix

package cpu

import (
	"os"

	"golang.org/x/sys/unix"
)

var pageSize = uintptr(os.Getpagesize())

func pageRound(n uintptr) uintptr { return (n + pageSize - 1) &^ (pageSize - 1) }

// mapRegion maps n bytes (rounded up to pages) of private anonymous,
// zero-filled memory.
func mapRegion(n uintptr) (region, bool) {
	size := pageRound(n)
	p, err := unix.MmapPtr(-1, 0, nil, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return region{}, false
	}
	return region{addr: p, size: size}, true
}

// poisonRegion replaces r with an inaccessible mapping in place: the old
// pages are dropped (the RSS they held returns to the OS at once, on Linux
// and on darwin alike) and any later access faults.
func poisonRegion(r region) bool {
	p, err := unix.MmapPtr(-1, 0, r.addr, r.size, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_FIXED|unix.MAP_NORESERVE)
	return err == nil && p == r.addr
}

// unmapRegion unmaps r; it panics if the OS refuses, which means r was not
// a mapping of this allocator (memory corruption in the ledger).
func unmapRegion(r region) {
	if err := unix.MunmapPtr(r.addr, r.size); err != nil {
		panic("cpu: munmap of freed storage: " + err.Error())
	}
}
