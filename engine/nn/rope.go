package nn

// DuplicateHalves widens a rotary table stored as one half per row,
// [n, half], to the reference's [n, 2·half] layout (each row's angles
// repeated), for traces compared with the reference's tables.
func DuplicateHalves(v []float32, half int) []float32 {
	n := len(v) / half
	out := make([]float32, 2*len(v))
	for i := 0; i < n; i++ {
		copy(out[2*i*half:], v[i*half:(i+1)*half])
		copy(out[(2*i+1)*half:], v[i*half:(i+1)*half])
	}
	return out
}
