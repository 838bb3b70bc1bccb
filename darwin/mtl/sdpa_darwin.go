//go:build darwin

package mtl

import (
	"fmt"
	"sync"

	"github.com/progrium/darwinkit/objc"

	"h3studio/darwin/objcpool"
)

// SDPASpec is one head of softmax(q·kᵀ·Scale)·v: q [Sq, D], k and v [Sk, D],
// dst [Sq, D], one element type throughout, no mask.
type SDPASpec struct {
	Sq, Sk, D int
	Type      ElemType
	Scale     float32
}

// SDPA is an MPSGraph scaled-dot-product attention (macOS 15), built once
// per spec and encoded many times.
type SDPA struct {
	mu           sync.Mutex
	spec         SDPASpec
	graph        objc.Object
	q, k, v, out objc.Object
}

// NewSDPA builds the attention graph of s, or returns ErrUnsupported where
// MPSGraph has no scaled-dot-product attention (before macOS 15).
func (d *Device) NewSDPA(s SDPASpec) (*SDPA, error) {
	if s.Sq <= 0 || s.Sk <= 0 || s.D <= 0 {
		return nil, fmt.Errorf("mtl: SDPA %+v: empty", s)
	}
	a := &SDPA{spec: s}
	var err error
	objcpool.With(func() {
		cls := objc.GetClass("MPSGraph")
		if cls.Ptr() == nil {
			err = ErrUnsupported
			return
		}
		a.graph = objc.Call[objc.Object](cls, objc.Sel("new"))
		if !a.graph.RespondsToSelector(objc.Sel("scaledDotProductAttentionWithQueryTensor:keyTensor:valueTensor:scale:name:")) {
			a.graph.Release()
			a.graph = objc.Object{}
			err = ErrUnsupported
			return
		}
		dt := s.Type.mps()
		a.q = objc.Call[objc.Object](a.graph, objc.Sel("placeholderWithShape:dataType:name:"), nsShape(1, 1, s.Sq, s.D), dt, "q")
		a.k = objc.Call[objc.Object](a.graph, objc.Sel("placeholderWithShape:dataType:name:"), nsShape(1, 1, s.Sk, s.D), dt, "k")
		a.v = objc.Call[objc.Object](a.graph, objc.Sel("placeholderWithShape:dataType:name:"), nsShape(1, 1, s.Sk, s.D), dt, "v")
		a.out = objc.Call[objc.Object](a.graph, objc.Sel("scaledDotProductAttentionWithQueryTensor:keyTensor:valueTensor:scale:name:"), a.q, a.k, a.v, s.Scale, "attention")
		for _, t := range []objc.Object{a.q, a.k, a.v, a.out} {
			if !t.IsNil() {
				t.Retain()
			}
		}
		if a.out.IsNil() {
			err = fmt.Errorf("mtl: MPSGraph refused SDPA %+v", s)
		}
	})
	return a, err
}

// Encode records one head's attention into cb after the work already in it
// (as GEMM.Encode: MPS may commit and continue). ok is false, with nothing
// encoded, when this macOS cannot view one of the regions.
func (a *SDPA) Encode(cb *CommandBuffer, q, k, v, dst View) (release func(), ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var keep []objc.Object
	ok = true
	objcpool.With(func() {
		s := a.spec
		data := func(w View, rows int) objc.Object {
			t, fine := tensorData(w, s.Type, 1, 1, rows, s.D)
			if fine {
				keep = append(keep, t)
			}
			ok = ok && fine
			return t
		}
		tq, tk, tv, to := data(q, s.Sq), data(k, s.Sk), data(v, s.Sk), data(dst, s.Sq)
		if !ok {
			for _, o := range keep {
				o.Release()
			}
			return
		}
		cb.EndEncoding()
		feeds := map[objc.Object]objc.Object{a.q: tq, a.k: tk, a.v: tv}
		results := map[objc.Object]objc.Object{a.out: to}
		mcb := objc.Call[objc.Object](objc.GetClass("MPSCommandBuffer"), objc.Sel("commandBufferWithCommandBuffer:"), cb.obj)
		objc.Call[objc.Void](a.graph, objc.Sel("encodeToCommandBuffer:feeds:targetOperations:resultsDictionary:executionDescriptor:"),
			mcb, feeds, nil, results, nil)
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
func (a *SDPA) Release() {
	objcpool.With(func() {
		for _, t := range []objc.Object{a.q, a.k, a.v, a.out} {
			if !t.IsNil() {
				t.Release()
			}
		}
		if !a.graph.IsNil() {
			a.graph.Release()
		}
	})
}
