package metal

import "unsafe"

// Kernel-argument structs: the Go view of shaders/kargs.h. Each mirrors the
// MSL struct of the same name (kargs_rms_norm ↔ KargsRmsNorm, field n_rows ↔
// NRows) field by field; kargs_test.go parses kargs.h and fails when order,
// types, offsets or sizes disagree. Both platforms lay these structs out with
// natural alignment, as the Metal compiler does.

// Storage type codes (kargs.h DT_*) are compute.DType values; unary op codes
// (OP_*) are compute.UnaryOp values; border codes (PAD_*) are
// compute.PadMode values. The test checks all three.

// MaxRank is kargs.h MAX_RANK.
const MaxRank = 6

// KargsConvert is kargs_convert.
type KargsConvert struct {
	N     uint64
	SrcDt uint32
	DstDt uint32
}

// KargsCopy is kargs_copy.
type KargsCopy struct {
	N uint64
}

// KargsFill is kargs_fill.
type KargsFill struct {
	N       uint64
	Pattern uint64
}

// KargsTranspose is kargs_transpose.
type KargsTranspose struct {
	N         uint64
	SrcStride [MaxRank]uint64
	DstShape  [MaxRank]uint32
	Rank      uint32
	Pad       uint32
}

// KargsPad is kargs_pad.
type KargsPad struct {
	N        uint64
	DstShape [MaxRank]uint32
	SrcShape [MaxRank]uint32
	Before   [MaxRank]int32
	Mode     [MaxRank]uint32
	Rank     uint32
	Pad      uint32
}

// KargsRows is kargs_rows.
type KargsRows struct {
	RowWords uint64
	WordSize uint32
	NIdx     uint32
	NRows    uint32
	IdxDt    uint32
}

// KargsBinary is kargs_binary.
type KargsBinary struct {
	N      uint64
	Period uint64
	BDt    uint32
	Pad    uint32
}

// KargsScale is kargs_scale.
type KargsScale struct {
	N     uint64
	Alpha float32
	Beta  float32
}

// KargsClamp is kargs_clamp.
type KargsClamp struct {
	N  uint64
	Lo float32
	Hi float32
}

// KargsUnary is kargs_unary.
type KargsUnary struct {
	N   uint64
	Op  uint32
	Pad uint32
}

// KargsGlu is kargs_glu.
type KargsGlu struct {
	N         uint64
	F         uint32
	Act       uint32
	GateFirst uint32
	Pad       uint32
}

// KargsModulate is kargs_modulate.
type KargsModulate struct {
	N         uint64
	H         uint32
	TableW    uint32
	TableRows uint32
	ShiftCol  uint32
	ScaleCol  uint32
	TableDt   uint32
	IdxDt     uint32
	Pad       uint32
}

// KargsGatedAdd is kargs_gated_add.
type KargsGatedAdd struct {
	N         uint64
	H         uint32
	TableW    uint32
	TableRows uint32
	GateCol   uint32
	TableDt   uint32
	IdxDt     uint32
	YDt       uint32
	Pad       uint32
}

// KargsRope is kargs_rope.
type KargsRope struct {
	Rows   uint64
	S      uint32
	D      uint32
	RotDim uint32
	CsDt   uint32
}

// KargsSnake is kargs_snake.
type KargsSnake struct {
	N        uint64
	L        uint64
	AlphaDt  uint32
	BetaDt   uint32
	HasBeta  uint32
	LogScale uint32
}

// KargsNorm is kargs_norm.
type KargsNorm struct {
	Rows uint32
	D    uint32
	Eps  float32
	WDt  uint32
	BDt  uint32
	HasW uint32
	HasB uint32
	Pad  uint32
}

// KargsGroupNorm is kargs_group_norm.
type KargsGroupNorm struct {
	L      uint64
	N      uint64
	C      uint32
	Groups uint32
	Eps    float32
	WDt    uint32
	BDt    uint32
	HasW   uint32
	HasB   uint32
	Pad    uint32
}

// KargsGemm is kargs_gemm.
type KargsGemm struct {
	InProd    uint64
	OutProd   uint64
	M         uint32
	N         uint32
	K         uint32
	InSize    [3]uint32
	OutSize   [3]uint32
	Ker       [3]uint32
	Stride    [3]int32
	Dil       [3]int32
	PadBefore [3]int32
	Nsp       uint32
	CinG      uint32
	CoutG     uint32
	Kprod     uint32
	PadMode   uint32
	BiasDt    uint32
	HasBias   uint32
}

// KargsAttention is kargs_attention.
type KargsAttention struct {
	Hq         uint32
	Hkv        uint32
	Sq         uint32
	Sk         uint32
	D          uint32
	Scale      float32
	Causal     uint32
	RoundProbs uint32
	Tile0      uint32 // first query tile of the dispatch
}

// KargsNormModulate is kargs_norm_modulate.
type KargsNormModulate struct {
	Rows      uint32
	D         uint32
	Eps       float32
	WDt       uint32
	HasW      uint32
	TableW    uint32
	TableRows uint32
	ShiftCol  uint32
	ScaleCol  uint32
	TableDt   uint32
	IdxDt     uint32
	Pad       uint32
}

// KargsGatedNormModulate is kargs_gated_norm_modulate.
type KargsGatedNormModulate struct {
	Rows      uint32
	D         uint32
	Eps       float32
	WDt       uint32
	HasW      uint32
	TableW    uint32
	TableRows uint32
	ShiftCol  uint32
	ScaleCol  uint32
	TableDt   uint32
	IdxDt     uint32
	GateW     uint32
	GateRows  uint32
	GateCol   uint32
	GateDt    uint32
	YDt       uint32
}

// KargsQkNormRope is kargs_qk_norm_rope.
type KargsQkNormRope struct {
	S      uint32
	Heads  uint32
	D      uint32
	Layout uint32
	Eps    float32
	QWDt   uint32
	HasQW  uint32
	KWDt   uint32
	HasKW  uint32
	RotDim uint32
	CosDt  uint32
	SinDt  uint32
}

// Kargs lists one value of every kernel-argument struct (for the layout test).
func Kargs() []any {
	return []any{KargsConvert{}, KargsCopy{}, KargsFill{}, KargsTranspose{}, KargsPad{}, KargsRows{}, KargsBinary{},
		KargsScale{}, KargsClamp{}, KargsUnary{}, KargsGlu{}, KargsModulate{}, KargsGatedAdd{}, KargsRope{},
		KargsSnake{}, KargsNorm{}, KargsGroupNorm{}, KargsGemm{}, KargsAttention{},
		KargsNormModulate{}, KargsGatedNormModulate{}, KargsQkNormRope{}, KargsQgemm{}}
}

// argBytes returns a copy of a kargs struct's bytes (the layout is C's; the
// test proves it), for setBytes.
func argBytes[T any](v T) []byte {
	n := unsafe.Sizeof(v)
	b := make([]byte, n)
	copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&v)), n))
	return b
}
