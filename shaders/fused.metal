// fused.metal: the fused DiT kernels of compute.Fused.
//
// Each kernel is a sequence of unfused kernels run in one pass over a row,
// and computes every element with the arithmetic of those kernels: the
// row sums of kernel_rms_norm (same threadgroup size from the host, same
// per-thread partials, row_sum of common.h), the BF16/F16 chains of
// kernel_modulate, kernel_gated_add and kernel_rope, and a round_to<T> where
// the sequence stores an intermediate. On the same device the fused results
// are therefore bit-identical to the unfused sequence (the conformance suite
// checks it) as long as the compiler contracts neither differently.
// One type T for the activations; the host runs the unfused sequence for
// other type combinations.
#include "common.h"

// kernel_rms_norm_modulate: dst = modulate(rms_norm(x) as T). One
// threadgroup per row. Every thread reads its elements of x before writing
// them, so dst may be the same view as x.
template <typename T>
kernel void kernel_rms_norm_modulate(constant kargs_norm_modulate& args [[buffer(0)]],
                                     device const T* x [[buffer(1)]],
                                     device const uchar* w [[buffer(2)]],
                                     device const uchar* table [[buffer(3)]],
                                     device const uchar* idx [[buffer(4)]],
                                     device T* dst [[buffer(5)]],
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
    long tr = load_index(idx, args.idx_dt, ulong(row));
    bool ok = tr >= 0 && tr < long(args.table_rows);
    ulong tb = ok ? ulong(tr) * ulong(args.table_w) : 0UL;
    for (uint i = tid; i < args.d; i += tpg) {
        float y = ld(x[base + i]) * inv;
        if (args.has_w != 0u) {
            y *= load_any(w, args.w_dt, i);
        }
        float nv = round_to<T>(y);
        if (!ok) {
            dst[base + i] = st<T>(NAN);
            continue;
        }
        float sc = load_any(table, args.table_dt, tb + args.scale_col + i);
        float sh = load_any(table, args.table_dt, tb + args.shift_col + i);
        float prod = round_to<T>(nv * round_to<T>(1.0f + sc));
        dst[base + i] = st<T>(prod + sh);
    }
}

// kernel_gated_add_rms_norm_modulate: h = x + gate * y (as T), then
// n = modulate(rms_norm(h) as T). One threadgroup per row. The sum of
// squares is taken while h is written; the second pass reads back the
// elements of h this thread wrote (a thread sees its own writes). h may be
// the same view as x.
template <typename T>
kernel void kernel_gated_add_rms_norm_modulate(constant kargs_gated_norm_modulate& args [[buffer(0)]],
                                               device const T* x [[buffer(1)]],
                                               device const uchar* y [[buffer(2)]],
                                               device const uchar* gate [[buffer(3)]],
                                               device const uchar* w [[buffer(4)]],
                                               device const uchar* table [[buffer(5)]],
                                               device const uchar* idx [[buffer(6)]],
                                               device T* h [[buffer(7)]],
                                               device T* n [[buffer(8)]],
                                               uint row [[threadgroup_position_in_grid]],
                                               uint tid [[thread_index_in_threadgroup]],
                                               uint tpg [[threads_per_threadgroup]],
                                               uint sg [[simdgroup_index_in_threadgroup]],
                                               uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float part[32];
    ulong base = ulong(row) * ulong(args.d);
    long tr = load_index(idx, args.idx_dt, ulong(row));
    bool gok = tr >= 0 && tr < long(args.gate_rows);
    bool mok = tr >= 0 && tr < long(args.table_rows);
    ulong gb = gok ? ulong(tr) * ulong(args.gate_w) : 0UL;
    ulong tb = mok ? ulong(tr) * ulong(args.table_w) : 0UL;
    float ss = 0.0f;
    for (uint i = tid; i < args.d; i += tpg) {
        float hv = NAN;
        if (gok) {
            float g = load_any(gate, args.gate_dt, gb + args.gate_col + i);
            float yv = load_any(y, args.y_dt, base + i);
            hv = round_to<T>(ld(x[base + i]) + round_to<T>(g * yv));
        }
        h[base + i] = st<T>(hv);
        ss += hv * hv; // hv is already a T value: what kernel_rms_norm would read back
    }
    ss = row_sum(ss, part, tid, tpg, sg, lane);
    float inv = precise::rsqrt(ss / float(args.d) + args.eps);
    for (uint i = tid; i < args.d; i += tpg) {
        float yn = ld(h[base + i]) * inv;
        if (args.has_w != 0u) {
            yn *= load_any(w, args.w_dt, i);
        }
        float nv = round_to<T>(yn);
        if (!mok) {
            n[base + i] = st<T>(NAN);
            continue;
        }
        float sc = load_any(table, args.table_dt, tb + args.scale_col + i);
        float sh = load_any(table, args.table_dt, tb + args.shift_col + i);
        float prod = round_to<T>(nv * round_to<T>(1.0f + sc));
        n[base + i] = st<T>(prod + sh);
    }
}

// QK_DMAX is the widest head kernel_qk_norm_rope handles (the host runs the
// unfused sequence beyond it).
#define QK_DMAX 256

// qkv_offset is the element offset of part c (0 q, 1 k, 2 v) of head hd at
// position s.
inline ulong qkv_offset(constant kargs_qk_norm_rope& args, uint c, uint s, uint hd) {
    ulong D = ulong(args.d);
    if (args.layout == QKV_PLANAR) {
        return ((ulong(c) * ulong(args.s) + ulong(s)) * ulong(args.heads) + ulong(hd)) * D;
    }
    return ((ulong(s) * ulong(args.heads) + ulong(hd)) * 3UL + ulong(c)) * D;
}

// kernel_qk_norm_rope: threadgroup (s, head) reads the head's q, k and v at
// position s from the QKV projection, copies v, and writes rope(rms_norm(q))
// and rope(rms_norm(k)), the normalised row held in threadgroup memory
// between the two steps (rounded to T, as the sequence stores it).
template <typename T>
kernel void kernel_qk_norm_rope(constant kargs_qk_norm_rope& args [[buffer(0)]],
                                device const T* qkv [[buffer(1)]],
                                device const uchar* wq [[buffer(2)]],
                                device const uchar* wk [[buffer(3)]],
                                device const uchar* cs [[buffer(4)]],
                                device const uchar* sn [[buffer(5)]],
                                device T* q [[buffer(6)]],
                                device T* k [[buffer(7)]],
                                device T* v [[buffer(8)]],
                                uint2 tg [[threadgroup_position_in_grid]],
                                uint tid [[thread_index_in_threadgroup]],
                                uint2 tpg2 [[threads_per_threadgroup]],
                                uint sg [[simdgroup_index_in_threadgroup]],
                                uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float part[32];
    threadgroup float rowv[QK_DMAX];
    uint tpg = tpg2.x; // grid attributes agree in width (MSL): the group is one-dimensional
    uint s = tg.x;
    uint hd = tg.y;
    uint d = args.d;
    ulong out = (ulong(hd) * ulong(args.s) + ulong(s)) * ulong(d);

    // v is a transpose: bits are copied, never converted.
    ulong vin = qkv_offset(args, 2u, s, hd);
    for (uint i = tid; i < d; i += tpg) {
        if (sizeof(T) == 4) {
            ((device uint*)v)[out + i] = ((device const uint*)qkv)[vin + i];
        } else {
            ((device ushort*)v)[out + i] = ((device const ushort*)qkv)[vin + i];
        }
    }

    uint half_dim = args.rot_dim / 2u;
    for (uint c = 0u; c < 2u; c++) {
        device const uchar* w = c == 0u ? wq : wk;
        uint w_dt = c == 0u ? args.q_w_dt : args.k_w_dt;
        bool has_w = (c == 0u ? args.has_q_w : args.has_k_w) != 0u;
        device T* o = c == 0u ? q : k;
        ulong in = qkv_offset(args, c, s, hd);
        float ss = 0.0f;
        for (uint i = tid; i < d; i += tpg) {
            float val = ld(qkv[in + i]);
            ss += val * val;
        }
        ss = row_sum(ss, part, tid, tpg, sg, lane);
        float inv = precise::rsqrt(ss / float(d) + args.eps);
        for (uint i = tid; i < d; i += tpg) {
            float y = ld(qkv[in + i]) * inv;
            if (has_w) {
                y *= load_any(w, w_dt, i);
            }
            if (args.rot_dim == 0u) {
                o[out + i] = st<T>(y);
            } else {
                rowv[i] = round_to<T>(y);
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (args.rot_dim != 0u) {
            // kernel_rope's threads: j < half rotates the pair (j, j + half),
            // j >= half copies channel j + half.
            for (uint j = tid; j < d - half_dim; j += tpg) {
                if (j >= half_dim) {
                    uint ch = j + half_dim;
                    o[out + ch] = st<T>(rowv[ch]);
                    continue;
                }
                ulong t = ulong(s) * ulong(half_dim) + ulong(j);
                float cv = load_any(cs, args.cos_dt, t);
                float sv = load_any(sn, args.sin_dt, t);
                float a = rowv[j];
                float b = rowv[j + half_dim];
                float lo = round_to<T>(a * cv) + round_to<T>(-b * sv);
                float hi = round_to<T>(b * cv) + round_to<T>(a * sv);
                o[out + j] = st<T>(lo);
                o[out + j + half_dim] = st<T>(hi);
            }
        }
        // part and rowv are written again for k.
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
}

template [[host_name("kernel_rms_norm_modulate_f32_f32")]] [[kernel]] decltype(kernel_rms_norm_modulate<float>) kernel_rms_norm_modulate<float>;
template [[host_name("kernel_rms_norm_modulate_f16_f16")]] [[kernel]] decltype(kernel_rms_norm_modulate<half>) kernel_rms_norm_modulate<half>;
template [[host_name("kernel_rms_norm_modulate_bf16_bf16")]] [[kernel]] decltype(kernel_rms_norm_modulate<bf16>) kernel_rms_norm_modulate<bf16>;

template [[host_name("kernel_gated_add_rms_norm_modulate_f32_f32")]] [[kernel]] decltype(kernel_gated_add_rms_norm_modulate<float>) kernel_gated_add_rms_norm_modulate<float>;
template [[host_name("kernel_gated_add_rms_norm_modulate_f16_f16")]] [[kernel]] decltype(kernel_gated_add_rms_norm_modulate<half>) kernel_gated_add_rms_norm_modulate<half>;
template [[host_name("kernel_gated_add_rms_norm_modulate_bf16_bf16")]] [[kernel]] decltype(kernel_gated_add_rms_norm_modulate<bf16>) kernel_gated_add_rms_norm_modulate<bf16>;

template [[host_name("kernel_qk_norm_rope_f32_f32")]] [[kernel]] decltype(kernel_qk_norm_rope<float>) kernel_qk_norm_rope<float>;
template [[host_name("kernel_qk_norm_rope_f16_f16")]] [[kernel]] decltype(kernel_qk_norm_rope<half>) kernel_qk_norm_rope<half>;
template [[host_name("kernel_qk_norm_rope_bf16_bf16")]] [[kernel]] decltype(kernel_qk_norm_rope<bf16>) kernel_qk_norm_rope<bf16>;
