package metal

import (
	"context"
	"fmt"
	"strings"

	"h3studio/engine/compute"
)

// groupSize is the threadgroup size of one-thread-per-element kernels.
const groupSize = 256

// grid1 sizes a launch of n threads in groups of g: one grid row while the
// row stays below 2^31 threads, more rows beyond (kernels index with
// grid_index).
func grid1(n int64, g int) (groups, threads [3]int) {
	blocks := (n + int64(g) - 1) / int64(g)
	maxX := int64((1 << 31) / g)
	x := min(blocks, maxX)
	y := (blocks + x - 1) / x
	return [3]int{int(max(x, 1)), int(max(y, 1)), 1}, [3]int{g, 1, 1}
}

// launch1 records a one-thread-per-element kernel over n elements.
func (b *Backend) launch1(kernel string, n int64, kargs []byte, inPlace bool, args ...Arg) {
	if n == 0 {
		return
	}
	groups, threads := grid1(n, groupSize)
	b.encode(&Dispatch{Kernel: kernel, Args: append([]Arg{{Bytes: kargs}}, args...), Groups: groups, Threads: threads, InPlace: inPlace})
}

func isFloat(dt compute.DType) bool {
	return dt == compute.F32 || dt == compute.F16 || dt == compute.BF16
}

// tname is a float dtype's spelling in kernel names: f32, f16, bf16.
func tname(dt compute.DType) string {
	if !isFloat(dt) {
		panic(fmt.Sprintf("metal: no kernel type for %v", dt))
	}
	return strings.ToLower(dt.String())
}

// kname builds kernel_<op>_<in>_<out>.
func kname(op string, in, out compute.DType) string {
	return "kernel_" + op + "_" + tname(in) + "_" + tname(out)
}

// scratch allocates a temporary (panicking with *compute.AllocError, as
// compute.MustAlloc does, when the device is full).
func (b *Backend) scratch(dt compute.DType, shape ...int) *compute.Tensor {
	return compute.MustAlloc(b, dt, shape...)
}

// floatIn returns t when it is a float tensor, else an F32 copy (values
// converted as compute.DecodeFloat32 does) and the function freeing it.
func (b *Backend) floatIn(t *compute.Tensor) (*compute.Tensor, func()) {
	if t == nil || isFloat(t.DType()) {
		return t, func() {}
	}
	c := b.scratch(compute.F32, t.Shape()...)
	b.convertAny(c, t)
	return c, func() { b.Free(c) }
}

// asType returns t when it has dtype dt, else a converted copy.
func (b *Backend) asType(t *compute.Tensor, dt compute.DType) (*compute.Tensor, func()) {
	if t.DType() == dt {
		return t, func() {}
	}
	c := b.scratch(dt, t.Shape()...)
	b.Copy(c, t)
	return c, func() { b.Free(c) }
}

// floatOut runs f with dst when dst is a float tensor that overlaps none of
// the inputs that must not alias it; otherwise with an F32 (or same-type)
// scratch that is then copied into dst, rounding as compute.EncodeFloat32.
func (b *Backend) floatOut(dst *compute.Tensor, noAlias []*compute.Tensor, f func(out *compute.Tensor)) {
	clash := false
	for _, t := range noAlias {
		if t != nil && b.overlaps(dst, t) {
			clash = true
		}
	}
	if isFloat(dst.DType()) && !clash {
		f(dst)
		return
	}
	dt := compute.F32
	if isFloat(dst.DType()) {
		dt = dst.DType()
	}
	tmp := b.scratch(dt, dst.Shape()...)
	f(tmp)
	b.Copy(dst, tmp)
	b.Free(tmp)
}

// overlaps reports whether two tensors share bytes of one device buffer.
func (b *Backend) overlaps(x, y *compute.Tensor) bool {
	ux, ox := b.storage(x)
	uy, oy := b.storage(y)
	if ux.dev != uy.dev || x.Bytes() == 0 || y.Bytes() == 0 {
		return false
	}
	sx, sy := ux.off+ox, uy.off+oy
	return sx < sy+y.Bytes() && sy < sx+x.Bytes()
}

// indexTensor returns idx when it is I32 or I64, else an I32 copy.
func (b *Backend) indexTensor(op string, idx *compute.Tensor) (*compute.Tensor, func()) {
	compute.Check(idx.DType().IsInt(), op, "index tensor %v is not integer", idx)
	if idx.DType() == compute.I32 || idx.DType() == compute.I64 {
		return idx, func() {}
	}
	c := b.scratch(compute.I32, idx.Shape()...)
	b.convertAny(c, idx)
	return c, func() { b.Free(c) }
}

// onCPU runs an operation on the CPU reference: the tensors it touches are
// copied to CPU tensors, run executes with cpuOf mapping each Metal tensor to
// its copy, and dst is copied back. It is the path for configurations no
// kernel covers; Stats counts it as a CPU fallback.
func (b *Backend) onCPU(dst *compute.Tensor, run func(cpuOf func(*compute.Tensor) *compute.Tensor)) {
	b.fallbacks.Add(1)
	if err := b.dev.Wait(context.Background()); err != nil {
		b.fail(err)
		return
	}
	copies := map[*compute.Tensor]*compute.Tensor{}
	cpuOf := func(t *compute.Tensor) *compute.Tensor {
		if t == nil {
			return nil
		}
		if c, ok := copies[t]; ok {
			return c
		}
		c, err := b.ref.Wrap(t.DType(), t.Shape(), append([]byte(nil), b.hostBytes(t)...))
		if err != nil {
			panic(err)
		}
		copies[t] = c
		return c
	}
	run(cpuOf)
	copy(b.hostBytes(dst), b.refBytes(cpuOf(dst)))
}

func (b *Backend) refBytes(t *compute.Tensor) []byte {
	out := make([]byte, t.Bytes())
	if err := b.ref.Download(out, t); err != nil {
		panic(err)
	}
	return out
}

// wordSize is the largest of 8, 4, 2, 1 dividing n and every offset.
func wordSize(n int64, offs ...int64) int {
	for _, w := range []int64{8, 4, 2} {
		ok := n%w == 0
		for _, o := range offs {
			ok = ok && o%w == 0
		}
		if ok {
			return int(w)
		}
	}
	return 1
}

func wordName(w int) string { return fmt.Sprintf("u%d", 8*w) }
