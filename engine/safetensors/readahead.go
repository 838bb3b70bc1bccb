package safetensors

import (
	"os"
	"strings"
	"unsafe"

	"h3studio/engine/compute"
)

// ReadAhead asks the operating system to start reading, from disk, the
// mapped bytes of every tensor under the binder's prefix, and returns at
// once (madvise MADV_WILLNEED over the pages that hold them). A streaming
// model calls it for the block it will run next while the current one
// computes, so the next block's weights come off the SSD during the
// current block instead of as page faults when its kernels first touch
// them. Tensors whose names (below the prefix) start with one of skip are
// left out (weights the caller will not bind). It returns the bytes
// advised (0 for sources that are not mapped files, or where the platform
// has no such advice).
func (w *Binder) ReadAhead(skip ...string) int64 {
	src, ok := w.src.(interface{ MappingOf(string) []byte })
	if !ok {
		return 0
	}
	var n int64
names:
	for _, name := range w.src.Names() {
		if !strings.HasPrefix(name, w.prefix) || len(src.MappingOf(name)) == 0 {
			continue
		}
		for _, s := range skip {
			if strings.HasPrefix(name[len(w.prefix):], s) {
				continue names
			}
		}
		data, err := w.src.Data(name)
		if err != nil || len(data) == 0 {
			continue
		}
		if adviseWillNeed(pageAligned(data)) {
			n += int64(len(data))
		}
	}
	return n
}

// Release drops from the process the mapped pages of the named tensors
// (names below the binder's prefix) once the caller no longer reads them:
// the AdaLN projections after the modulation tables exist, the token
// refiner after the text is refined, a streamed block after its forward,
// the stored bytes of a weight bound as a converted or quantized copy.
// Without it every page of a mapped checkpoint that was ever read stays in
// the resident set until the checkpoint is closed. Only the whole pages
// inside a tensor's bytes are released (madvise MADV_DONTNEED), so a
// neighbouring tensor sharing its first or last page keeps it; the mapping
// is read-only and file-backed, so a later read (binding the tensor again)
// pages it back in from the file. It returns the bytes released: 0 for
// names that are missing or not in a mapped file, on platforms without the
// advice, and on a backend that views mappings from a device
// (compute.HostMapper: Metal), whose no-copy buffers cover each shard whole
// for as long as it is mapped and may still have recorded GPU work reading
// these pages; there the pages stay (clean file pages, which macOS reclaims
// under pressure).
func (w *Binder) Release(names ...string) int64 {
	if _, device := w.b.(compute.HostMapper); device {
		return 0
	}
	src, ok := w.src.(interface{ MappingOf(string) []byte })
	if !ok {
		return 0
	}
	var n int64
	for _, name := range names {
		full := w.prefix + name
		if _, ok := w.src.Info(full); !ok || len(src.MappingOf(full)) == 0 {
			continue
		}
		data, err := w.src.Data(full)
		if err != nil {
			continue
		}
		n += releasePages(data)
	}
	return n
}

// Release drops from the process the mapped pages of the named tensors, as
// Binder.Release does, for a reader of the checkpoint that binds nothing
// (the quantized cache's builder reads every linear weight once). A file that
// a device views (a compute.HostMapper registered it) keeps its pages, as
// under Binder.Release. It returns the bytes released.
func (c *Checkpoint) Release(names ...string) int64 {
	var n int64
	for _, name := range names {
		f, ok := c.where[name]
		if !ok || len(f.MappingOf(name)) == 0 || f.deviceViewed() {
			continue
		}
		if data, err := f.Data(name); err == nil {
			n += releasePages(data)
		}
	}
	return n
}

// releasePages drops the whole pages inside data (a tensor's bytes in a
// read-only file mapping) from the process and returns how many bytes.
func releasePages(data []byte) int64 {
	if inner := wholePages(data); len(inner) > 0 && adviseDontNeed(inner) {
		return int64(len(inner))
	}
	return 0
}

// Free frees bound weights (nil entries skipped) and drops the mapped pages
// they were bound from (Release, by their full names), so that a weight the
// caller no longer holds stops occupying memory in both ways: an AdaLN
// projection once the tables exist, a streamed block after its use. It
// returns the bytes of pages released.
func (w *Binder) Free(ts ...*compute.Tensor) int64 {
	live := make([]*compute.Tensor, 0, len(ts))
	var names []string
	for _, t := range ts {
		if t == nil {
			continue
		}
		live = append(live, t)
		if t.Name() != "" {
			names = append(names, strings.TrimPrefix(t.Name(), w.prefix))
		}
	}
	w.b.Free(live...)
	return w.Release(names...)
}

// wholePages is the part of b (inside a page-aligned mapping) made of
// whole pages: b's start rounded up and its end rounded down to pages.
func wholePages(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	ps := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&b[0]))
	first := (start + ps - 1) / ps * ps
	last := (start + uintptr(len(b))) / ps * ps
	if last <= first {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&b[0]), int(first-start))), int(last-first))
}

// pageAligned extends b (inside a page-aligned mapping) back to the start
// of its first page, as madvise requires.
func pageAligned(b []byte) []byte {
	ps := uintptr(os.Getpagesize())
	off := uintptr(unsafe.Pointer(&b[0])) % ps
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&b[0]), -int(off))), len(b)+int(off))
}
