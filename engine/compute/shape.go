package compute

import (
	"fmt"
	"strings"
)

// Shape lists the dimensions of a tensor, outermost first, as PyTorch and
// safetensors do. The rank is len(s); a scalar has rank 0 and one element.
type Shape []int

// NumElements is the product of the dimensions.
func (s Shape) NumElements() int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// Equal reports whether s and o have the same dimensions.
func (s Shape) Equal(o Shape) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i] != o[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy of s.
func (s Shape) Clone() Shape { return append(Shape(nil), s...) }

// Dim returns the size of axis; negative axes count from the end.
func (s Shape) Dim(axis int) int {
	if axis < 0 {
		axis += len(s)
	}
	return s[axis]
}

// Last is the size of the innermost axis (1 for a scalar).
func (s Shape) Last() int {
	if len(s) == 0 {
		return 1
	}
	return s[len(s)-1]
}

// Rows is the number of elements divided by the innermost dimension: the row
// count when the tensor is viewed as a matrix [rows, last].
func (s Shape) Rows() int {
	if len(s) == 0 {
		return 1
	}
	l := s[len(s)-1]
	if l == 0 {
		return 0
	}
	return s.NumElements() / l
}

// String formats s as "[2 3 4]".
func (s Shape) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
