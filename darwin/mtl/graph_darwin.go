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

// ElemType is a matrix element type of the MPSGraph operations.
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

// GraphSpec is one kind of MPSGraph operation (GEMMSpec, SDPASpec): its
// element type, the shapes of the regions it reads and writes, and how its
// tensors are added to a graph.
type GraphSpec interface {
	comparable
	// layout is the element type and the row-major shapes of the inputs'
	// regions in feed order, then the output's.
	layout() (ElemType, [][]int)
	// tensors adds the placeholders (in feed order) and the result to
	// graph, or returns ErrUnsupported where this macOS lacks the operation.
	// Called inside a pool.
	tensors(graph objc.Object) ([]objc.Object, error)
}

// Graph is a built MPSGraph for one spec, encoded many times (MPSGraph
// compiles and caches its executable per shape on first encode). Safe for
// concurrent use. darwinkit's MPSGraph wrappers that take shapes or
// dictionaries pass Go pointers to Objective-C, so graphs are built with raw
// message sends.
type Graph[S GraphSpec] struct {
	spec    S
	mu      sync.Mutex
	graph   objc.Object
	tensors []objc.Object // placeholders in feed order, then the result
}

// NewGraph builds the graph of s. The error is ErrUnsupported where this
// macOS has no MPSGraph or lacks the operation; the graph is nil only for an
// empty spec.
func NewGraph[S GraphSpec](s S) (*Graph[S], error) {
	_, shapes := s.layout()
	for _, shape := range shapes {
		for _, n := range shape {
			if n <= 0 {
				return nil, fmt.Errorf("mtl: %#v: empty", s)
			}
		}
	}
	g := &Graph[S]{spec: s}
	var err error
	objcpool.With(func() {
		cls := objc.GetClass("MPSGraph")
		if cls.Ptr() == nil {
			err = ErrUnsupported
			return
		}
		graph := objc.Call[objc.Object](cls, objc.Sel("new"))
		ts, terr := s.tensors(graph)
		if terr != nil {
			graph.Release()
			err = terr
			return
		}
		g.graph = graph
		for _, t := range ts {
			if !t.IsNil() {
				t.Retain()
				g.tensors = append(g.tensors, t)
			}
		}
		if len(g.tensors) != len(ts) {
			err = fmt.Errorf("mtl: MPSGraph refused %#v", s)
		}
	})
	return g, err
}

// Release frees the graph and its tensors; a nil graph is ignored.
func (g *Graph[S]) Release() {
	if g == nil {
		return
	}
	objcpool.With(func() {
		for _, t := range g.tensors {
			t.Release()
		}
		if !g.graph.IsNil() {
			g.graph.Release()
		}
	})
}

// nsShape is an MPSShape (an NSArray of NSNumber). Called inside a pool.
func nsShape(d ...int) foundation.Array {
	ns := make([]objc.IObject, len(d))
	for i, v := range d {
		ns[i] = foundation.Number_NumberWithLongLong(int64(v))
	}
	return foundation.NewArrayWithArray(ns)
}

// placeholder adds an input of element type t and shape to graph. Called
// inside a pool.
func placeholder(graph objc.Object, t ElemType, name string, shape ...int) objc.Object {
	return objc.Call[objc.Object](graph, objc.Sel("placeholderWithShape:dataType:name:"), nsShape(shape...), t.mps(), name)
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

// Encode records one run of the graph into cb after the work already in it:
// views are the regions of the inputs in the order the spec names them, then
// the output's (GEMMSpec: x, w, bias with Bias only, dst; SDPASpec: q, k, v,
// dst). The
// open compute encoder is ended first; MPS may commit cb's current
// MTLCommandBuffer and continue in a new one (commit-and-continue), which cb
// adopts. The returned function releases the encode's objects once cb has
// completed. ok is false, with nothing encoded, when this macOS cannot view
// one of the regions (tensorData).
func (g *Graph[S]) Encode(cb *CommandBuffer, views ...View) (release func(), ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	t, shapes := g.spec.layout()
	if len(views) != len(shapes) || len(views) != len(g.tensors) {
		return nil, false
	}
	var keep []objc.Object
	ok = true
	objcpool.With(func() {
		feeds := map[objc.Object]objc.Object{}
		results := map[objc.Object]objc.Object{}
		for i, v := range views {
			td, fine := tensorData(v, t, shapes[i]...)
			if !fine {
				ok = false
				continue
			}
			keep = append(keep, td)
			if i < len(views)-1 {
				feeds[g.tensors[i]] = td
			} else {
				results[g.tensors[i]] = td
			}
		}
		if !ok {
			for _, o := range keep {
				o.Release()
			}
			return
		}
		cb.EndEncoding()
		mcb := objc.Call[objc.Object](objc.GetClass("MPSCommandBuffer"), objc.Sel("commandBufferWithCommandBuffer:"), cb.obj)
		objc.Call[objc.Void](g.graph, objc.Sel("encodeToCommandBuffer:feeds:targetOperations:resultsDictionary:executionDescriptor:"),
			mcb, feeds, nil, results, nil)
		// rootCommandBuffer is the buffer further work goes to.
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
