//go:build darwin

package mtl

import "github.com/progrium/darwinkit/objc"

// SDPASpec is one head of softmax(q·kᵀ·Scale)·v: q [Sq, D], k and v [Sk, D],
// dst [Sq, D], one element type throughout, no mask. Its graph (macOS 15) is
// ErrUnsupported where MPSGraph has no scaled-dot-product attention.
type SDPASpec struct {
	Sq, Sk, D int
	Type      ElemType
	Scale     float32
}

// layout views q, k, v and dst as one batch of one head.
func (s SDPASpec) layout() (ElemType, [][]int) {
	q, kv := []int{1, 1, s.Sq, s.D}, []int{1, 1, s.Sk, s.D}
	return s.Type, [][]int{q, kv, kv, q}
}

// tensors adds q, k, v and the attention. Called inside a pool.
func (s SDPASpec) tensors(graph objc.Object) ([]objc.Object, error) {
	if !graph.RespondsToSelector(objc.Sel("scaledDotProductAttentionWithQueryTensor:keyTensor:valueTensor:scale:name:")) {
		return nil, ErrUnsupported
	}
	q := placeholder(graph, s.Type, "q", 1, 1, s.Sq, s.D)
	k := placeholder(graph, s.Type, "k", 1, 1, s.Sk, s.D)
	v := placeholder(graph, s.Type, "v", 1, 1, s.Sk, s.D)
	out := objc.Call[objc.Object](graph, objc.Sel("scaledDotProductAttentionWithQueryTensor:keyTensor:valueTensor:scale:name:"), q, k, v, s.Scale, "attention")
	return []objc.Object{q, k, v, out}, nil
}
