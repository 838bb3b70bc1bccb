package compute

import "fmt"

// Buffer is backend-owned storage. Only the backend that made it interprets
// it; model code sees it only through Tensor.
type Buffer interface {
	// Backend is the backend that owns the storage.
	Backend() Backend
	// Size is the storage size in bytes.
	Size() int64
}

// Tensor is a dense, row-major view of a Buffer: an element type, a shape and
// a byte offset. A layout change is an explicit kernel (Transpose), never a
// stride trick. Tensors are small handles; copying one copies the view, not
// the data.
type Tensor struct {
	dtype DType
	shape Shape
	buf   Buffer
	off   int64
	name  string
	q     *quantView // non-nil for a quantized weight (quant.go)
}

// NewTensor wraps storage a backend owns. It is for backends; model code gets
// tensors from Backend.Alloc, Backend.Wrap or a checkpoint binder. It panics
// when the view does not fit the buffer.
func NewTensor(dt DType, shape Shape, buf Buffer, off int64) *Tensor {
	t := &Tensor{dtype: dt, shape: shape.Clone(), buf: buf, off: off}
	if buf != nil && off+t.Bytes() > buf.Size() {
		panic(fmt.Sprintf("compute: view %v%v at offset %d overruns a %d-byte buffer", dt, shape, off, buf.Size()))
	}
	return t
}

// DType is the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Shape returns a copy of the dimensions.
func (t *Tensor) Shape() Shape { return t.shape.Clone() }

// Rank is the number of dimensions.
func (t *Tensor) Rank() int { return len(t.shape) }

// Dim returns the size of axis; negative axes count from the end.
func (t *Tensor) Dim(axis int) int { return t.shape.Dim(axis) }

// NumElements is the number of elements.
func (t *Tensor) NumElements() int { return t.shape.NumElements() }

// Bytes is the size of the tensor's data in bytes.
func (t *Tensor) Bytes() int64 { return int64(t.shape.NumElements()) * int64(t.dtype.Size()) }

// Buffer returns the storage and the byte offset of the first element.
func (t *Tensor) Buffer() (Buffer, int64) { return t.buf, t.off }

// Backend is the backend owning the storage (nil for a tensor without one).
func (t *Tensor) Backend() Backend {
	if t.buf == nil {
		return nil
	}
	return t.buf.Backend()
}

// Name is the checkpoint or debug name, shown in panics and dumps.
func (t *Tensor) Name() string { return t.name }

// SetName sets the debug name and returns t.
func (t *Tensor) SetName(name string) *Tensor { t.name = name; return t }

// String describes the tensor, e.g. "blocks.0.norm1.weight BF16[64]".
func (t *Tensor) String() string {
	if t == nil {
		return "<nil tensor>"
	}
	desc := t.dtype.String() + t.shape.String()
	if t.q != nil {
		desc = fmt.Sprintf("%s[%d, %d] in %s", t.q.f, t.shape[0], t.q.in, desc)
	}
	if t.name != "" {
		return t.name + " " + desc
	}
	return desc
}

// Reshape returns a view with the same data and a new shape. One dimension may
// be -1 and is inferred. It panics when the element counts differ.
func (t *Tensor) Reshape(shape ...int) *Tensor {
	s := Shape(append([]int(nil), shape...))
	if t.q != nil && !s.Equal(t.shape) {
		panic(fmt.Sprintf("compute: reshape of the quantized weight %v", t))
	}
	infer := -1
	n := 1
	for i, d := range s {
		if d == -1 {
			if infer >= 0 {
				panic(fmt.Sprintf("compute: reshape %v to %v: more than one -1", t, s))
			}
			infer = i
			continue
		}
		n *= d
	}
	if infer >= 0 {
		if n == 0 || t.NumElements()%n != 0 {
			panic(fmt.Sprintf("compute: reshape %v to %v: cannot infer", t, s))
		}
		s[infer] = t.NumElements() / n
	}
	if s.NumElements() != t.NumElements() {
		panic(fmt.Sprintf("compute: reshape %v to %v: element counts differ", t, s))
	}
	return &Tensor{dtype: t.dtype, shape: s, buf: t.buf, off: t.off, name: t.name, q: t.q}
}

// Rows returns the contiguous view of indices [i, j) of the outermost axis.
func (t *Tensor) Rows(i, j int) *Tensor {
	if len(t.shape) == 0 || i < 0 || j < i || j > t.shape[0] {
		panic(fmt.Sprintf("compute: rows [%d, %d) of %v", i, j, t))
	}
	inner := int64(1)
	for _, d := range t.shape[1:] {
		inner *= int64(d)
	}
	s := t.shape.Clone()
	s[0] = j - i
	return &Tensor{dtype: t.dtype, shape: s, buf: t.buf, off: t.off + int64(i)*inner*int64(t.dtype.Size()), name: t.name, q: t.q}
}

// Row returns the view of index i of the outermost axis, with that axis removed.
func (t *Tensor) Row(i int) *Tensor {
	v := t.Rows(i, i+1)
	if v.q != nil {
		panic(fmt.Sprintf("compute: row %d of the quantized weight %v", i, t))
	}
	v.shape = v.shape[1:]
	return v
}

// SameShape panics unless every tensor has the shape of the first. It is the
// check kernels use; the message names the op and every operand.
func SameShape(op string, ts ...*Tensor) {
	for _, x := range ts[1:] {
		if !x.shape.Equal(ts[0].shape) {
			panic(fmt.Sprintf("compute: %s: shape mismatch: %v vs %v", op, ts[0], x))
		}
	}
}

// Check panics with a message naming the op when cond is false.
func Check(cond bool, op string, format string, args ...any) {
	if !cond {
		panic(fmt.Sprintf("compute: %s: %s", op, fmt.Sprintf(format, args...)))
	}
}
