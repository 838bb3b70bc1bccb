package dit

import (
	"encoding/binary"
	"strings"

	"h3studio/engine/compute"
	"h3studio/engine/quant"
	"h3studio/engine/safetensors"
)

// bindWeight binds the linear weight name.weight [out, in]: as dt when q
// has no bits, else quantized to q (Options.Quant). A quantized weight
// comes from MLX's form when the source holds it (name.scales and
// name.biases with the U32 codes in name.qweight — the quantized cache,
// quant.Overlay — or in name.weight, as an MLX-format file names them)
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
	if w.Has(name + quant.SuffixScales) {
		codes := name + ".weight" // an MLX-format file
		if w.Has(name + quant.SuffixCodes) {
			codes = name + quant.SuffixCodes // the quantized cache (quant.Overlay)
		}
		_, wd, ok1 := w.Raw(codes, out, q.CodeWords(in))
		_, sd, ok2 := w.Raw(name+quant.SuffixScales, out, q.Groups(in))
		_, bd, ok3 := w.Raw(name+quant.SuffixBiases, out, q.Groups(in))
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
			// rows is a copy: the mapped codes are not read again.
			w.Release(codes, name+quant.SuffixScales, name+quant.SuffixBiases)
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
			w.Release(name + ".weight") // quantized into rows: the BF16 bytes are not read again
		}
	}
	st, err := b.Alloc(compute.U32, out, q.RowWords(in))
	compute.Try(err)
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

// QuantizedWeight reports whether the checkpoint tensor name is one that
// Options.Quant quantizes: an attention or feed-forward projection weight
// of a block or token-refiner block, in either layout (the quantized
// cache's selection, quant.BuildOptions.Select).
func QuantizedWeight(name string) bool {
	for _, l := range []WeightLayout{OriginalLayout, DiffusersLayout} {
		n := names{l}
		if !strings.HasPrefix(name, strings.SplitN(n.block(0), "0", 2)[0]) && !strings.HasPrefix(name, strings.SplitN(n.refinerBlock(0), "0", 2)[0]) {
			continue
		}
		s := n.qkvSplit()
		for _, suf := range []string{n.qkvFused(), s[0], s[1], s[2], n.attnOut(), n.fc1(), n.fc2()} {
			if strings.HasSuffix(name, "."+suf+".weight") {
				return true
			}
		}
	}
	return false
}

// checkMLXWeight checks an MLX-format quantized weight name (U32 codes
// [out, in·bits/32] with name's .scales and .biases [out, in/group]) of the
// expected float shape [out, in] against the format q the model is opened
// with, and marks its scales and biases used.
func checkMLXWeight(w *safetensors.Binder, name string, info safetensors.TensorInfo, shape []int, q compute.QuantFormat) {
	base := strings.TrimSuffix(name, ".weight")
	out, in := shape[0], shape[1]
	if len(info.Shape) != 2 || info.Shape[0] != out || info.Shape[1] <= 0 || (32*info.Shape[1])%in != 0 {
		w.Fail("%s: U32%v is not the MLX quantization of a [%d, %d] weight", name, info.Shape, out, in)
		return
	}
	bits := 32 * info.Shape[1] / in
	if q.Bits == 0 {
		w.Fail("%s: quantized to %d bits (MLX format): open it with --quant int%d", name, bits, bits)
		return
	}
	g, ok := q.ForWidth(in)
	if !ok || g.Bits != bits {
		w.Fail("%s: quantized to %d bits (MLX format), opened as %s", name, bits, q)
		return
	}
	for _, suf := range []string{quant.SuffixScales, quant.SuffixBiases} {
		si, ok := w.Info(base + suf)
		if !ok || si.DType != compute.BF16 || !si.Shape.Equal(compute.Shape{out, g.Groups(in)}) {
			w.Fail("%s%s: want BF16[%d, %d] (MLX %s, group %d)", base, suf, out, g.Groups(in), q, g.GroupSize)
			continue
		}
		w.Skip(base + suf)
	}
}
