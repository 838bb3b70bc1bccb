// elementwise.metal: Add, Mul, Scale, Clamp, Unary and GLU (compute.Kernels).
//
// One thread per output element; the main input is Tin and the output Tout
// (every float pair is instantiated), other operands are read by dtype code.
// Each result is computed in float32 and rounded once when stored; dst may be
// the same view as an input (each thread reads its element before writing it).
#include "common.h"

// erfc_pos is erfc(z) for z >= 0 to a few float32 ulps: the Chebyshev fit of
// Press et al. (fractional error below 1.2e-7), with exp(-z*z) split as
// exp(-zh*zh) * exp((zh - z)*(z + zh)) so that the square loses nothing.
inline float erfc_pos(float z) {
    float t = 1.0f / (1.0f + 0.5f * z);
    float p = -1.26551223f + t * (1.00002368f + t * (0.37409196f + t * (0.09678418f +
              t * (-0.18628806f + t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f +
              t * (-0.82215223f + t * 0.17087277f))))))));
    float zh = as_type<float>(as_type<uint>(z) & 0xfffff000u);
    return t * precise::exp(-zh * zh) * precise::exp((zh - z) * (z + zh) + p);
}

// gelu_erf is x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt 2)), written through
// erfc so that both tails keep their relative accuracy.
inline float gelu_erf(float x) {
    float u = x * M_SQRT1_2_F;
    if (x >= 0.0f) {
        return 0.5f * x * (2.0f - erfc_pos(u));
    }
    return 0.5f * x * erfc_pos(-u);
}

// unary_op is compute.UnaryOp in float32 (the CPU reference evaluates the
// transcendental functions in float64 and rounds; results agree to ulps).
inline float unary_op(uint op, float x) {
    switch (op) {
    case OP_IDENTITY:
        return x;
    case OP_SILU:
        return x / (1.0f + precise::exp(-x));
    case OP_GELU:
        return gelu_erf(x);
    case OP_GELU_TANH:
        return 0.5f * x * (1.0f + precise::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case OP_TANH:
        return precise::tanh(x);
    case OP_SIGMOID:
        return 1.0f / (1.0f + precise::exp(-x));
    case OP_EXP:
        return precise::exp(x);
    case OP_NEG:
        return -x;
    case OP_SQUARE:
        return x * x;
    case OP_SQRT:
        return precise::sqrt(x);
    case OP_RSQRT:
        return precise::rsqrt(x);
    case OP_SIN:
        return precise::sin(x);
    case OP_COS:
        return precise::cos(x);
    default: // OP_ABS
        return abs(x);
    }
}

// dst = a + b, b broadcast over a's leading axes (b has period elements).
template <typename Tin, typename Tout>
kernel void kernel_add(constant kargs_binary& args [[buffer(0)]],
                       device const Tin* a [[buffer(1)]],
                       device const uchar* b [[buffer(2)]],
                       device Tout* dst [[buffer(3)]],
                       uint2 gid [[thread_position_in_grid]],
                       uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i >= args.n) {
        return;
    }
    ulong j = args.period == args.n ? i : i % args.period;
    dst[i] = st<Tout>(ld(a[i]) + load_any(b, args.b_dt, j));
}

template <typename Tin, typename Tout>
kernel void kernel_mul(constant kargs_binary& args [[buffer(0)]],
                       device const Tin* a [[buffer(1)]],
                       device const uchar* b [[buffer(2)]],
                       device Tout* dst [[buffer(3)]],
                       uint2 gid [[thread_position_in_grid]],
                       uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i >= args.n) {
        return;
    }
    ulong j = args.period == args.n ? i : i % args.period;
    dst[i] = st<Tout>(ld(a[i]) * load_any(b, args.b_dt, j));
}

// dst = x * alpha + beta: two float32 operations, as the reference.
template <typename Tin, typename Tout>
kernel void kernel_scale(constant kargs_scale& args [[buffer(0)]],
                         device const Tin* x [[buffer(1)]],
                         device Tout* dst [[buffer(2)]],
                         uint2 gid [[thread_position_in_grid]],
                         uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i >= args.n) {
        return;
    }
    float v = ld(x[i]) * args.alpha;
    dst[i] = st<Tout>(v + args.beta);
}

// Clamp to [lo, hi]; a NaN stays NaN (comparisons, not fmin/fmax).
template <typename Tin, typename Tout>
kernel void kernel_clamp(constant kargs_clamp& args [[buffer(0)]],
                         device const Tin* x [[buffer(1)]],
                         device Tout* dst [[buffer(2)]],
                         uint2 gid [[thread_position_in_grid]],
                         uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i >= args.n) {
        return;
    }
    float v = ld(x[i]);
    if (v < args.lo) {
        v = args.lo;
    } else if (v > args.hi) {
        v = args.hi;
    }
    dst[i] = st<Tout>(v);
}

template <typename Tin, typename Tout>
kernel void kernel_unary(constant kargs_unary& args [[buffer(0)]],
                         device const Tin* x [[buffer(1)]],
                         device Tout* dst [[buffer(2)]],
                         uint2 gid [[thread_position_in_grid]],
                         uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i >= args.n) {
        return;
    }
    dst[i] = st<Tout>(unary_op(args.op, ld(x[i])));
}

// dst[r, j] = act(x[r, g + j]) * x[r, u + j] over rows of x [.., 2f]; the
// activation is rounded to Tout first (torch's `act(gate) * up` on bf16/f16
// tensors; a no-op for float).
template <typename Tin, typename Tout>
kernel void kernel_glu(constant kargs_glu& args [[buffer(0)]],
                       device const Tin* x [[buffer(1)]],
                       device Tout* dst [[buffer(2)]],
                       uint2 gid [[thread_position_in_grid]],
                       uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i >= args.n) {
        return;
    }
    ulong f = ulong(args.f);
    ulong row = i / f;
    ulong j = i - row * f;
    ulong g = args.gate_first != 0u ? 0 : f;
    ulong u = args.gate_first != 0u ? f : 0;
    float gate = round_to<Tout>(unary_op(args.act, ld(x[row * 2 * f + g + j])));
    dst[i] = st<Tout>(gate * ld(x[row * 2 * f + u + j]));
}

template [[host_name("kernel_add_f32_f32")]] [[kernel]] decltype(kernel_add<float, float>) kernel_add<float, float>;
template [[host_name("kernel_add_f32_f16")]] [[kernel]] decltype(kernel_add<float, half>) kernel_add<float, half>;
template [[host_name("kernel_add_f32_bf16")]] [[kernel]] decltype(kernel_add<float, bf16>) kernel_add<float, bf16>;
template [[host_name("kernel_add_f16_f32")]] [[kernel]] decltype(kernel_add<half, float>) kernel_add<half, float>;
template [[host_name("kernel_add_f16_f16")]] [[kernel]] decltype(kernel_add<half, half>) kernel_add<half, half>;
template [[host_name("kernel_add_f16_bf16")]] [[kernel]] decltype(kernel_add<half, bf16>) kernel_add<half, bf16>;
template [[host_name("kernel_add_bf16_f32")]] [[kernel]] decltype(kernel_add<bf16, float>) kernel_add<bf16, float>;
template [[host_name("kernel_add_bf16_f16")]] [[kernel]] decltype(kernel_add<bf16, half>) kernel_add<bf16, half>;
template [[host_name("kernel_add_bf16_bf16")]] [[kernel]] decltype(kernel_add<bf16, bf16>) kernel_add<bf16, bf16>;

template [[host_name("kernel_mul_f32_f32")]] [[kernel]] decltype(kernel_mul<float, float>) kernel_mul<float, float>;
template [[host_name("kernel_mul_f32_f16")]] [[kernel]] decltype(kernel_mul<float, half>) kernel_mul<float, half>;
template [[host_name("kernel_mul_f32_bf16")]] [[kernel]] decltype(kernel_mul<float, bf16>) kernel_mul<float, bf16>;
template [[host_name("kernel_mul_f16_f32")]] [[kernel]] decltype(kernel_mul<half, float>) kernel_mul<half, float>;
template [[host_name("kernel_mul_f16_f16")]] [[kernel]] decltype(kernel_mul<half, half>) kernel_mul<half, half>;
template [[host_name("kernel_mul_f16_bf16")]] [[kernel]] decltype(kernel_mul<half, bf16>) kernel_mul<half, bf16>;
template [[host_name("kernel_mul_bf16_f32")]] [[kernel]] decltype(kernel_mul<bf16, float>) kernel_mul<bf16, float>;
template [[host_name("kernel_mul_bf16_f16")]] [[kernel]] decltype(kernel_mul<bf16, half>) kernel_mul<bf16, half>;
template [[host_name("kernel_mul_bf16_bf16")]] [[kernel]] decltype(kernel_mul<bf16, bf16>) kernel_mul<bf16, bf16>;

template [[host_name("kernel_scale_f32_f32")]] [[kernel]] decltype(kernel_scale<float, float>) kernel_scale<float, float>;
template [[host_name("kernel_scale_f32_f16")]] [[kernel]] decltype(kernel_scale<float, half>) kernel_scale<float, half>;
template [[host_name("kernel_scale_f32_bf16")]] [[kernel]] decltype(kernel_scale<float, bf16>) kernel_scale<float, bf16>;
template [[host_name("kernel_scale_f16_f32")]] [[kernel]] decltype(kernel_scale<half, float>) kernel_scale<half, float>;
template [[host_name("kernel_scale_f16_f16")]] [[kernel]] decltype(kernel_scale<half, half>) kernel_scale<half, half>;
template [[host_name("kernel_scale_f16_bf16")]] [[kernel]] decltype(kernel_scale<half, bf16>) kernel_scale<half, bf16>;
template [[host_name("kernel_scale_bf16_f32")]] [[kernel]] decltype(kernel_scale<bf16, float>) kernel_scale<bf16, float>;
template [[host_name("kernel_scale_bf16_f16")]] [[kernel]] decltype(kernel_scale<bf16, half>) kernel_scale<bf16, half>;
template [[host_name("kernel_scale_bf16_bf16")]] [[kernel]] decltype(kernel_scale<bf16, bf16>) kernel_scale<bf16, bf16>;

template [[host_name("kernel_clamp_f32_f32")]] [[kernel]] decltype(kernel_clamp<float, float>) kernel_clamp<float, float>;
template [[host_name("kernel_clamp_f32_f16")]] [[kernel]] decltype(kernel_clamp<float, half>) kernel_clamp<float, half>;
template [[host_name("kernel_clamp_f32_bf16")]] [[kernel]] decltype(kernel_clamp<float, bf16>) kernel_clamp<float, bf16>;
template [[host_name("kernel_clamp_f16_f32")]] [[kernel]] decltype(kernel_clamp<half, float>) kernel_clamp<half, float>;
template [[host_name("kernel_clamp_f16_f16")]] [[kernel]] decltype(kernel_clamp<half, half>) kernel_clamp<half, half>;
template [[host_name("kernel_clamp_f16_bf16")]] [[kernel]] decltype(kernel_clamp<half, bf16>) kernel_clamp<half, bf16>;
template [[host_name("kernel_clamp_bf16_f32")]] [[kernel]] decltype(kernel_clamp<bf16, float>) kernel_clamp<bf16, float>;
template [[host_name("kernel_clamp_bf16_f16")]] [[kernel]] decltype(kernel_clamp<bf16, half>) kernel_clamp<bf16, half>;
template [[host_name("kernel_clamp_bf16_bf16")]] [[kernel]] decltype(kernel_clamp<bf16, bf16>) kernel_clamp<bf16, bf16>;

template [[host_name("kernel_unary_f32_f32")]] [[kernel]] decltype(kernel_unary<float, float>) kernel_unary<float, float>;
template [[host_name("kernel_unary_f32_f16")]] [[kernel]] decltype(kernel_unary<float, half>) kernel_unary<float, half>;
template [[host_name("kernel_unary_f32_bf16")]] [[kernel]] decltype(kernel_unary<float, bf16>) kernel_unary<float, bf16>;
template [[host_name("kernel_unary_f16_f32")]] [[kernel]] decltype(kernel_unary<half, float>) kernel_unary<half, float>;
template [[host_name("kernel_unary_f16_f16")]] [[kernel]] decltype(kernel_unary<half, half>) kernel_unary<half, half>;
template [[host_name("kernel_unary_f16_bf16")]] [[kernel]] decltype(kernel_unary<half, bf16>) kernel_unary<half, bf16>;
template [[host_name("kernel_unary_bf16_f32")]] [[kernel]] decltype(kernel_unary<bf16, float>) kernel_unary<bf16, float>;
template [[host_name("kernel_unary_bf16_f16")]] [[kernel]] decltype(kernel_unary<bf16, half>) kernel_unary<bf16, half>;
template [[host_name("kernel_unary_bf16_bf16")]] [[kernel]] decltype(kernel_unary<bf16, bf16>) kernel_unary<bf16, bf16>;

template [[host_name("kernel_glu_f32_f32")]] [[kernel]] decltype(kernel_glu<float, float>) kernel_glu<float, float>;
template [[host_name("kernel_glu_f32_f16")]] [[kernel]] decltype(kernel_glu<float, half>) kernel_glu<float, half>;
template [[host_name("kernel_glu_f32_bf16")]] [[kernel]] decltype(kernel_glu<float, bf16>) kernel_glu<float, bf16>;
template [[host_name("kernel_glu_f16_f32")]] [[kernel]] decltype(kernel_glu<half, float>) kernel_glu<half, float>;
template [[host_name("kernel_glu_f16_f16")]] [[kernel]] decltype(kernel_glu<half, half>) kernel_glu<half, half>;
template [[host_name("kernel_glu_f16_bf16")]] [[kernel]] decltype(kernel_glu<half, bf16>) kernel_glu<half, bf16>;
template [[host_name("kernel_glu_bf16_f32")]] [[kernel]] decltype(kernel_glu<bf16, float>) kernel_glu<bf16, float>;
template [[host_name("kernel_glu_bf16_f16")]] [[kernel]] decltype(kernel_glu<bf16, half>) kernel_glu<bf16, half>;
template [[host_name("kernel_glu_bf16_bf16")]] [[kernel]] decltype(kernel_glu<bf16, bf16>) kernel_glu<bf16, bf16>;

