//go:build darwin

package mtl

import (
	"fmt"
	"sync"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/mps"
	"github.com/progrium/darwinkit/objc"

	"h3studio/darwin/objcpool"
)

// ElemType is a matrix element type of the MPSGraph product.
type ElemType int

// Element types.
const (
	Float32 ElemType = iota
	Float16
	BFloat16
)

func (t ElemType) mps() mps.DataType {
	switch t {
	case Float16:
		return mps.DataTypeFloat16
	case BFloat16:
		return mps.DataTypeFloat16 | mps.DataTypeAlternateEncodingBit // MPSDataTypeBFloat16 (macOS 14)
	}
	return mps.DataTypeFloat32
}

// GEMMSpec is dst[M, N] = x[M, K] · w[N, K]ᵀ (+ bias[N]), one element type
// throughout (MPSGraph rounds the product to it before adding the bias).
type GEMMSpec struct {
	M, N, K int
	Type    ElemType
	Bias    bool
}

// GEMM is a built MPSGraph for one GEMMSpec (MPSGraph compiles and caches
// its executable per shape on first encode). Safe for concurrent use.
type GEMM struct {
	spec            GEMMSpec
	graph           objc.Object
	x, w, bias, out objc.Object
	mu              sync.Mutex
}

// nsShape is an MPSShape (an NSArray of NSNumber). Called inside a pool.
func nsShape(d ...int) foundation.Array {
	ns := make([]objc.IObject, len(d))
	for i, v := range d {
		ns[i] = foundation.Number_NumberWithLongLong(int64(v))
	}
	return foundation.NewArrayWithArray(ns)
}

// NewGEMM builds the graph. darwinkit's MPSGraph wrappers that take shapes
// or dictionaries pass Go pointers to Objective-C, so the graph is built with
// raw message sends.
func (d *Device) NewGEMM(s GEMMSpec) (*GEMM, error) {
	if s.M <= 0 || s.N <= 0 || s.K <= 0 {
		return nil, fmt.Errorf("mtl: GEMM %+v: empty", s)
	}
	g := &GEMM{spec: s}
	var err error
	objcpool.With(func() {
		cls := objc.GetClass("MPSGraph")
		if cls.Ptr() == nil {
			err = ErrUnsupported
			return
		}
		g.graph = objc.Call[objc.Object](cls, objc.Sel("new"))
		dt := s.Type.mps()
		g.x = objc.Call[objc.Object](g.graph, objc.Sel("placeholderWithShape:dataType:name:"), nsShape(s.M, s.K), dt, "x")
		g.w = objc.Call[objc.Object](g.graph, objc.Sel("placeholderWithShape:dataType:name:"), nsShape(s.N, s.K), dt, "w")
		wt := objc.Call[objc.Object](g.graph, objc.Sel("transposeTensor:dimension:withDimension:name:"), g.w, uint(0), uint(1), "wt")
		g.out = objc.Call[objc.Object](g.graph, objc.Sel("matrixMultiplicationWithPrimaryTensor:secondaryTensor:name:"), g.x, wt, "xwt")
		if s.Bias {
			g.bias = objc.Call[objc.Object](g.graph, objc.Sel("placeholderWithShape:dataType:name:"), nsShape(s.N), dt, "bias")
			g.out = objc.Call[objc.Object](g.graph, objc.Sel("additionWithPrimaryTensor:secondaryTensor:name:"), g.out, g.bias, "y")
		}
		for _, t := range []objc.Object{g.x, g.w, g.bias, g.out} {
			if !t.IsNil() {
				t.Retain()
			}
		}
		if g.out.IsNil() {
			err = fmt.Errorf("mtl: MPSGraph refused GEMM %+v", s)
		}
	})
	return g, err
}

// View is a region of a buffer: a matrix starting at Offset bytes.
type View struct {
	Buf    *Buffer
	Offset int64
}

// tensorData wraps a buffer region as MPSGraphTensorData; the shape is
// row-major (slowest axis first), as MPSGraph's. MPSGraphTensorData has no
// offset of its own: the region is viewed through an MPSNDArray at an offset
// (initWithBuffer:offset:descriptor:, public from macOS 15) with packed rows
// (otherwise rows whose bytes are not a multiple of 16 are read padded), or,
// where MPSNDArray lacks that initialiser, directly from offset 0. ok is
// false for a region at an offset on such a system (the caller falls back to
// the hand kernel).
// Called inside a pool.
func tensorData(v View, t ElemType, shape ...int) (td objc.Object, ok bool) {
	nd := objc.Call[objc.Object](objc.GetClass("MPSNDArray"), objc.Sel("alloc"))
	if nd.RespondsToSelector(objc.Sel("initWithBuffer:offset:descriptor:")) {
		desc := objc.Call[objc.Object](objc.GetClass("MPSNDArrayDescriptor"), objc.Sel("descriptorWithDataType:shape:"), t.mps(), nsShape(shape...))
		if desc.RespondsToSelector(objc.Sel("setPreferPackedRows:")) {
			objc.Call[objc.Void](desc, objc.Sel("setPreferPackedRows:"), true)
		}
		nd = objc.Call[objc.Object](nd, objc.Sel("initWithBuffer:offset:descriptor:"), v.Buf.obj, uint(v.Offset), desc)
		td = objc.Call[objc.Object](objc.GetClass("MPSGraphTensorData"), objc.Sel("alloc"))
		td = objc.Call[objc.Object](td, objc.Sel("initWithMPSNDArray:"), nd)
		nd.Release() // the tensor data holds it
		return td, !td.IsNil()
	}
	objc.Call[objc.Void](nd, objc.Sel("release")) // allocated, never initialised
	if v.Offset != 0 {
		return objc.Object{}, false
	}
	td = objc.Call[objc.Object](objc.GetClass("MPSGraphTensorData"), objc.Sel("alloc"))
	td = objc.Call[objc.Object](td, objc.Sel("initWithMTLBuffer:shape:dataType:"), v.Buf.obj, nsShape(shape...), t.mps())
	return td, !td.IsNil()
}

// Encode records the product into cb after the work already in it. The
// open compute encoder is ended first; MPS may commit cb's current
// MTLCommandBuffer and continue in a new one, which cb adopts. The returned
// function releases the encode's objects once cb has completed. ok is false,
// with nothing encoded, when this macOS cannot view one of the regions
// (tensorData).
func (g *GEMM) Encode(cb *CommandBuffer, x, w, bias, dst View) (release func(), ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var keep []objc.Object
	ok = true
	objcpool.With(func() {
		s := g.spec
		data := func(v View, shape ...int) objc.Object {
			t, fine := tensorData(v, s.Type, shape...)
			if fine {
				keep = append(keep, t)
			}
			ok = ok && fine
			return t
		}
		tx, tw, td := data(x, s.M, s.K), data(w, s.N, s.K), data(dst, s.M, s.N)
		feeds := map[objc.Object]objc.Object{g.x: tx, g.w: tw}
		if s.Bias {
			feeds[g.bias] = data(bias, s.N)
		}
		if !ok {
			for _, o := range keep {
				o.Release()
			}
			return
		}
		cb.EndEncoding()
		results := map[objc.Object]objc.Object{g.out: td}
		mcb := objc.Call[objc.Object](objc.GetClass("MPSCommandBuffer"), objc.Sel("commandBufferWithCommandBuffer:"), cb.obj)
		objc.Call[objc.Void](g.graph, objc.Sel("encodeToCommandBuffer:feeds:targetOperations:resultsDictionary:executionDescriptor:"),
			mcb, feeds, nil, results, nil)
		// MPS may have committed the buffer it wrapped and moved on to a
		// new one (commit-and-continue): rootCommandBuffer is the one
		// further work goes to.
		cb.adopt(objc.Call[objc.Object](mcb, objc.Sel("rootCommandBuffer")))
	})
	if !ok {
		return nil, false
	}
	return func() {
		objcpool.With(func() {
			for _, o := range keep {
				o.Release()
			}
		})
	}, true
}

// Release frees the graph.
func (g *GEMM) Release() {
	objcpool.With(func() {
		for _, t := range []objc.Object{g.x, g.w, g.bias, g.out} {
			if !t.IsNil() {
				t.Release()
			}
		}
		g.graph.Release()
	})
}
