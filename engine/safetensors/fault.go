package safetensors

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"unsafe"
)

// A mapped weight file can change under a run: an external disk drops out,
// or a tool truncates or rewrites a shard. Reading its pages then raises a
// memory fault (SIGBUS), which would end the process. The engine's entry
// points run with debug.SetPanicOnFault, so such a fault becomes a panic on
// the reading goroutine; worker goroutines forward their panics to the
// goroutine that started them (ForwardPanic), and CatchFault turns a fault
// inside a mapping registered here into a *FaultError naming the file.

// mappings is the registry of live mappings, by base address.
var mappings struct {
	sync.Mutex
	m map[uintptr]mapping
}

type mapping struct {
	size uintptr
	path string
}

func registerMapping(path string, data []byte) {
	if len(data) == 0 {
		return
	}
	mappings.Lock()
	defer mappings.Unlock()
	if mappings.m == nil {
		mappings.m = map[uintptr]mapping{}
	}
	mappings.m[baseOf(data)] = mapping{size: uintptr(len(data)), path: path}
}

func unregisterMapping(data []byte) {
	if len(data) == 0 {
		return
	}
	mappings.Lock()
	delete(mappings.m, baseOf(data))
	mappings.Unlock()
}

// MappedFileAt returns the weight file whose mapping holds addr.
func MappedFileAt(addr uintptr) (string, bool) {
	mappings.Lock()
	defer mappings.Unlock()
	bases := make([]uintptr, 0, len(mappings.m))
	for b := range mappings.m {
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	i := sort.Search(len(bases), func(i int) bool { return bases[i] > addr }) - 1
	if i < 0 {
		return "", false
	}
	m := mappings.m[bases[i]]
	if addr-bases[i] >= m.size {
		return "", false
	}
	return m.path, true
}

// FaultError is a read of a mapped weight file that failed because the file
// changed or became unreadable while it was in use.
type FaultError struct {
	Path string
	Addr uintptr
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("safetensors: %s: the weight file changed or became unreadable while it was in use "+
		"(was it truncated or rewritten, or its disk disconnected?); nothing was written", e.Path)
}

// faultAddr is implemented by the runtime's panic value for a memory fault
// under debug.SetPanicOnFault.
type faultAddr interface {
	runtime.Error
	Addr() uintptr
}

// FaultFrom returns the *FaultError for a recovered panic value r when r is
// a memory fault inside a mapped weight file, or a *FaultError forwarded by
// ForwardPanic; otherwise nil.
func FaultFrom(r any) *FaultError {
	switch v := r.(type) {
	case *FaultError:
		return v
	case faultAddr:
		if p, ok := MappedFileAt(v.Addr()); ok {
			return &FaultError{Path: p, Addr: v.Addr()}
		}
	}
	return nil
}

// CatchFaults makes memory faults on the calling goroutine panic instead of
// ending the process (debug.SetPanicOnFault). Use it at an entry point that
// reads mapped weights:
//
//	defer safetensors.CatchFaults()(&err)
//
// The returned function, deferred, restores the setting and turns a fault
// inside a mapped weight file into a *FaultError in *err; any other panic
// continues.
func CatchFaults() func(*error) {
	prev := debug.SetPanicOnFault(true)
	return func(err *error) {
		debug.SetPanicOnFault(prev)
		r := recover()
		if r == nil {
			return
		}
		if fe := FaultFrom(r); fe != nil {
			*err = fe
			return
		}
		panic(r)
	}
}

// ForwardPanic is for worker goroutines that may read mapped weights. Call
// it on the parent goroutine; in each worker run
//
//	defer fwd.Recover()
//	fwd.Start()
//
// and after the workers have finished call fwd.Repanic() on the parent: a
// panic in a worker (a fault on a mapped weight or anything else) is raised
// again there, where the entry point's CatchFaults can handle it, instead of
// ending the process from a goroutine nobody recovers.
type ForwardPanic struct {
	onFault bool
	mu      sync.Mutex
	r       any
}

// NewForwardPanic records whether the parent goroutine panics on faults, for
// the workers to inherit.
func NewForwardPanic() *ForwardPanic {
	p := debug.SetPanicOnFault(false)
	debug.SetPanicOnFault(p)
	return &ForwardPanic{onFault: p}
}

// Start sets the worker's fault behaviour to the parent's.
func (f *ForwardPanic) Start() {
	if f.onFault {
		debug.SetPanicOnFault(true)
	}
}

// Recover, deferred in a worker, keeps the worker's first panic.
func (f *ForwardPanic) Recover() {
	if r := recover(); r != nil {
		if fe := FaultFrom(r); fe != nil {
			r = fe // resolved while the mapping is surely still registered
		}
		f.mu.Lock()
		if f.r == nil {
			f.r = r
		}
		f.mu.Unlock()
	}
}

// Repanic raises a worker's panic on the calling goroutine.
func (f *ForwardPanic) Repanic() {
	f.mu.Lock()
	r := f.r
	f.mu.Unlock()
	if r != nil {
		panic(r)
	}
}

func baseOf(data []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(data))) }
