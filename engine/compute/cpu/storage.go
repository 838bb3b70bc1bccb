package cpu

import (
	"sync"
	"unsafe"

	"h3studio/engine/compute"
)

// OracleGoAlloc selects Go-heap storage for every Alloc, the portable path
// (and the only one off unix): the storage is then freed by the garbage
// collector some time after Free, not at Free.
var OracleGoAlloc = compute.RegisterOracle("cpu-go-alloc",
	"CPU Alloc from the Go heap at every size instead of anonymous mappings for storage of 1 MiB or more")

// mapThreshold is the smallest storage Alloc takes from the OS as an
// anonymous mapping (where the platform has them; storage.go's unix half)
// instead of the Go heap. Freeing such storage returns it to the OS at
// once, so the process's anonymous memory follows the ledger (compute.Memory)
// instead of the garbage collector's pacing; smaller storage (biases,
// norms, small activations) stays on the heap, where a mapping per tensor
// would cost more in system calls and page-table entries than it saves.
const mapThreshold = 1 << 20

// quarantineLen is how many freed mappings a backend keeps reserved and
// inaccessible before unmapping them: a slice of freed storage used after
// Free then faults instead of reading or corrupting a later allocation that
// the OS placed at the same address. It bounds the extra mappings (and the
// reserved, never resident, address space) a backend holds.
const quarantineLen = 64

// goStorage is zeroed, 8-byte-aligned storage of n bytes from the Go heap.
func goStorage(n int64) []byte {
	words := make([]uint64, (n+7)/8)
	if len(words) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// mappings is a backend's anonymous-mapping allocator: storage of
// mapThreshold bytes or more comes from mapStorage and goes back through
// release, which poisons it (inaccessible, its pages returned) and unmaps
// the oldest poisoned region once quarantineLen are held.
type mappings struct {
	mu         sync.Mutex
	quarantine []region // oldest first
}

// region is one mapping: its address and its length rounded to pages.
type region struct {
	addr unsafe.Pointer
	size uintptr
}

// alloc returns zeroed storage of n bytes, page-aligned, and whether it is
// a mapping (to be given back with release); it falls back to the Go heap
// below mapThreshold, when goHeap is set, where mappings are unavailable,
// or when the OS refuses one.
func (m *mappings) alloc(n int64, goHeap bool) (data []byte, mapped bool) {
	if n >= mapThreshold && !goHeap {
		if r, ok := mapRegion(uintptr(n)); ok {
			return unsafe.Slice((*byte)(r.addr), n), true
		}
	}
	return goStorage(n), false
}

// release gives back a mapping made by alloc: its pages go back to the OS
// now, its addresses stay reserved and inaccessible while it is in the
// quarantine.
func (m *mappings) release(data []byte) {
	r := region{addr: unsafe.Pointer(unsafe.SliceData(data)), size: pageRound(uintptr(len(data)))}
	if !poisonRegion(r) {
		unmapRegion(r)
		return
	}
	m.mu.Lock()
	var old region
	if len(m.quarantine) == quarantineLen {
		old = m.quarantine[0]
		m.quarantine = append(m.quarantine[:0], m.quarantine[1:]...)
	}
	m.quarantine = append(m.quarantine, r)
	m.mu.Unlock()
	if old.addr != nil {
		unmapRegion(old)
	}
}

// flush unmaps every quarantined region.
func (m *mappings) flush() {
	m.mu.Lock()
	q := m.quarantine
	m.quarantine = nil
	m.mu.Unlock()
	for _, r := range q {
		unmapRegion(r)
	}
}
