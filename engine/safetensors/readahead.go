package safetensors

import (
	"os"
	"strings"
	"unsafe"
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

// pageAligned extends b (inside a page-aligned mapping) back to the start
// of its first page, as madvise requires.
func pageAligned(b []byte) []byte {
	ps := uintptr(os.Getpagesize())
	off := uintptr(unsafe.Pointer(&b[0])) % ps
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&b[0]), -int(off))), len(b)+int(off))
}
