// qmatmul.metal: MatMul (compute.Kernels) by a quantized weight
// (compute.Quantized): dst[m, n] = sum_k x[m, k] * w[n, k] + bias[n], with
// w[n, k] = s * q + b dequantized while the weight tile is staged in
// threadgroup memory, so the weight never exists in float in device memory.
// A weight row is its code words (BITS-bit codes; code j at bit
// (j % (32 / BITS)) * BITS of word j / (32 / BITS), MLX's packing), then one
// word per group of group_size inputs: the BF16 scale (low half) and bias
// (high half). Tiles, simdgroup matrices and summation order are gemm.h's
// (32x32 tiles of 4 simdgroups, 8x8 float matrices); a k tile (32) never
// straddles a group (group_size is a multiple of 32).
#include "gemm.h"

// qgemm_b is the dequantized w[n, k].
template <int BITS>
inline float qgemm_b(constant kargs_qgemm& p, device const uint* w, uint n, uint k) {
    device const uint* row = w + ulong(n) * ulong(p.row_words);
    const uint per = 32u / uint(BITS);
    uint code = (row[k / per] >> ((k % per) * uint(BITS))) & ((1u << uint(BITS)) - 1u);
    uint sb = row[p.code_words + k / p.group_size];
    float s = bf16_to_f32(ushort(sb & 0xffffu));
    float b = bf16_to_f32(ushort(sb >> 16));
    return float(code) * s + b;
}

template <typename Tx, typename To, int BITS>
kernel void kernel_qmatmul(constant kargs_qgemm& p [[buffer(0)]],
                           device const Tx* x [[buffer(1)]],
                           device const uint* w [[buffer(2)]],
                           device const uchar* bias [[buffer(3)]],
                           device To* dst [[buffer(4)]],
                           uint3 tg [[threadgroup_position_in_grid]],
                           uint tid [[thread_index_in_threadgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float as[GEMM_BM * GEMM_LD];
    threadgroup float bs[GEMM_BN * GEMM_LD];
    threadgroup float cs[GEMM_BM * GEMM_BN];
    uint m0 = tg.y * GEMM_BM;
    uint n0 = tg.x * GEMM_BN;
    uint sm = (sg / 2u) * 16u;
    uint sn = (sg % 2u) * 16u;
    simdgroup_float8x8 acc[2][2];
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            acc[i][j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
        }
    }
    for (uint k0 = 0; k0 < p.k; k0 += GEMM_BK) {
        for (uint e = tid; e < GEMM_BM * GEMM_BK; e += GEMM_THREADS) {
            uint r = e / GEMM_BK;
            uint c = e % GEMM_BK;
            uint k = k0 + c;
            float av = 0.0f;
            float bv = 0.0f;
            if (k < p.k) {
                if (m0 + r < p.m) {
                    av = ld(x[ulong(m0 + r) * ulong(p.k) + k]);
                }
                if (n0 + r < p.n) {
                    bv = qgemm_b<BITS>(p, w, n0 + r, k);
                }
            }
            as[r * GEMM_LD + c] = av;
            bs[r * GEMM_LD + c] = bv;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint kk = 0; kk < GEMM_BK; kk += 8u) {
            simdgroup_float8x8 ma[2];
            simdgroup_float8x8 mb[2];
            for (int i = 0; i < 2; i++) {
                simdgroup_load(ma[i], as + (sm + 8u * uint(i)) * GEMM_LD + kk, GEMM_LD);
                simdgroup_load(mb[i], bs + (sn + 8u * uint(i)) * GEMM_LD + kk, GEMM_LD, ulong2(0, 0), true);
            }
            for (int i = 0; i < 2; i++) {
                for (int j = 0; j < 2; j++) {
                    simdgroup_multiply_accumulate(acc[i][j], ma[i], mb[j], acc[i][j]);
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            simdgroup_store(acc[i][j], cs + (sm + 8u * uint(i)) * GEMM_BN + sn + 8u * uint(j), GEMM_BN);
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint e = tid; e < GEMM_BM * GEMM_BN; e += GEMM_THREADS) {
        uint r = e / GEMM_BN;
        uint c = e % GEMM_BN;
        uint m = m0 + r;
        uint n = n0 + c;
        if (m >= p.m || n >= p.n) {
            continue;
        }
        float v = cs[e];
        if (p.has_bias != 0u) {
            v += load_any(bias, p.bias_dt, ulong(n));
        }
        dst[ulong(m) * ulong(p.n) + n] = st<To>(v);
    }
}

// kernel_qmatmul_<x>_<out>_q<bits>.
template [[host_name("kernel_qmatmul_f32_f32_q4")]] [[kernel]] decltype(kernel_qmatmul<float, float, 4>) kernel_qmatmul<float, float, 4>;
template [[host_name("kernel_qmatmul_f32_f16_q4")]] [[kernel]] decltype(kernel_qmatmul<float, half, 4>) kernel_qmatmul<float, half, 4>;
template [[host_name("kernel_qmatmul_f32_bf16_q4")]] [[kernel]] decltype(kernel_qmatmul<float, bf16, 4>) kernel_qmatmul<float, bf16, 4>;
template [[host_name("kernel_qmatmul_f16_f32_q4")]] [[kernel]] decltype(kernel_qmatmul<half, float, 4>) kernel_qmatmul<half, float, 4>;
template [[host_name("kernel_qmatmul_f16_f16_q4")]] [[kernel]] decltype(kernel_qmatmul<half, half, 4>) kernel_qmatmul<half, half, 4>;
template [[host_name("kernel_qmatmul_f16_bf16_q4")]] [[kernel]] decltype(kernel_qmatmul<half, bf16, 4>) kernel_qmatmul<half, bf16, 4>;
template [[host_name("kernel_qmatmul_bf16_f32_q4")]] [[kernel]] decltype(kernel_qmatmul<bf16, float, 4>) kernel_qmatmul<bf16, float, 4>;
template [[host_name("kernel_qmatmul_bf16_f16_q4")]] [[kernel]] decltype(kernel_qmatmul<bf16, half, 4>) kernel_qmatmul<bf16, half, 4>;
template [[host_name("kernel_qmatmul_bf16_bf16_q4")]] [[kernel]] decltype(kernel_qmatmul<bf16, bf16, 4>) kernel_qmatmul<bf16, bf16, 4>;
template [[host_name("kernel_qmatmul_f32_f32_q8")]] [[kernel]] decltype(kernel_qmatmul<float, float, 8>) kernel_qmatmul<float, float, 8>;
template [[host_name("kernel_qmatmul_f32_f16_q8")]] [[kernel]] decltype(kernel_qmatmul<float, half, 8>) kernel_qmatmul<float, half, 8>;
template [[host_name("kernel_qmatmul_f32_bf16_q8")]] [[kernel]] decltype(kernel_qmatmul<float, bf16, 8>) kernel_qmatmul<float, bf16, 8>;
template [[host_name("kernel_qmatmul_f16_f32_q8")]] [[kernel]] decltype(kernel_qmatmul<half, float, 8>) kernel_qmatmul<half, float, 8>;
template [[host_name("kernel_qmatmul_f16_f16_q8")]] [[kernel]] decltype(kernel_qmatmul<half, half, 8>) kernel_qmatmul<half, half, 8>;
template [[host_name("kernel_qmatmul_f16_bf16_q8")]] [[kernel]] decltype(kernel_qmatmul<half, bf16, 8>) kernel_qmatmul<half, bf16, 8>;
template [[host_name("kernel_qmatmul_bf16_f32_q8")]] [[kernel]] decltype(kernel_qmatmul<bf16, float, 8>) kernel_qmatmul<bf16, float, 8>;
template [[host_name("kernel_qmatmul_bf16_f16_q8")]] [[kernel]] decltype(kernel_qmatmul<bf16, half, 8>) kernel_qmatmul<bf16, half, 8>;
template [[host_name("kernel_qmatmul_bf16_bf16_q8")]] [[kernel]] decltype(kernel_qmatmul<bf16, bf16, 8>) kernel_qmatmul<bf16, bf16, 8>;
