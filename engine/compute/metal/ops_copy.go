package metal

import (
	"encoding/binary"
	"fmt"

	"h3studio/engine/compute"
)

// Copy converts src to dst's dtype (raw words when the dtypes agree).
func (b *Backend) Copy(dst, src *compute.Tensor) {
	compute.CheckCopy(dst, src)
	n := int64(dst.NumElements())
	if n == 0 {
		return
	}
	switch {
	case dst.DType() == src.DType():
		if b.overlaps(dst, src) && b.arg(dst, true).Offset == b.arg(src, false).Offset {
			return // the same view
		}
		da, sa := b.arg(dst, true), b.arg(src, false)
		w := wordSize(dst.Bytes(), da.Offset, sa.Offset)
		da.Align, sa.Align = w, w
		b.launch1("kernel_copy_"+wordName(w), dst.Bytes()/int64(w), argBytes(KargsCopy{N: uint64(dst.Bytes() / int64(w))}), false, sa, da)
	case isFloat(dst.DType()) && isFloat(src.DType()):
		b.launch1(kname("convert", src.DType(), dst.DType()), n,
			argBytes(KargsConvert{N: uint64(n), SrcDt: dtCode(src), DstDt: dtCode(dst)}), true, b.arg(src, false), b.arg(dst, true))
	default:
		b.convertAny(dst, src)
	}
}

// convertAny converts through float32 as compute.DecodeFloat32 and
// EncodeFloat32 do, for any pair of dtypes.
func (b *Backend) convertAny(dst, src *compute.Tensor) {
	n := int64(dst.NumElements())
	b.launch1("kernel_convert_any", n, argBytes(KargsConvert{N: uint64(n), SrcDt: dtCode(src), DstDt: dtCode(dst)}), true,
		b.arg(src, false), b.arg(dst, true))
}

// Fill sets every element to v rounded to dst's dtype (on the host, with
// compute.EncodeFloat32; the kernel writes the element's bytes).
func (b *Backend) Fill(dst *compute.Tensor, v float32) {
	es := dst.DType().Size()
	pat := compute.EncodeFloat32(dst.DType(), []float32{v})
	var p [8]byte
	copy(p[:], pat)
	n := int64(dst.NumElements())
	b.launch1("kernel_fill_"+wordName(es), n, argBytes(KargsFill{N: uint64(n), Pattern: binary.LittleEndian.Uint64(p[:])}), false,
		b.arg(dst, true))
}

// Transpose permutes axes: dst.Dim(i) == src.Dim(perm[i]).
func (b *Backend) Transpose(dst, src *compute.Tensor, perm ...int) {
	compute.CheckTranspose(dst, src, perm)
	n := int64(dst.NumElements())
	if n == 0 {
		return
	}
	if b.overlaps(dst, src) {
		tmp := b.scratch(dst.DType(), dst.Shape()...)
		b.Transpose(tmp, src, perm...)
		b.Copy(dst, tmp)
		b.Free(tmp)
		return
	}
	dims, strides := transposePlan(src.Shape(), perm)
	if len(dims) > MaxRank {
		b.onCPU(dst, func(c func(*compute.Tensor) *compute.Tensor) { b.ref.Transpose(c(dst), c(src), perm...) })
		return
	}
	k := KargsTranspose{N: uint64(n), Rank: uint32(len(dims))}
	for i := range dims {
		k.DstShape[i] = uint32(dims[i])
		k.SrcStride[i] = uint64(strides[i])
	}
	es := dst.DType().Size()
	b.launch1("kernel_transpose_"+wordName(es), n, argBytes(k), false, b.arg(src, false), b.arg(dst, true))
}

// transposePlan lists the destination axes with their source strides (in
// elements), dropping axes of size 1 and merging neighbours that stay
// adjacent in the source, so that most permutations need few axes.
func transposePlan(shape compute.Shape, perm []int) (dims []int, strides []int64) {
	r := len(shape)
	sstr := make([]int64, r)
	acc := int64(1)
	for i := r - 1; i >= 0; i-- {
		sstr[i] = acc
		acc *= int64(shape[i])
	}
	for _, p := range perm {
		d, s := shape[p], sstr[p]
		if d == 1 {
			continue
		}
		if n := len(dims); n > 0 && strides[n-1] == s*int64(d) {
			dims[n-1] *= d
			strides[n-1] = s
			continue
		}
		dims = append(dims, d)
		strides = append(strides, s)
	}
	if len(dims) == 0 {
		return []int{1}, []int64{1}
	}
	return dims, strides
}

// rowsOp launches a checked GatherRows / ScatterRows.
func (b *Backend) rowsOp(op string, dst, src, idx *compute.Tensor, gather bool) {
	moved, indexed := compute.CheckMoveRows(dst, src, idx, gather)
	nIdx := idx.NumElements()
	if nIdx == 0 || moved.Bytes() == 0 {
		return
	}
	if b.overlaps(dst, src) {
		panic(fmt.Sprintf("metal: %s: source %v and destination %v overlap", op, src, dst))
	}
	ix, release := b.indexTensor(op, idx)
	defer release()
	rowBytes := moved.Bytes() / int64(nIdx)
	da, sa := b.arg(dst, true), b.arg(src, false)
	w := wordSize(rowBytes, da.Offset, sa.Offset)
	da.Align, sa.Align = w, w
	k := KargsRows{RowWords: uint64(rowBytes / int64(w)), WordSize: uint32(w), NIdx: uint32(nIdx), NRows: uint32(indexed.Dim(0)), IdxDt: dtCode(ix)}
	tg := int(min(k.RowWords, groupSize))
	groups := [3]int{int((k.RowWords + uint64(tg) - 1) / uint64(tg)), nIdx, 1}
	kernel := "kernel_gather_rows_"
	if !gather {
		kernel = "kernel_scatter_rows_"
	}
	b.encode(&Dispatch{Kernel: kernel + wordName(w), Args: []Arg{{Bytes: argBytes(k)}, sa, b.arg(ix, false), da},
		Groups: groups, Threads: [3]int{tg, 1, 1}})
}

// GatherRows sets dst[i] = src[idx[i]] along the outermost axis.
func (b *Backend) GatherRows(dst, src, idx *compute.Tensor) {
	b.rowsOp("GatherRows", dst, src, idx, true)
}

// ScatterRows sets dst[idx[i]] = src[i]; other rows of dst are unchanged.
func (b *Backend) ScatterRows(dst, src, idx *compute.Tensor) {
	b.rowsOp("ScatterRows", dst, src, idx, false)
}

// Pad copies x into dst with per-axis borders (zeros, reflect, replicate).
func (b *Backend) Pad(dst, x *compute.Tensor, p compute.PadParams) {
	compute.CheckPad(dst, x, p)
	r := x.Rank()
	n := int64(dst.NumElements())
	if n == 0 {
		return
	}
	if b.overlaps(dst, x) {
		panic(fmt.Sprintf("metal: Pad: %v and %v overlap", x, dst))
	}
	// Merge neighbouring axes that are not padded (they stay adjacent in both).
	var ds, xs, before []int
	var modes []compute.PadMode
	for a := 0; a < r; a++ {
		lo, hi, xd := p.BeforeAt(a), p.AfterAt(a), x.Dim(a)
		if n := len(ds); n > 0 && lo == 0 && hi == 0 && before[n-1] == 0 && ds[n-1] == xs[n-1] {
			ds[n-1] *= xd
			xs[n-1] *= xd
			continue
		}
		ds, xs, before, modes = append(ds, lo+xd+hi), append(xs, xd), append(before, lo), append(modes, p.ModeAt(a))
	}
	if len(ds) > MaxRank {
		b.onCPU(dst, func(c func(*compute.Tensor) *compute.Tensor) { b.ref.Pad(c(dst), c(x), p) })
		return
	}
	k := KargsPad{N: uint64(n), Rank: uint32(len(ds))}
	for a := range ds {
		k.DstShape[a], k.SrcShape[a], k.Before[a], k.Mode[a] = uint32(ds[a]), uint32(xs[a]), int32(before[a]), uint32(modes[a])
	}
	b.launch1("kernel_pad_"+wordName(x.DType().Size()), n, argBytes(k), false, b.arg(x, false), b.arg(dst, true))
}
