//go:build darwin

package mtl

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"

	"h3studio/darwin/objcpool"
)

// Library is compiled shader source with a cache of compute pipelines by
// kernel name. It is safe for concurrent use.
type Library struct {
	dev *Device
	obj metal.LibraryObject

	mu    sync.Mutex
	pipes map[string]*Pipeline
}

// NewLibrary compiles Metal source at run time with fast math off (IEEE
// results: the kernels round exactly like the CPU reference) and, on macOS 15
// and later, the safe math mode and precise math functions. A compile error
// is a *CompileError carrying the compiler's file:line diagnostics.
func (d *Device) NewLibrary(source string) (*Library, error) {
	var lib *Library
	var err error
	objcpool.With(func() {
		opts := metal.NewCompileOptions()
		opts.SetFastMathEnabled(false)
		// The generated enum stops at MSL 2.4: ask for 3.0 (macOS 13) by value.
		opts.SetLanguageVersion(metal.LanguageVersion(0x30000))
		if opts.RespondsToSelector(objc.Sel("setMathMode:")) {
			objc.Call[objc.Void](opts, objc.Sel("setMathMode:"), int64(0)) // MTLMathModeSafe
		}
		if opts.RespondsToSelector(objc.Sel("setMathFloatingPointFunctions:")) {
			objc.Call[objc.Void](opts, objc.Sel("setMathFloatingPointFunctions:"), int64(1)) // precise
		}
		var e foundation.Error
		obj := d.obj.NewLibraryWithSourceOptionsError(source, opts, unsafe.Pointer(&e))
		if obj.IsNil() {
			msg := "unknown error"
			if !e.IsNil() {
				msg = e.LocalizedDescription()
			}
			err = &CompileError{Log: msg}
			return
		}
		lib = &Library{dev: d, obj: obj, pipes: map[string]*Pipeline{}}
	})
	return lib, err
}

// Release frees the library and its pipelines.
func (l *Library) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	objcpool.With(func() {
		for _, p := range l.pipes {
			p.obj.Release()
		}
		l.obj.Release()
	})
	l.pipes = nil
}

// Pipeline is a compute pipeline for one kernel.
type Pipeline struct {
	Name string
	// MaxThreads is the most threads a threadgroup of this kernel may have
	// (registers and threadgroup memory can make it less than 1024).
	MaxThreads int
	// ExecutionWidth is the SIMD width (32 on Apple GPUs).
	ExecutionWidth int
	obj            metal.ComputePipelineStateObject
}

// Pipeline returns the pipeline of kernel name, building it on first use.
func (l *Library) Pipeline(name string) (*Pipeline, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.pipes[name]; ok {
		return p, nil
	}
	var p *Pipeline
	var err error
	objcpool.With(func() {
		fn := l.obj.NewFunctionWithName(name)
		if fn.IsNil() {
			err = &PipelineError{Kernel: name, Err: errors.New("no such kernel in the library")}
			return
		}
		defer fn.Release()
		var e foundation.Error
		obj := objc.Call[metal.ComputePipelineStateObject](l.dev.obj, objc.Sel("newComputePipelineStateWithFunction:error:"), fn, unsafe.Pointer(&e))
		if obj.IsNil() {
			err = &PipelineError{Kernel: name, Err: nsError(e)}
			return
		}
		p = &Pipeline{Name: name, obj: obj, MaxThreads: int(obj.MaxTotalThreadsPerThreadgroup()), ExecutionWidth: int(obj.ThreadExecutionWidth())}
	})
	if err != nil {
		return nil, err
	}
	l.pipes[name] = p
	return p, nil
}
