package dit

import "h3studio/engine/compute"

// The DiT runs the fused kernels of compute.Fused by default; each fusion
// keeps its unfused kernel sequence as a named oracle (house rule 10). The
// fused kernels are bit-identical to their sequences on the CPU reference
// (and on the Metal kernels as emulated), so every oracle must reproduce
// the default path's output exactly; they exist to isolate a fused kernel
// when a device disagrees.
var (
	// OracleUnfused turns every DiT fusion off.
	OracleUnfused = compute.RegisterOracle("dit-unfused",
		"DiT: every fused kernel replaced by its unfused kernel sequence (all dit-unfused-* oracles)")
	// OracleUnfusedAdaLN runs RMSNorm then Modulate for the AdaLN pre-norms
	// and the final layer instead of RMSNormModulate.
	OracleUnfusedAdaLN = compute.RegisterOracle("dit-unfused-adaln",
		"DiT: AdaLN pre-norms as RMSNorm + Modulate instead of the fused RMSNormModulate")
	// OracleUnfusedGateAdaLN runs GatedAdd, RMSNorm and Modulate for the
	// attention residual and the MLP pre-norm of a block instead of
	// GatedAddRMSNormModulate.
	OracleUnfusedGateAdaLN = compute.RegisterOracle("dit-unfused-gate-adaln",
		"DiT: attention residual gate and MLP pre-norm as GatedAdd + RMSNorm + Modulate instead of GatedAddRMSNormModulate")
	// OracleUnfusedCrossBlock stops the MLP residual of a block from also
	// writing the next block's attention pre-norm (each block then starts
	// with its own AdaLN pre-norm).
	OracleUnfusedCrossBlock = compute.RegisterOracle("dit-unfused-cross-block",
		"DiT: no fusion of a block's MLP residual gate with the next block's attention pre-norm")
	// OracleUnfusedQKRoPE splits the QKV projection with Transpose and Copy
	// and runs the QK-norms and rotary embeddings as four kernels instead of
	// QKNormRoPE.
	OracleUnfusedQKRoPE = compute.RegisterOracle("dit-unfused-qk-rope",
		"DiT: QKV split by Transpose + Copy, QK-norm and RoPE as separate kernels instead of the fused QKNormRoPE")
)

// fusions says which fused kernels the layers use.
type fusions struct {
	adaLN, gate, cross, qk bool
}

func fusionsOf(o compute.Oracles) fusions {
	off := func(x compute.Oracle) bool { return o.Has(OracleUnfused) || o.Has(x) }
	return fusions{
		adaLN: !off(OracleUnfusedAdaLN),
		gate:  !off(OracleUnfusedGateAdaLN),
		cross: !off(OracleUnfusedCrossBlock),
		qk:    !off(OracleUnfusedQKRoPE),
	}
}

// adaLN writes norm(x)·(1 + scale) + shift into dst, fused or as the
// two-kernel sequence.
func adaLN(k compute.Kernels, fused bool, dst, x *compute.Tensor, p compute.NormModulation) {
	if fused {
		k.RMSNormModulate(dst, x, p)
		return
	}
	compute.UnfusedRMSNormModulate(k, dst, x, p)
}
