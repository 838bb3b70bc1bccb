package cpu

import (
	"fmt"

	"h3studio/engine/compute"
)

// Copy converts src into dst element by element.
func (b *Backend) Copy(dst, src *compute.Tensor) {
	compute.CheckCopy(dst, src)
	b.dispatch(0)
	if dst.DType() == src.DType() {
		copy(bytesOf(dst), bytesOf(src))
		return
	}
	store(dst, loadCopy(src))
}

// Fill sets every element to v.
func (b *Backend) Fill(dst *compute.Tensor, v float32) {
	b.dispatch(0)
	out := output(dst)
	for i := range out {
		out[i] = v
	}
	store(dst, out)
}

// Transpose permutes axes.
func (b *Backend) Transpose(dst, src *compute.Tensor, perm ...int) {
	compute.CheckTranspose(dst, src, perm)
	r := src.Rank()
	b.dispatch(0)
	es := src.DType().Size()
	sshape := src.Shape()
	// strides of src in elements
	sstr := make([]int, r)
	acc := 1
	for i := r - 1; i >= 0; i-- {
		sstr[i] = acc
		acc *= sshape[i]
	}
	// stride in src for each dst axis
	dstr := make([]int, r)
	for i, p := range perm {
		dstr[i] = sstr[p]
	}
	dshape := dst.Shape()
	sb, db := bytesOf(src), bytesOf(dst)
	n := dst.NumElements()
	if n == 0 {
		return
	}
	inner := dshape[r-1]
	rows := n / inner
	innerStride := dstr[r-1] * es
	b.parallel(rows, 64, func(lo, hi int) {
		idx := make([]int, r)
		for row := lo; row < hi; row++ {
			// decompose row into the leading r-1 dst coordinates
			rem := row
			soff := 0
			for a := r - 2; a >= 0; a-- {
				idx[a] = rem % dshape[a]
				rem /= dshape[a]
				soff += idx[a] * dstr[a]
			}
			so := soff * es
			do := row * inner * es
			if innerStride == es {
				copy(db[do:do+inner*es], sb[so:so+inner*es])
				continue
			}
			for j := 0; j < inner; j++ {
				copy(db[do+j*es:do+(j+1)*es], sb[so:so+es])
				so += innerStride
			}
		}
	})
}

func rowBytes(t *compute.Tensor) int {
	if t.Rank() == 0 {
		panic(fmt.Sprintf("cpu: rows of scalar %v", t))
	}
	return int(t.Bytes()) / max(t.Dim(0), 1)
}

// GatherRows sets dst[i] = src[idx[i]].
func (b *Backend) GatherRows(dst, src, idx *compute.Tensor) {
	b.moveRows("GatherRows", dst, src, idx, true)
}

// ScatterRows sets dst[idx[i]] = src[i].
func (b *Backend) ScatterRows(dst, src, idx *compute.Tensor) {
	b.moveRows("ScatterRows", dst, src, idx, false)
}

// moveRows copies row i of src to row idx[i] of dst (scatter) or row idx[i]
// of src to row i of dst (gather), checking every index.
func (b *Backend) moveRows(op string, dst, src, idx *compute.Tensor, gather bool) {
	moved, indexed := compute.CheckMoveRows(dst, src, idx, gather)
	b.dispatch(0)
	rb := rowBytes(moved)
	sb, db := bytesOf(src), bytesOf(dst)
	n := indexed.Dim(0)
	for i, j := range indices(idx) {
		compute.Check(j >= 0 && int(j) < n, op, "index %d out of range [0,%d)", j, n)
		if gather {
			copy(db[i*rb:(i+1)*rb], sb[int(j)*rb:(int(j)+1)*rb])
		} else {
			copy(db[int(j)*rb:(int(j)+1)*rb], sb[i*rb:(i+1)*rb])
		}
	}
}
