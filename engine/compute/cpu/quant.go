package cpu

import (
	"encoding/binary"
	"unsafe"

	"h3studio/engine/compute"
)

// The quantized weights of MatMul (compute.Quantized): the blocked GEMM
// reads them through a packer that dequantizes each 16-column × 256-k panel
// while packing it, so the float32 weights exist only one panel at a time.
// k blocks (256) are whole groups (64), so a panel never splits a group.

// words returns the uint32 words of a U32 CPU tensor (a copy when the view
// is not 4-byte aligned).
func words(t *compute.Tensor) []uint32 {
	ok := t.DType() == compute.U32
	if b := bytesOf(t); ok && len(b) > 0 && uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		w := make([]uint32, len(b)/4)
		for i := range w {
			w[i] = binary.LittleEndian.Uint32(b[4*i:])
		}
		return w
	}
	return view[uint32](t, "words", ok)
}

// packQuantRows packs B(n, k) = ŵ[n, k] of a quantized weight.
func packQuantRows(t *compute.Tensor) packer {
	f, K, _ := t.Quant()
	N := t.Dim(0)
	rw := f.RowWords(K)
	raw := words(t)
	pw := f.PerWord()
	bits := uint(f.Bits)
	mask := uint32(1)<<bits - 1
	cw := f.CodeWords(K)
	gw := f.GroupSize / pw
	pack := rowPacker(N, func(dst []float32, j, n, k0, kc int) {
		row := raw[n*rw : (n+1)*rw]
		for g := k0 / f.GroupSize; g < (k0+kc)/f.GroupSize; g++ {
			p := row[cw+g]
			s, b := compute.BF16ToF32(uint16(p)), compute.BF16ToF32(uint16(p>>16))
			base := (g*f.GroupSize - k0) * gemmNR
			codes := row[g*gw : (g+1)*gw]
			switch bits {
			case 8:
				for wi, w := range codes {
					d := dst[base+wi*4*gemmNR+j:]
					_ = d[3*gemmNR]
					d[0] = float32(float32(w&0xff)*s) + b
					d[gemmNR] = float32(float32(w>>8&0xff)*s) + b
					d[2*gemmNR] = float32(float32(w>>16&0xff)*s) + b
					d[3*gemmNR] = float32(float32(w>>24)*s) + b
				}
			case 4:
				for wi, w := range codes {
					d := dst[base+wi*8*gemmNR+j:]
					_ = d[7*gemmNR]
					d[0] = float32(float32(w&0xf)*s) + b
					d[gemmNR] = float32(float32(w>>4&0xf)*s) + b
					d[2*gemmNR] = float32(float32(w>>8&0xf)*s) + b
					d[3*gemmNR] = float32(float32(w>>12&0xf)*s) + b
					d[4*gemmNR] = float32(float32(w>>16&0xf)*s) + b
					d[5*gemmNR] = float32(float32(w>>20&0xf)*s) + b
					d[6*gemmNR] = float32(float32(w>>24&0xf)*s) + b
					d[7*gemmNR] = float32(float32(w>>28)*s) + b
				}
			default:
				for wi, w := range codes {
					d := dst[base+wi*pw*gemmNR+j:]
					for i := 0; i < pw; i++ {
						d[i*gemmNR] = float32(float32(w>>(uint(i)*bits)&mask)*s) + b
					}
				}
			}
		}
	})
	return func(dst []float32, n0, k0, kc int) {
		compute.Check(k0%f.GroupSize == 0 && (kc%f.GroupSize == 0 || k0+kc == K), "MatMul", "k block [%d, %d) splits a group of %d", k0, k0+kc, f.GroupSize)
		pack(dst, n0, k0, kc)
	}
}

// decodeQuantRows dequantizes rows [n0, n0+len(dst)/K) of a quantized weight.
func decodeQuantRows(dst []float32, t *compute.Tensor, n0 int) {
	f, K, _ := t.Quant()
	rw := f.RowWords(K)
	raw := words(t)
	for r := 0; r < len(dst)/K; r++ {
		f.DequantizeRow(dst[r*K:(r+1)*K], raw[(n0+r)*rw:(n0+r+1)*rw], K)
	}
}
