package metal

import (
	"fmt"
	"sort"
	"sync"
	"unsafe"
)

// HostRegions tracks the host mappings registered with Device.MapHost: each
// region (a checkpoint shard mapped as a whole) is covered by device buffers
// made without copying, and tensors inside it are bound by offset. A region
// longer than the device's largest buffer is covered by overlapping windows,
// so that any tensor no longer than the overlap lies wholly in one of them.
// It is safe for concurrent use.
type HostRegions struct {
	PageSize  int64 // the host's page size: windows start and end on pages
	MaxBuffer int64 // the device's largest buffer (Metal's maxBufferLength)
	// Wrap makes a device buffer viewing window (page-aligned, a whole
	// number of pages) without copying.
	Wrap func(window []byte) (Buffer, error)

	mu      sync.Mutex
	regions []hostRegion
}

type hostRegion struct {
	start, end uintptr // the registered bytes
	windows    []hostWindow
}

type hostWindow struct {
	start, end uintptr
	buf        Buffer
}

// Window is one planned device buffer over a region: bytes [Start, End)
// relative to the region's first page.
type Window struct{ Start, End int64 }

// PlanWindows covers n bytes starting on a page with windows of at most
// maxBuf bytes (page multiples), overlapping by half a window up to 1 GiB.
func PlanWindows(n, page, maxBuf int64) []Window {
	total := (n + page - 1) / page * page
	maxBuf = maxBuf / page * page
	if total <= maxBuf || maxBuf <= 0 {
		return []Window{{0, total}}
	}
	overlap := min(maxBuf/2, 1<<30) / page * page
	step := maxBuf - overlap
	var ws []Window
	for s := int64(0); ; s += step {
		e := min(s+maxBuf, total)
		ws = append(ws, Window{s, e})
		if e == total {
			return ws
		}
	}
}

// Add registers region; registering one twice is a no-op.
func (r *HostRegions) Add(region []byte) error {
	if len(region) == 0 {
		return nil
	}
	start := uintptr(unsafe.Pointer(&region[0]))
	if int64(start)%r.PageSize != 0 {
		return fmt.Errorf("metal: MapHost: region at %#x is not page-aligned (page %d bytes)", start, r.PageSize)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, g := range r.regions {
		if g.start == start && g.end == start+uintptr(len(region)) {
			return nil
		}
	}
	g := hostRegion{start: start, end: start + uintptr(len(region))}
	for _, w := range PlanWindows(int64(len(region)), r.PageSize, r.MaxBuffer) {
		// The mapping covers whole pages, so the last window may extend past
		// len(region) to the end of its page.
		view := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&region[0]), w.Start)), w.End-w.Start)
		buf, err := r.Wrap(view)
		if err != nil {
			for _, o := range g.windows {
				o.buf.Release()
			}
			return fmt.Errorf("metal: MapHost: %d-byte window at offset %d: %w", w.End-w.Start, w.Start, err)
		}
		g.windows = append(g.windows, hostWindow{start: start + uintptr(w.Start), end: start + uintptr(w.End), buf: buf})
	}
	r.regions = append(r.regions, g)
	sort.Slice(r.regions, func(i, j int) bool { return r.regions[i].start < r.regions[j].start })
	return nil
}

// Remove forgets region and releases its windows.
func (r *HostRegions) Remove(region []byte) {
	if len(region) == 0 {
		return
	}
	start := uintptr(unsafe.Pointer(&region[0]))
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, g := range r.regions {
		if g.start == start {
			for _, w := range g.windows {
				w.buf.Release()
			}
			r.regions = append(r.regions[:i], r.regions[i+1:]...)
			return
		}
	}
}

// Find returns the window holding all of host and host's offset in it.
func (r *HostRegions) Find(host []byte) (Buffer, int64, bool) {
	if len(host) == 0 {
		return nil, 0, false
	}
	s := uintptr(unsafe.Pointer(&host[0]))
	e := s + uintptr(len(host))
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, g := range r.regions {
		if s < g.start || e > g.end {
			continue
		}
		for _, w := range g.windows {
			if s >= w.start && e <= w.end {
				return w.buf, int64(s - w.start), true
			}
		}
	}
	return nil, 0, false
}

// Bytes counts the registered bytes.
func (r *HostRegions) Bytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for _, g := range r.regions {
		n += int64(g.end - g.start)
	}
	return n
}
