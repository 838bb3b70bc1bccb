// norm.metal: RMSNorm, LayerNorm and GroupNorm (compute.Kernels).
//
// RMSNorm and LayerNorm: one threadgroup per row (a multiple of 32 threads);
// sums are per-thread partials reduced with simd_sum and a threadgroup array,
// so they agree with the reference's sequential float32 sums to rounding.
// Every thread reads the row before the barrier and writes only elements it
// reads afterwards, so dst may be the same view as x.
// GroupNorm: a statistics kernel (one threadgroup per group, compensated
// sums: groups hold millions of elements and the reference sums in float64)
// then an elementwise kernel.
#include "common.h"

template <typename Tin, typename Tout>
kernel void kernel_rms_norm(constant kargs_norm& args [[buffer(0)]],
                            device const Tin* x [[buffer(1)]],
                            device const uchar* w [[buffer(2)]],
                            device Tout* dst [[buffer(3)]],
                            uint row [[threadgroup_position_in_grid]],
                            uint tid [[thread_index_in_threadgroup]],
                            uint tpg [[threads_per_threadgroup]],
                            uint sg [[simdgroup_index_in_threadgroup]],
                            uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float part[32];
    ulong base = ulong(row) * ulong(args.d);
    float ss = 0.0f;
    for (uint i = tid; i < args.d; i += tpg) {
        float v = ld(x[base + i]);
        ss += v * v;
    }
    ss = row_sum(ss, part, tid, tpg, sg, lane);
    float inv = precise::rsqrt(ss / float(args.d) + args.eps);
    for (uint i = tid; i < args.d; i += tpg) {
        float y = ld(x[base + i]) * inv;
        if (args.has_w != 0u) {
            y *= load_any(w, args.w_dt, i);
        }
        dst[base + i] = st<Tout>(y);
    }
}

template <typename Tin, typename Tout>
kernel void kernel_layer_norm(constant kargs_norm& args [[buffer(0)]],
                              device const Tin* x [[buffer(1)]],
                              device const uchar* w [[buffer(2)]],
                              device const uchar* b [[buffer(3)]],
                              device Tout* dst [[buffer(4)]],
                              uint row [[threadgroup_position_in_grid]],
                              uint tid [[thread_index_in_threadgroup]],
                              uint tpg [[threads_per_threadgroup]],
                              uint sg [[simdgroup_index_in_threadgroup]],
                              uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float part_mean[32];
    threadgroup float part_var[32];
    ulong base = ulong(row) * ulong(args.d);
    float s = 0.0f;
    for (uint i = tid; i < args.d; i += tpg) {
        s += ld(x[base + i]);
    }
    float mean = row_sum(s, part_mean, tid, tpg, sg, lane) / float(args.d);
    float vs = 0.0f;
    for (uint i = tid; i < args.d; i += tpg) {
        float dv = ld(x[base + i]) - mean;
        vs += dv * dv;
    }
    vs = row_sum(vs, part_var, tid, tpg, sg, lane);
    float inv = precise::rsqrt(vs / float(args.d) + args.eps);
    for (uint i = tid; i < args.d; i += tpg) {
        float y = (ld(x[base + i]) - mean) * inv;
        if (args.has_w != 0u) {
            y *= load_any(w, args.w_dt, i);
        }
        if (args.has_b != 0u) {
            y += load_any(b, args.b_dt, i);
        }
        dst[base + i] = st<Tout>(y);
    }
}

// kahan_add adds v to the compensated sum (s, c).
inline void kahan_add(thread float& s, thread float& c, float v) {
    float y = v - c;
    float t = s + y;
    c = (t - s) - y;
    s = t;
}

// group_sum is the compensated sum over the threadgroup of each thread's
// compensated partial (s, c); every thread gets it. ps and pc hold one
// float per thread.
inline float group_sum(float s, float c, threadgroup float* ps, threadgroup float* pc, uint tid, uint tpg,
                       threadgroup float* result) {
    ps[tid] = s;
    pc[tid] = c;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid == 0u) {
        float ts = 0.0f;
        float tc = 0.0f;
        for (uint i = 0; i < tpg; i++) {
            kahan_add(ts, tc, ps[i]);
            kahan_add(ts, tc, -pc[i]);
        }
        result[0] = ts;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return result[0];
}

// One threadgroup per group of channels: stats[g] = (mean, 1/sqrt(var + eps)).
template <typename Tin>
kernel void kernel_group_norm_stats(constant kargs_group_norm& args [[buffer(0)]],
                                    device const Tin* x [[buffer(1)]],
                                    device float* stats [[buffer(2)]],
                                    uint g [[threadgroup_position_in_grid]],
                                    uint tid [[thread_index_in_threadgroup]],
                                    uint tpg [[threads_per_threadgroup]]) {
    threadgroup float ps[256];
    threadgroup float pc[256];
    threadgroup float result[2];
    ulong cnt = ulong(args.c / args.groups) * args.l;
    ulong base = ulong(g) * cnt;
    float s = 0.0f;
    float c = 0.0f;
    for (ulong i = tid; i < cnt; i += tpg) {
        kahan_add(s, c, ld(x[base + i]));
    }
    float mean = group_sum(s, c, ps, pc, tid, tpg, result) / float(cnt);
    s = 0.0f;
    c = 0.0f;
    for (ulong i = tid; i < cnt; i += tpg) {
        float dv = ld(x[base + i]) - mean;
        kahan_add(s, c, dv * dv);
    }
    float var = group_sum(s, c, ps, pc, tid, tpg, result + 1) / float(cnt);
    if (tid == 0u) {
        stats[2 * g] = mean;
        stats[2 * g + 1] = precise::rsqrt(var + args.eps);
    }
}

template <typename Tin, typename Tout>
kernel void kernel_group_norm_apply(constant kargs_group_norm& args [[buffer(0)]],
                                    device const Tin* x [[buffer(1)]],
                                    device const float* stats [[buffer(2)]],
                                    device const uchar* w [[buffer(3)]],
                                    device const uchar* b [[buffer(4)]],
                                    device Tout* dst [[buffer(5)]],
                                    uint2 gid [[thread_position_in_grid]],
                                    uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i >= args.n) {
        return;
    }
    ulong ch = i / args.l;
    uint g = uint(ch / ulong(args.c / args.groups));
    float y = (ld(x[i]) - stats[2 * g]) * stats[2 * g + 1];
    if (args.has_w != 0u) {
        y *= load_any(w, args.w_dt, ch);
    }
    if (args.has_b != 0u) {
        y += load_any(b, args.b_dt, ch);
    }
    dst[i] = st<Tout>(y);
}

template [[host_name("kernel_rms_norm_f32_f32")]] [[kernel]] decltype(kernel_rms_norm<float, float>) kernel_rms_norm<float, float>;
template [[host_name("kernel_rms_norm_f32_f16")]] [[kernel]] decltype(kernel_rms_norm<float, half>) kernel_rms_norm<float, half>;
template [[host_name("kernel_rms_norm_f32_bf16")]] [[kernel]] decltype(kernel_rms_norm<float, bf16>) kernel_rms_norm<float, bf16>;
template [[host_name("kernel_rms_norm_f16_f32")]] [[kernel]] decltype(kernel_rms_norm<half, float>) kernel_rms_norm<half, float>;
template [[host_name("kernel_rms_norm_f16_f16")]] [[kernel]] decltype(kernel_rms_norm<half, half>) kernel_rms_norm<half, half>;
template [[host_name("kernel_rms_norm_f16_bf16")]] [[kernel]] decltype(kernel_rms_norm<half, bf16>) kernel_rms_norm<half, bf16>;
template [[host_name("kernel_rms_norm_bf16_f32")]] [[kernel]] decltype(kernel_rms_norm<bf16, float>) kernel_rms_norm<bf16, float>;
template [[host_name("kernel_rms_norm_bf16_f16")]] [[kernel]] decltype(kernel_rms_norm<bf16, half>) kernel_rms_norm<bf16, half>;
template [[host_name("kernel_rms_norm_bf16_bf16")]] [[kernel]] decltype(kernel_rms_norm<bf16, bf16>) kernel_rms_norm<bf16, bf16>;

template [[host_name("kernel_layer_norm_f32_f32")]] [[kernel]] decltype(kernel_layer_norm<float, float>) kernel_layer_norm<float, float>;
template [[host_name("kernel_layer_norm_f32_f16")]] [[kernel]] decltype(kernel_layer_norm<float, half>) kernel_layer_norm<float, half>;
template [[host_name("kernel_layer_norm_f32_bf16")]] [[kernel]] decltype(kernel_layer_norm<float, bf16>) kernel_layer_norm<float, bf16>;
template [[host_name("kernel_layer_norm_f16_f32")]] [[kernel]] decltype(kernel_layer_norm<half, float>) kernel_layer_norm<half, float>;
template [[host_name("kernel_layer_norm_f16_f16")]] [[kernel]] decltype(kernel_layer_norm<half, half>) kernel_layer_norm<half, half>;
template [[host_name("kernel_layer_norm_f16_bf16")]] [[kernel]] decltype(kernel_layer_norm<half, bf16>) kernel_layer_norm<half, bf16>;
template [[host_name("kernel_layer_norm_bf16_f32")]] [[kernel]] decltype(kernel_layer_norm<bf16, float>) kernel_layer_norm<bf16, float>;
template [[host_name("kernel_layer_norm_bf16_f16")]] [[kernel]] decltype(kernel_layer_norm<bf16, half>) kernel_layer_norm<bf16, half>;
template [[host_name("kernel_layer_norm_bf16_bf16")]] [[kernel]] decltype(kernel_layer_norm<bf16, bf16>) kernel_layer_norm<bf16, bf16>;

template [[host_name("kernel_group_norm_stats_f32")]] [[kernel]] decltype(kernel_group_norm_stats<float>) kernel_group_norm_stats<float>;
template [[host_name("kernel_group_norm_stats_f16")]] [[kernel]] decltype(kernel_group_norm_stats<half>) kernel_group_norm_stats<half>;
template [[host_name("kernel_group_norm_stats_bf16")]] [[kernel]] decltype(kernel_group_norm_stats<bf16>) kernel_group_norm_stats<bf16>;

template [[host_name("kernel_group_norm_apply_f32_f32")]] [[kernel]] decltype(kernel_group_norm_apply<float, float>) kernel_group_norm_apply<float, float>;
template [[host_name("kernel_group_norm_apply_f32_f16")]] [[kernel]] decltype(kernel_group_norm_apply<float, half>) kernel_group_norm_apply<float, half>;
template [[host_name("kernel_group_norm_apply_f32_bf16")]] [[kernel]] decltype(kernel_group_norm_apply<float, bf16>) kernel_group_norm_apply<float, bf16>;
template [[host_name("kernel_group_norm_apply_f16_f32")]] [[kernel]] decltype(kernel_group_norm_apply<half, float>) kernel_group_norm_apply<half, float>;
template [[host_name("kernel_group_norm_apply_f16_f16")]] [[kernel]] decltype(kernel_group_norm_apply<half, half>) kernel_group_norm_apply<half, half>;
template [[host_name("kernel_group_norm_apply_f16_bf16")]] [[kernel]] decltype(kernel_group_norm_apply<half, bf16>) kernel_group_norm_apply<half, bf16>;
template [[host_name("kernel_group_norm_apply_bf16_f32")]] [[kernel]] decltype(kernel_group_norm_apply<bf16, float>) kernel_group_norm_apply<bf16, float>;
template [[host_name("kernel_group_norm_apply_bf16_f16")]] [[kernel]] decltype(kernel_group_norm_apply<bf16, half>) kernel_group_norm_apply<bf16, half>;
template [[host_name("kernel_group_norm_apply_bf16_bf16")]] [[kernel]] decltype(kernel_group_norm_apply<bf16, bf16>) kernel_group_norm_apply<bf16, bf16>;
