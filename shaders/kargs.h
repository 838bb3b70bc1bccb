// kargs.h: the kernel-argument structs of H3 Studio's shaders, defined once.
//
// Every kernel takes its struct as `constant kargs_<op>& args [[buffer(0)]]`.
// engine/compute/metal/kargs.go mirrors each struct field by field
// (kargs_rms_norm ↔ KargsRMSNorm; field n_rows ↔ NRows) and a test parses this
// file and fails when the two views disagree in field order, types, offsets or
// sizes. Keep to scalars (uint, int, float, ulong, long) and fixed arrays of
// them, 8-byte fields first, so that C and Go lay the structs out alike.
#ifndef H3_KARGS_H
#define H3_KARGS_H

// Storage types: the values of compute.DType.
#define DT_F32 1u
#define DT_F16 2u
#define DT_BF16 3u
#define DT_F64 4u
#define DT_I64 5u
#define DT_I32 6u
#define DT_U8 7u
#define DT_I8 8u
#define DT_BOOL 9u

// Unary operations: the values of compute.UnaryOp.
#define OP_IDENTITY 0u
#define OP_SILU 1u
#define OP_GELU 2u
#define OP_GELU_TANH 3u
#define OP_TANH 4u
#define OP_SIGMOID 5u
#define OP_EXP 6u
#define OP_NEG 7u
#define OP_SQUARE 8u
#define OP_SQRT 9u
#define OP_RSQRT 10u
#define OP_SIN 11u
#define OP_COS 12u
#define OP_ABS 13u

// Convolution border rules: the values of compute.PadMode.
#define PAD_ZEROS 0u
#define PAD_REFLECT 1u
#define PAD_REPLICATE 2u

// The most axes a transpose handles after merging axes that stay adjacent.
#define MAX_RANK 6

// copy.metal: n elements (or bytes), element types by code.
struct kargs_convert {
    ulong n;
    uint src_dt;
    uint dst_dt;
};

struct kargs_copy {
    ulong n; // words
};

struct kargs_fill {
    ulong n;
    ulong pattern; // the element's bytes, little-endian
};

// movement.metal
struct kargs_transpose {
    ulong n;
    ulong src_stride[MAX_RANK]; // element stride in src of each dst axis
    uint dst_shape[MAX_RANK];
    uint rank;
    uint pad;
};

struct kargs_pad {
    ulong n; // dst elements
    uint dst_shape[MAX_RANK];
    uint src_shape[MAX_RANK];
    int before[MAX_RANK];
    uint mode[MAX_RANK]; // PAD_*
    uint rank;
    uint pad;
};

struct kargs_rows {
    ulong row_words; // words per row
    uint word_size; // bytes per word: 1, 2, 4 or 8
    uint n_idx; // indices (rows moved)
    uint n_rows; // rows of the indexed tensor (src for gather, dst for scatter)
    uint idx_dt;
};

// elementwise.metal
struct kargs_binary {
    ulong n;
    ulong period; // elements of b, broadcast over a's leading axes
    uint b_dt;
    uint pad;
};

struct kargs_scale {
    ulong n;
    float alpha;
    float beta;
};

struct kargs_clamp {
    ulong n;
    float lo;
    float hi;
};

struct kargs_unary {
    ulong n;
    uint op;
    uint pad;
};

struct kargs_glu {
    ulong n; // output elements
    uint f; // output row length; x rows hold 2f
    uint act;
    uint gate_first;
    uint pad;
};

// modulate.metal
struct kargs_modulate {
    ulong n; // elements of x
    uint h; // row length of x
    uint table_w; // row length of the table
    uint table_rows;
    uint shift_col;
    uint scale_col;
    uint table_dt;
    uint idx_dt;
    uint pad;
};

struct kargs_gated_add {
    ulong n;
    uint h;
    uint table_w;
    uint table_rows;
    uint gate_col;
    uint table_dt;
    uint idx_dt;
    uint y_dt;
    uint pad;
};

// rope.metal
struct kargs_rope {
    ulong rows; // rows of x (all leading axes)
    uint s; // positions: row r uses table row r % s
    uint d; // row length
    uint rot_dim;
    uint cs_dt;
};

// snake.metal
struct kargs_snake {
    ulong n;
    ulong l; // elements per channel
    uint alpha_dt;
    uint beta_dt;
    uint has_beta;
    uint log_scale;
};

// norm.metal
struct kargs_norm {
    uint rows;
    uint d;
    float eps;
    uint w_dt;
    uint b_dt;
    uint has_w;
    uint has_b;
    uint pad;
};

struct kargs_group_norm {
    ulong l; // positions per channel
    ulong n; // elements of x
    uint c;
    uint groups;
    float eps;
    uint w_dt;
    uint b_dt;
    uint has_w;
    uint has_b;
    uint pad;
};

// fused.metal: the fused DiT kernels (compute.Fused).
// QKV layouts: the values of compute.QKVLayout.
#define QKV_INTERLEAVED 0u
#define QKV_PLANAR 1u

// RMSNorm of rows of x, then AdaLN modulation by a per-row table row.
struct kargs_norm_modulate {
    uint rows; // rows of x
    uint d; // row length
    float eps;
    uint w_dt;
    uint has_w;
    uint table_w; // row length of the modulation table
    uint table_rows;
    uint shift_col;
    uint scale_col;
    uint table_dt;
    uint idx_dt;
    uint pad;
};

// Gated residual h = x + gate * y, then kargs_norm_modulate's step on h.
struct kargs_gated_norm_modulate {
    uint rows;
    uint d;
    float eps;
    uint w_dt;
    uint has_w;
    uint table_w;
    uint table_rows;
    uint shift_col;
    uint scale_col;
    uint table_dt;
    uint idx_dt;
    uint gate_w; // row length of the gate's table
    uint gate_rows;
    uint gate_col;
    uint gate_dt;
    uint y_dt;
};

// QKV projection [S, heads, 3, D] or [3, S, heads, D] to q, k, v [heads, S, D].
struct kargs_qk_norm_rope {
    uint s;
    uint heads;
    uint d;
    uint layout; // QKV_*
    float eps;
    uint q_w_dt;
    uint has_q_w;
    uint k_w_dt;
    uint has_k_w;
    uint rot_dim; // 0: no rotary embedding
    uint cos_dt;
    uint sin_dt;
};

// gemm.h (matmul.metal, conv.metal): an implicit matrix product per group,
// dst[m, n] = sum_k a[m, k] * b[n, k] + bias[n]. MatMul: a = x [M, K],
// b = w [N, K]. Conv and ConvTranspose: rows are output positions, columns
// output channels of the group, and the inner axis runs over (input channel
// of the group, kernel offset); a gathers x through the geometry below.
struct kargs_gemm {
    ulong in_prod; // input positions
    ulong out_prod; // output positions
    uint m;
    uint n;
    uint k;
    uint in_size[3]; // spatial sizes, outermost first; 1 past nsp
    uint out_size[3];
    uint ker[3];
    int stride[3];
    int dil[3];
    int pad_before[3];
    uint nsp;
    uint cin_g; // input channels per group
    uint cout_g; // output channels per group
    uint kprod; // kernel elements
    uint pad_mode;
    uint bias_dt;
    uint has_bias;
};

// attention.metal
struct kargs_attention {
    uint hq;
    uint hkv;
    uint sq;
    uint sk;
    uint d;
    float scale;
    uint causal;
    uint round_probs;
    uint tile0; // the first query tile of this dispatch (attention is split along query tiles)
};

// qmatmul.metal
struct kargs_qgemm {
    uint m;
    uint n;
    uint k;
    uint row_words; // uint32 words per weight row: the code words, then one per group
    uint code_words;
    uint group_size;
    uint bias_dt;
    uint has_bias;
};

#endif
