//go:build darwin

package mtl

import (
	"fmt"
	"sync"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/macos/mps"
	"github.com/progrium/darwinkit/objc"
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
	objc.WithAutoreleasePool(func() {
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

// tensorData wraps a buffer region as MPSGraphTensorData through an
// MPSNDArray at an offset (MPSGraphTensorData has no offset of its own);
// the shape is row-major (slowest axis first), as MPSGraph's.
func tensorData(v View, t ElemType, shape ...int) objc.Object {
	desc := objc.Call[objc.Object](objc.GetClass("MPSNDArrayDescriptor"), objc.Sel("descriptorWithDataType:shape:"), t.mps(), nsShape(shape...))
	nd := objc.Call[objc.Object](objc.GetClass("MPSNDArray"), objc.Sel("alloc"))
	nd = objc.Call[objc.Object](nd, objc.Sel("initWithBuffer:offset:descriptor:"), v.Buf.obj, uint(v.Offset), desc)
	td := objc.Call[objc.Object](objc.GetClass("MPSGraphTensorData"), objc.Sel("alloc"))
	td = objc.Call[objc.Object](td, objc.Sel("initWithMPSNDArray:"), nd)
	nd.Release() // the tensor data holds it
	return td
}

// Encode records the product into cb after the work already in it. The
// open compute encoder is ended first; MPS may commit cb's current
// MTLCommandBuffer and continue in a new one, which cb adopts. The returned
// function releases the encode's objects once cb has completed.
func (g *GEMM) Encode(cb *CommandBuffer, x, w, bias, dst View) (release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cb.EndEncoding()
	var keep []objc.Object
	objc.WithAutoreleasePool(func() {
		s := g.spec
		tx, tw, td := tensorData(x, s.Type, s.M, s.K), tensorData(w, s.Type, s.N, s.K), tensorData(dst, s.Type, s.M, s.N)
		keep = append(keep, tx, tw, td)
		feeds := map[objc.Object]objc.Object{g.x: tx, g.w: tw}
		if s.Bias {
			tb := tensorData(bias, s.Type, s.N)
			keep = append(keep, tb)
			feeds[g.bias] = tb
		}
		results := map[objc.Object]objc.Object{g.out: td}
		mcb := objc.Call[objc.Object](objc.GetClass("MPSCommandBuffer"), objc.Sel("commandBufferWithCommandBuffer:"), cb.obj)
		objc.Call[objc.Void](g.graph, objc.Sel("encodeToCommandBuffer:feeds:targetOperations:resultsDictionary:executionDescriptor:"),
			mcb, feeds, nil, results, nil)
		// MPS may have committed the buffer it wrapped and moved on to a new one.
		cur := objc.Call[objc.Object](mcb, objc.Sel("commandBuffer"))
		if !cur.IsNil() && cur.Ptr() != cb.obj.Ptr() {
			cur.Retain()
			cb.obj.Release()
			cb.obj.Object = cur
		}
	})
	return func() {
		objc.WithAutoreleasePool(func() {
			for _, o := range keep {
				o.Release()
			}
		})
	}
}

// Release frees the graph.
func (g *GEMM) Release() {
	objc.WithAutoreleasePool(func() {
		for _, t := range []objc.Object{g.x, g.w, g.bias, g.out} {
			if !t.IsNil() {
				t.Release()
			}
		}
		g.graph.Release()
	})
}
