package nn

import "h3studio/engine/compute"

// LowRank is an additive update of a linear layer's output (a LoRA):
// y += Scale·((x·Aᵀ)·Bᵀ + Bias), with A [rank, in] and B [out, rank]. A nil
// A makes B a full-rank delta [out, in] (y += Scale·(x·Bᵀ + Bias)); B and
// Bias may each be nil. Applied at run time it keeps the whole update
// whatever precision or quantization the base weight is stored in. The
// operations round as PEFT's BF16 chain does: lora_A(x), lora_B(·), the
// scaling and the sum each round to the activation dtype.
type LowRank struct {
	A, B  *compute.Tensor
	Bias  *compute.Tensor // [out] or nil
	Scale float32
}

// Down is the rank-side product x·Aᵀ [rows, rank] (x itself for a full
// delta), computed once per input and shared by every output slice.
func (u LowRank) Down(k compute.Kernels, a *Arena, x *compute.Tensor) *compute.Tensor {
	if u.A == nil {
		return x
	}
	t := a.New(x.DType(), x.Shape().Rows(), u.A.Dim(0))
	k.MatMul(t, x, u.A, nil)
	return t
}

// Up adds Scale·(t·B[r0:r1]ᵀ + Bias[r0:r1]) into dst [rows, r1−r0], where t
// is Down's result.
func (u LowRank) Up(k compute.Kernels, a *Arena, dst, t *compute.Tensor, r0, r1 int) {
	d := a.Like(dst)
	var bias *compute.Tensor
	if u.Bias != nil {
		bias = u.Bias.Rows(r0, r1)
	}
	switch {
	case u.B != nil:
		k.MatMul(d, t, u.B.Rows(r0, r1), bias)
	case bias != nil:
		k.Fill(d, 0)
		k.Add(d, d, bias)
	default:
		k.Fill(d, 0)
	}
	if u.Scale != 1 {
		k.Scale(d, d, u.Scale, 0)
	}
	k.Add(dst, dst, d)
	a.Free(d)
}

// AddLowRank adds every update of us to dst = x·Wᵀ (all output rows).
func AddLowRank(k compute.Kernels, a *Arena, dst, x *compute.Tensor, us []LowRank) {
	out := dst.Dim(-1)
	d := dst.Reshape(dst.Shape().Rows(), out)
	for _, u := range us {
		t := u.Down(k, a, x)
		u.Up(k, a, d, t, 0, out)
		if t != x {
			a.Free(t)
		}
	}
}
