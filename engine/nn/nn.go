// Package nn holds the small building blocks model components share: a
// Linear layer bound from a checkpoint and an Arena for activations. Model
// code is written against compute.Kernels; nn only removes repetition.
package nn

import (
	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// Linear is a torch Linear: y = x·Wᵀ + b with W [out, in].
type Linear struct {
	W *compute.Tensor // [out, in]
	B *compute.Tensor // [out] or nil
	// LoRA are low-rank updates added to the output after the base
	// projection, in order (whatever W's storage).
	LoRA []LowRank
}

// LoadLinear binds name.weight [out, in] (and name.bias [out] when bias) as
// dtype dt (compute.Invalid keeps the stored dtype).
func LoadLinear(w *safetensors.Binder, name string, dt compute.DType, out, in int, bias bool) Linear {
	var l Linear
	if dt == compute.Invalid {
		l.W = w.Tensor(name+".weight", out, in)
	} else {
		l.W = w.TensorAs(name+".weight", dt, out, in)
	}
	if bias {
		if dt == compute.Invalid {
			l.B = w.Tensor(name+".bias", out)
		} else {
			l.B = w.TensorAs(name+".bias", dt, out)
		}
	}
	return l
}

// Tensors are the projection's own weight and bias (nil where absent; the
// LoRA updates belong to their adapter), for freeing.
func (l Linear) Tensors() []*compute.Tensor { return []*compute.Tensor{l.W, l.B} }

// Out is the output width.
func (l Linear) Out() int { return l.W.Dim(0) }

// In is the input width.
func (l Linear) In() int { return l.W.Dim(1) }

// Forward records dst = x·Wᵀ + b.
func (l Linear) Forward(k compute.Kernels, dst, x *compute.Tensor) {
	k.MatMul(dst, x, l.W, l.B)
	if len(l.LoRA) > 0 {
		a := NewArena(x.Backend())
		AddLowRank(k, a, dst, x, l.LoRA)
		a.Release()
	}
}

// Arena allocates activations and frees them together. Allocation failures
// panic with *compute.AllocError; convert them at the entry point with
// `defer compute.Recover(&err)`. Not safe for concurrent use.
type Arena struct {
	b    compute.Backend
	live []*compute.Tensor
}

// NewArena returns an arena on b.
func NewArena(b compute.Backend) *Arena { return &Arena{b: b} }

// New allocates a tensor owned by the arena.
func (a *Arena) New(dt compute.DType, shape ...int) *compute.Tensor {
	t := compute.MustAlloc(a.b, dt, shape...)
	a.live = append(a.live, t)
	return t
}

// Like allocates a tensor with t's dtype and shape.
func (a *Arena) Like(t *compute.Tensor) *compute.Tensor { return a.New(t.DType(), t.Shape()...) }

// Keep removes t from the arena so Release does not free it.
func (a *Arena) Keep(t *compute.Tensor) *compute.Tensor {
	for i, x := range a.live {
		if x == t {
			a.live = append(a.live[:i], a.live[i+1:]...)
			break
		}
	}
	return t
}

// Free frees ts now, one at a time, and removes them from the arena: a pass
// drops each intermediate as soon as it is consumed to keep its peak
// storage near the live activations. A tensor the arena does not own is
// freed too.
func (a *Arena) Free(ts ...*compute.Tensor) {
	for _, t := range ts {
		a.b.Free(a.Keep(t))
	}
}

// Release frees every tensor the arena still owns.
func (a *Arena) Release() {
	a.b.Free(a.live...)
	a.live = a.live[:0]
}

// Backend is the arena's backend.
func (a *Arena) Backend() compute.Backend { return a.b }
