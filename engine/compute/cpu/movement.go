package cpu

import (
	"fmt"

	"h3studio/engine/compute"
)

// Copy converts src into dst element by element.
func (b *Backend) Copy(dst, src *compute.Tensor) {
	compute.Check(dst.NumElements() == src.NumElements(), "Copy", "%v into %v: element counts differ", src, dst)
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
	r := src.Rank()
	compute.Check(len(perm) == r && dst.Rank() == r, "Transpose", "perm %v for %v -> %v", perm, src, dst)
	compute.Check(dst.DType() == src.DType(), "Transpose", "dtype %v -> %v", src.DType(), dst.DType())
	seen := make([]bool, r)
	for i, p := range perm {
		compute.Check(p >= 0 && p < r && !seen[p], "Transpose", "invalid perm %v", perm)
		seen[p] = true
		compute.Check(dst.Dim(i) == src.Dim(p), "Transpose", "perm %v maps %v onto %v", perm, src, dst)
	}
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
	ix := indices(idx)
	compute.Check(dst.DType() == src.DType(), "GatherRows", "dtype %v vs %v", src, dst)
	compute.Check(dst.Rank() >= 1 && dst.Dim(0) == len(ix), "GatherRows", "%d indices for %v", len(ix), dst)
	ds, ss := dst.Shape(), src.Shape()
	compute.Check(ds[1:].Equal(ss[1:]), "GatherRows", "row shapes differ: %v vs %v", src, dst)
	b.dispatch(0)
	rb := rowBytes(dst)
	sb, db := bytesOf(src), bytesOf(dst)
	for i, j := range ix {
		compute.Check(j >= 0 && int(j) < ss[0], "GatherRows", "index %d out of range [0,%d)", j, ss[0])
		copy(db[i*rb:(i+1)*rb], sb[int(j)*rb:(int(j)+1)*rb])
	}
}

// ScatterRows sets dst[idx[i]] = src[i].
func (b *Backend) ScatterRows(dst, src, idx *compute.Tensor) {
	ix := indices(idx)
	compute.Check(dst.DType() == src.DType(), "ScatterRows", "dtype %v vs %v", src, dst)
	compute.Check(src.Rank() >= 1 && src.Dim(0) == len(ix), "ScatterRows", "%d indices for %v", len(ix), src)
	ds, ss := dst.Shape(), src.Shape()
	compute.Check(ds[1:].Equal(ss[1:]), "ScatterRows", "row shapes differ: %v vs %v", src, dst)
	b.dispatch(0)
	rb := rowBytes(src)
	sb, db := bytesOf(src), bytesOf(dst)
	for i, j := range ix {
		compute.Check(j >= 0 && int(j) < ds[0], "ScatterRows", "index %d out of range [0,%d)", j, ds[0])
		copy(db[int(j)*rb:(int(j)+1)*rb], sb[i*rb:(i+1)*rb])
	}
}
