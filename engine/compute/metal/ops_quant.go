package metal

import "h3studio/engine/compute"

// quantMatMul multiplies by a quantized weight (compute.Quantized). No
// Metal kernel covers it yet: it runs on the CPU reference (counted in
// Stats.CPUFallbacks), which dequantizes in the GEMM's panel loads.
func (b *Backend) quantMatMul(dst, x, w, bias *compute.Tensor) {
	b.onCPU(dst, func(cpuOf func(*compute.Tensor) *compute.Tensor) {
		f, in, _ := w.Quant()
		b.ref.MatMul(cpuOf(dst), cpuOf(x), compute.Quantized(cpuOf(w), f, in), cpuOf(bias))
	})
}
