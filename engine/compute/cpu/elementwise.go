package cpu

import (
	"math"

	"h3studio/engine/compute"
)

func (b *Backend) binary(op string, dst, x, y *compute.Tensor, f func(a, b float32) float32) {
	period := compute.BroadcastLen(op, dst, x, y)
	b.dispatch(float64(dst.NumElements()))
	xs, ys := load(x), load(y)
	out := output(dst)
	if period == 0 {
		store(dst, out)
		return
	}
	b.parallel(len(out), 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = f(xs[i], ys[i%period])
		}
	})
	store(dst, out)
}

// Add computes a + b with suffix broadcasting.
func (b *Backend) Add(dst, x, y *compute.Tensor) {
	b.binary("Add", dst, x, y, func(a, b float32) float32 { return a + b })
}

// Mul computes a · b with suffix broadcasting.
func (b *Backend) Mul(dst, x, y *compute.Tensor) {
	b.binary("Mul", dst, x, y, func(a, b float32) float32 { return a * b })
}

// Scale computes x·alpha + beta (two float32 operations, one store rounding).
func (b *Backend) Scale(dst, x *compute.Tensor, alpha, beta float32) {
	compute.SameShape("Scale", dst, x)
	b.dispatch(2 * float64(dst.NumElements()))
	xs := load(x)
	out := output(dst)
	b.parallel(len(out), 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := xs[i] * alpha
			out[i] = v + beta
		}
	})
	store(dst, out)
}

// Clamp limits elements to [lo, hi]; NaN stays NaN.
func (b *Backend) Clamp(dst, x *compute.Tensor, lo, hi float32) {
	compute.SameShape("Clamp", dst, x)
	b.dispatch(float64(dst.NumElements()))
	xs := load(x)
	out := output(dst)
	for i, v := range xs {
		if v < lo {
			v = lo
		} else if v > hi {
			v = hi
		}
		out[i] = v
	}
	store(dst, out)
}

// UnaryFunc returns the float32 definition of op used by the CPU reference.
func UnaryFunc(op compute.UnaryOp) func(float32) float32 {
	switch op {
	case compute.Identity:
		return func(x float32) float32 { return x }
	case compute.SiLU:
		return func(x float32) float32 { return x / (1 + float32(math.Exp(float64(-x)))) }
	case compute.GELU:
		return func(x float32) float32 {
			return float32(0.5 * float64(x) * (1 + math.Erf(float64(x)/math.Sqrt2)))
		}
	case compute.GELUTanh:
		return func(x float32) float32 {
			x64 := float64(x)
			return float32(0.5 * x64 * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x64+0.044715*x64*x64*x64))))
		}
	case compute.Tanh:
		return func(x float32) float32 { return float32(math.Tanh(float64(x))) }
	case compute.Sigmoid:
		return func(x float32) float32 { return 1 / (1 + float32(math.Exp(float64(-x)))) }
	case compute.Exp:
		return func(x float32) float32 { return float32(math.Exp(float64(x))) }
	case compute.Neg:
		return func(x float32) float32 { return -x }
	case compute.Square:
		return func(x float32) float32 { return x * x }
	case compute.Sqrt:
		return func(x float32) float32 { return float32(math.Sqrt(float64(x))) }
	case compute.Rsqrt:
		return func(x float32) float32 { return float32(1 / math.Sqrt(float64(x))) }
	case compute.Sin:
		return func(x float32) float32 { return float32(math.Sin(float64(x))) }
	case compute.Cos:
		return func(x float32) float32 { return float32(math.Cos(float64(x))) }
	case compute.Abs:
		return func(x float32) float32 { return float32(math.Abs(float64(x))) }
	}
	panic("cpu: unknown unary op " + op.String())
}

// Unary applies op elementwise.
func (b *Backend) Unary(dst, x *compute.Tensor, op compute.UnaryOp) {
	compute.CheckUnary(dst, x, op)
	b.dispatch(4 * float64(dst.NumElements()))
	f := UnaryFunc(op)
	xs := load(x)
	out := output(dst)
	b.parallel(len(out), 1<<13, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = f(xs[i])
		}
	})
	store(dst, out)
}

// GLU computes act(gate)·up over the two halves of each row.
func (b *Backend) GLU(dst, x *compute.Tensor, act compute.UnaryOp, gateFirst bool) {
	rows, F := compute.GLUDims(dst, x, act)
	b.dispatch(6 * float64(dst.NumElements()))
	f := UnaryFunc(act)
	r := rounder(dst.DType())
	xs := load(x)
	out := output(dst)
	g, u := 0, F
	if !gateFirst {
		g, u = F, 0
	}
	b.parallel(rows, 16, func(lo, hi int) {
		for row := lo; row < hi; row++ {
			in := xs[row*2*F : (row+1)*2*F]
			o := out[row*F : (row+1)*F]
			for j := 0; j < F; j++ {
				o[j] = r(f(in[g+j])) * in[u+j]
			}
		}
	})
	store(dst, out)
}

// Snake computes x + 1/(a+1e-9)·sin²(a·x) (SnakeBeta: 1/(β+1e-9)) per channel.
func (b *Backend) Snake(dst, x, alpha, beta *compute.Tensor, logScale bool) {
	C, L := compute.SnakeDims(dst, x, alpha, beta)
	b.dispatch(8 * float64(dst.NumElements()))
	xs := load(x)
	al, be := load(alpha), loadOpt(beta)
	out := output(dst)
	// In float64 throughout, rounded once: the argument α·x is exact there,
	// and with |x| in the hundreds (the encoder's last stages) a float32
	// argument alone costs as much as a second rounding of the result.
	b.parallel(C, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			a := float64(al[c])
			if logScale {
				a = math.Exp(a)
			}
			d := a
			if be != nil {
				d = float64(be[c])
				if logScale {
					d = math.Exp(d)
				}
			}
			inv := 1 / (d + 1e-9)
			for i := c * L; i < (c+1)*L; i++ {
				v := float64(xs[i])
				s := math.Sin(a * v)
				out[i] = float32(v + inv*(s*s))
			}
		}
	})
	store(dst, out)
}
