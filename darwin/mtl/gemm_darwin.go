//go:build darwin

package mtl

import "github.com/progrium/darwinkit/objc"

// GEMMSpec is dst[M, N] = x[M, K] · w[N, K]ᵀ (+ bias[N]), one element type
// throughout (MPSGraph rounds the product to it before adding the bias).
type GEMMSpec struct {
	M, N, K int
	Type    ElemType
	Bias    bool
}

func (s GEMMSpec) layout() (ElemType, [][]int) {
	x, w, dst := []int{s.M, s.K}, []int{s.N, s.K}, []int{s.M, s.N}
	if s.Bias {
		return s.Type, [][]int{x, w, {s.N}, dst}
	}
	return s.Type, [][]int{x, w, dst}
}

// tensors adds x, w, (bias) and the product. Called inside a pool.
func (s GEMMSpec) tensors(graph objc.Object) ([]objc.Object, error) {
	x := placeholder(graph, s.Type, "x", s.M, s.K)
	w := placeholder(graph, s.Type, "w", s.N, s.K)
	wt := objc.Call[objc.Object](graph, objc.Sel("transposeTensor:dimension:withDimension:name:"), w, uint(0), uint(1), "wt")
	xwt := objc.Call[objc.Object](graph, objc.Sel("matrixMultiplicationWithPrimaryTensor:secondaryTensor:name:"), x, wt, "xwt")
	if !s.Bias {
		return []objc.Object{x, w, xwt}, nil
	}
	bias := placeholder(graph, s.Type, "bias", s.N)
	y := objc.Call[objc.Object](graph, objc.Sel("additionWithPrimaryTensor:secondaryTensor:name:"), xwt, bias, "y")
	return []objc.Object{x, w, bias, y}, nil
}
