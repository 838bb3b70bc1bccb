package dit

import (
	"encoding/binary"

	"h3studio/engine/compute"
	"h3studio/engine/quant"
	"h3studio/engine/safetensors"
)

// bindWeight binds the linear weight name.weight [out, in]: as dt when q
// has no bits, else quantized to q (Options.Quant). A quantized weight
// comes from MLX's form when the source holds it (name.weight U32 codes,
// name.scales and name.biases: an MLX-format file or the quantized cache)
// and is quantized from the stored BF16 weight otherwise; a data-less
// planning source yields storage of the quantized size. A width q's group
// does not divide is quantized in groups of 32 (compute.QuantFormat.ForWidth).
func bindWeight(w *safetensors.Binder, name string, dt compute.DType, q compute.QuantFormat, out, in int) *compute.Tensor {
	if q.Bits == 0 {
		return w.TensorAs(name+".weight", dt, out, in)
	}
	q, ok := q.ForWidth(in)
	if !ok {
		return w.TensorAs(name+".weight", dt, out, in)
	}
	b := w.Backend()
	var rows []uint32
	if w.Has(name + ".scales") {
		_, wd, ok1 := w.Raw(name+".weight", out, q.CodeWords(in))
		_, sd, ok2 := w.Raw(name+".scales", out, q.Groups(in))
		_, bd, ok3 := w.Raw(name+".biases", out, q.Groups(in))
		if !ok1 || !ok2 || !ok3 {
			return nil
		}
		if wd != nil {
			m := quant.MLX{Weight: u32s(wd), Scales: u16s(sd), Biases: u16s(bd)}
			var err error
			if rows, err = quant.FromMLX(m, out, in, q); err != nil {
				w.Fail("%s: %v", name, err)
				return nil
			}
		}
	} else {
		info, data, ok := w.Raw(name+".weight", out, in)
		if !ok {
			return nil
		}
		if data != nil {
			var err error
			if rows, err = quant.Quantize(compute.DecodeFloat32(info.DType, data), out, in, q); err != nil {
				w.Fail("%s: %v", name, err)
				return nil
			}
		}
	}
	st, err := b.Alloc(compute.U32, out, q.RowWords(in))
	if err != nil {
		panic(err)
	}
	if rows != nil {
		raw := make([]byte, 4*len(rows))
		for i, v := range rows {
			binary.LittleEndian.PutUint32(raw[4*i:], v)
		}
		if err := b.Upload(st, raw); err != nil {
			w.Fail("%s: %v", name, err)
			return nil
		}
	}
	return compute.Quantized(st, q, in).SetName(name + ".weight")
}

// inWidth is a weight's input width (a quantized weight's logical one).
func inWidth(t *compute.Tensor) int {
	if _, in, ok := t.Quant(); ok {
		return in
	}
	return t.Dim(1)
}

func u32s(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func u16s(b []byte) []uint16 {
	v := make([]uint16, len(b)/2)
	for i := range v {
		v[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return v
}
