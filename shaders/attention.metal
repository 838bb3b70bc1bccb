// attention.metal: Attention (compute.Kernels), softmax(q·kᵀ·scale)·v per head
// with grouped-query heads (query head h reads kv head h / (hq / hkv)) and an
// optional causal mask (query i sees keys j <= i + sk - sq).
//
// Tiled with an online softmax (flash-attention style), never materialising
// the sq x sk scores: a threadgroup of 4 simdgroups takes 32 queries of one
// head, each simdgroup 8 of them, and walks the keys in blocks of BK. Scores
// and the product with v use 8x8 simdgroup matrices in float32; lanes 0..7
// keep the running max and sum of their query row; the rescaling of the
// output by exp(m_old - m_new) is a product with a diagonal matrix, so no
// code depends on how a GPU lays out matrix fragments. With round_probs the
// unnormalised probabilities are rounded to Tout before the product with v,
// relative to the running maximum (as fused low-precision kernels do).
// DMAX (64, 128, 256) bounds the head size: q and o stay in registers as
// DMAX/8 fragments; d below DMAX is padded with zeros.
#include "common.h"

#define ATT_THREADS 128
#define ATT_BQ 32

template <typename Tin, typename Tout, int DMAX>
kernel void kernel_attention(constant kargs_attention& args [[buffer(0)]],
                             device const Tin* q [[buffer(1)]],
                             device const Tin* k [[buffer(2)]],
                             device const Tin* v [[buffer(3)]],
                             device Tout* dst [[buffer(4)]],
                             uint2 tg [[threadgroup_position_in_grid]],
                             uint tid [[thread_index_in_threadgroup]],
                             uint sg [[simdgroup_index_in_threadgroup]],
                             uint lane [[thread_index_in_simdgroup]]) {
    const uint BK = DMAX > 128 ? 16u : 32u; // keys per block: the kv tile is at most 16 KiB
    const uint DF = uint(DMAX) / 8u;
    threadgroup float kv[(DMAX > 128 ? 16 : 32) * DMAX];
    threadgroup float scores[4 * 8 * (DMAX > 128 ? 16 : 32)];
    threadgroup float diag[4 * 64];
    threadgroup float* sc = scores + sg * 8u * BK;
    threadgroup float* dg = diag + sg * 64u;

    const uint h = tg.y;
    const uint q0 = (tg.x + args.tile0) * ATT_BQ;
    const uint d = args.d;
    const uint kh = h / (args.hq / args.hkv);
    const ulong qbase = ulong(h) * ulong(args.sq) * ulong(d);
    const ulong kbase = ulong(kh) * ulong(args.sk) * ulong(d);

    // Stage the 32 query rows through kv, BK rows at a time, into registers.
    simdgroup_float8x8 qf[DMAX / 8];
    for (uint r0 = 0; r0 < ATT_BQ; r0 += BK) {
        for (uint e = tid; e < BK * DMAX; e += ATT_THREADS) {
            uint r = e / DMAX;
            uint c = e % DMAX;
            uint row = q0 + r0 + r;
            kv[e] = (row < args.sq && c < d) ? ld(q[qbase + ulong(row) * d + c]) : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (sg * 8u >= r0 && sg * 8u < r0 + BK) {
            for (uint f = 0; f < DF; f++) {
                simdgroup_load(qf[f], kv + (sg * 8u - r0) * DMAX + f * 8u, DMAX);
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    simdgroup_float8x8 of[DMAX / 8];
    for (uint f = 0; f < DF; f++) {
        of[f] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    }
    dg[lane] = 0.0f;
    dg[lane + 32u] = 0.0f;
    simdgroup_barrier(mem_flags::mem_threadgroup);

    // Lane r < 8 owns query row q0 + 8*sg + r.
    const uint row = q0 + sg * 8u + lane;
    uint limit = args.sk;
    if (args.causal != 0u) {
        long lim = long(row) + long(args.sk) - long(args.sq) + 1;
        limit = lim < 0 ? 0u : (lim > long(args.sk) ? args.sk : uint(lim));
    }
    float m = -INFINITY;
    float l = 0.0f;

    // Keys the tile needs: up to the last query row's limit.
    uint kend = args.sk;
    if (args.causal != 0u) {
        long last = long(min(q0 + ATT_BQ, args.sq)) + long(args.sk) - long(args.sq);
        kend = last < 0 ? 0u : (last > long(args.sk) ? args.sk : uint(last));
    }
    for (uint k0 = 0; k0 < kend; k0 += BK) {
        for (uint e = tid; e < BK * DMAX; e += ATT_THREADS) {
            uint r = e / DMAX;
            uint c = e % DMAX;
            uint key = k0 + r;
            kv[e] = (key < args.sk && c < d) ? ld(k[kbase + ulong(key) * d + c]) : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint j = 0; j < BK / 8u; j++) {
            simdgroup_float8x8 s = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
            for (uint f = 0; f < DF; f++) {
                simdgroup_float8x8 kt;
                simdgroup_load(kt, kv + j * 8u * DMAX + f * 8u, DMAX, ulong2(0, 0), true);
                simdgroup_multiply_accumulate(s, qf[f], kt, s);
            }
            simdgroup_store(s, sc + j * 8u, BK);
        }
        simdgroup_barrier(mem_flags::mem_threadgroup);
        if (lane < 8u) {
            float mx = m;
            for (uint c = 0; c < BK; c++) {
                if (k0 + c < limit) {
                    mx = max(mx, sc[lane * BK + c] * args.scale);
                }
            }
            float alpha = mx == -INFINITY ? 1.0f : precise::exp(m - mx);
            float sum = 0.0f;
            for (uint c = 0; c < BK; c++) {
                float p = 0.0f;
                if (k0 + c < limit) {
                    p = precise::exp(sc[lane * BK + c] * args.scale - mx);
                }
                sum += p;
                if (args.round_probs != 0u) {
                    p = round_to<Tout>(p);
                }
                sc[lane * BK + c] = p;
            }
            l = l * alpha + sum;
            m = mx;
            dg[lane * 9u] = alpha;
        }
        simdgroup_barrier(mem_flags::mem_threadgroup);
        simdgroup_float8x8 dm;
        simdgroup_load(dm, dg, 8);
        for (uint f = 0; f < DF; f++) {
            simdgroup_float8x8 t;
            simdgroup_multiply(t, dm, of[f]);
            of[f] = t;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint e = tid; e < BK * DMAX; e += ATT_THREADS) {
            uint r = e / DMAX;
            uint c = e % DMAX;
            uint key = k0 + r;
            kv[e] = (key < args.sk && c < d) ? ld(v[kbase + ulong(key) * d + c]) : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint j = 0; j < BK / 8u; j++) {
            simdgroup_float8x8 p;
            simdgroup_load(p, sc + j * 8u, BK);
            for (uint f = 0; f < DF; f++) {
                simdgroup_float8x8 vf;
                simdgroup_load(vf, kv + j * 8u * DMAX + f * 8u, DMAX);
                simdgroup_multiply_accumulate(of[f], p, vf, of[f]);
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    // o = diag(1/l) o, staged through kv and written BK rows at a time.
    if (lane < 8u) {
        dg[lane * 9u] = 1.0f / l;
    }
    simdgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_float8x8 dm;
    simdgroup_load(dm, dg, 8);
    for (uint f = 0; f < DF; f++) {
        simdgroup_float8x8 t;
        simdgroup_multiply(t, dm, of[f]);
        of[f] = t;
    }
    for (uint r0 = 0; r0 < ATT_BQ; r0 += BK) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (sg * 8u >= r0 && sg * 8u < r0 + BK) {
            for (uint f = 0; f < DF; f++) {
                simdgroup_store(of[f], kv + (sg * 8u - r0) * DMAX + f * 8u, DMAX);
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint e = tid; e < BK * DMAX; e += ATT_THREADS) {
            uint r = e / DMAX;
            uint c = e % DMAX;
            uint qrow = q0 + r0 + r;
            if (qrow < args.sq && c < d) {
                dst[qbase + ulong(qrow) * d + c] = st<Tout>(kv[e]);
            }
        }
    }
}

template [[host_name("kernel_attention_f32_f32_d64")]] [[kernel]] decltype(kernel_attention<float, float, 64>) kernel_attention<float, float, 64>;
template [[host_name("kernel_attention_f32_f16_d64")]] [[kernel]] decltype(kernel_attention<float, half, 64>) kernel_attention<float, half, 64>;
template [[host_name("kernel_attention_f32_bf16_d64")]] [[kernel]] decltype(kernel_attention<float, bf16, 64>) kernel_attention<float, bf16, 64>;
template [[host_name("kernel_attention_f16_f32_d64")]] [[kernel]] decltype(kernel_attention<half, float, 64>) kernel_attention<half, float, 64>;
template [[host_name("kernel_attention_f16_f16_d64")]] [[kernel]] decltype(kernel_attention<half, half, 64>) kernel_attention<half, half, 64>;
template [[host_name("kernel_attention_f16_bf16_d64")]] [[kernel]] decltype(kernel_attention<half, bf16, 64>) kernel_attention<half, bf16, 64>;
template [[host_name("kernel_attention_bf16_f32_d64")]] [[kernel]] decltype(kernel_attention<bf16, float, 64>) kernel_attention<bf16, float, 64>;
template [[host_name("kernel_attention_bf16_f16_d64")]] [[kernel]] decltype(kernel_attention<bf16, half, 64>) kernel_attention<bf16, half, 64>;
template [[host_name("kernel_attention_bf16_bf16_d64")]] [[kernel]] decltype(kernel_attention<bf16, bf16, 64>) kernel_attention<bf16, bf16, 64>;

template [[host_name("kernel_attention_f32_f32_d128")]] [[kernel]] decltype(kernel_attention<float, float, 128>) kernel_attention<float, float, 128>;
template [[host_name("kernel_attention_f32_f16_d128")]] [[kernel]] decltype(kernel_attention<float, half, 128>) kernel_attention<float, half, 128>;
template [[host_name("kernel_attention_f32_bf16_d128")]] [[kernel]] decltype(kernel_attention<float, bf16, 128>) kernel_attention<float, bf16, 128>;
template [[host_name("kernel_attention_f16_f32_d128")]] [[kernel]] decltype(kernel_attention<half, float, 128>) kernel_attention<half, float, 128>;
template [[host_name("kernel_attention_f16_f16_d128")]] [[kernel]] decltype(kernel_attention<half, half, 128>) kernel_attention<half, half, 128>;
template [[host_name("kernel_attention_f16_bf16_d128")]] [[kernel]] decltype(kernel_attention<half, bf16, 128>) kernel_attention<half, bf16, 128>;
template [[host_name("kernel_attention_bf16_f32_d128")]] [[kernel]] decltype(kernel_attention<bf16, float, 128>) kernel_attention<bf16, float, 128>;
template [[host_name("kernel_attention_bf16_f16_d128")]] [[kernel]] decltype(kernel_attention<bf16, half, 128>) kernel_attention<bf16, half, 128>;
template [[host_name("kernel_attention_bf16_bf16_d128")]] [[kernel]] decltype(kernel_attention<bf16, bf16, 128>) kernel_attention<bf16, bf16, 128>;

template [[host_name("kernel_attention_f32_f32_d256")]] [[kernel]] decltype(kernel_attention<float, float, 256>) kernel_attention<float, float, 256>;
template [[host_name("kernel_attention_f32_f16_d256")]] [[kernel]] decltype(kernel_attention<float, half, 256>) kernel_attention<float, half, 256>;
template [[host_name("kernel_attention_f32_bf16_d256")]] [[kernel]] decltype(kernel_attention<float, bf16, 256>) kernel_attention<float, bf16, 256>;
template [[host_name("kernel_attention_f16_f32_d256")]] [[kernel]] decltype(kernel_attention<half, float, 256>) kernel_attention<half, float, 256>;
template [[host_name("kernel_attention_f16_f16_d256")]] [[kernel]] decltype(kernel_attention<half, half, 256>) kernel_attention<half, half, 256>;
template [[host_name("kernel_attention_f16_bf16_d256")]] [[kernel]] decltype(kernel_attention<half, bf16, 256>) kernel_attention<half, bf16, 256>;
template [[host_name("kernel_attention_bf16_f32_d256")]] [[kernel]] decltype(kernel_attention<bf16, float, 256>) kernel_attention<bf16, float, 256>;
template [[host_name("kernel_attention_bf16_f16_d256")]] [[kernel]] decltype(kernel_attention<bf16, half, 256>) kernel_attention<bf16, half, 256>;
template [[host_name("kernel_attention_bf16_bf16_d256")]] [[kernel]] decltype(kernel_attention<bf16, bf16, 256>) kernel_attention<bf16, bf16, 256>;

