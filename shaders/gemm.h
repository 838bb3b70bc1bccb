// gemm.h: the tiled matrix product behind MatMul, Conv and ConvTranspose.
//
// dst[m, n] = sum_k a[m, k] * b[n, k] + bias[n] per group (threadgroup z).
// A threadgroup of 4 simdgroups computes a 32x32 tile of dst: each inner
// step stages a 32x32 tile of a and of b in threadgroup memory as float
// (zero beyond the edges; gathered through the convolution geometry for
// Conv), and each simdgroup accumulates a 16x16 quarter with 8x8 simdgroup
// matrices. Sums are float32 in the matrix unit's order, so results agree
// with the reference (eight fixed partial sums) to rounding; the bias is
// added before the single rounding to Tout.
#ifndef H3_GEMM_H
#define H3_GEMM_H

#include "common.h"

#define GEMM_MODE_MATMUL 0
#define GEMM_MODE_CONV 1
#define GEMM_MODE_CONV_T 2

#define GEMM_BM 32
#define GEMM_BN 32
#define GEMM_BK 32
#define GEMM_LD 36 // row stride of the staged tiles (padded against bank conflicts)
#define GEMM_THREADS 128

// gemm_a is a[m, k] of group g.
template <typename Tx, int MODE>
inline float gemm_a(constant kargs_gemm& p, device const Tx* x, uint g, uint m, uint k) {
    if (MODE == GEMM_MODE_MATMUL) {
        return ld(x[ulong(m) * ulong(p.k) + k]);
    }
    uint ci = k / p.kprod;
    uint kk = k - ci * p.kprod;
    // Spatial coordinates of output position m and kernel offset kk, innermost axis last.
    uint orem = m;
    uint krem = kk;
    ulong off = 0;
    ulong scale = 1;
    for (int a = int(p.nsp) - 1; a >= 0; a--) {
        int o = int(orem % p.out_size[a]);
        orem /= p.out_size[a];
        int q = int(krem % p.ker[a]);
        krem /= p.ker[a];
        int i;
        if (MODE == GEMM_MODE_CONV) {
            bool ok = true;
            i = pad_coord(o * p.stride[a] - p.pad_before[a] + q * p.dil[a], int(p.in_size[a]), p.pad_mode, ok);
            if (!ok) {
                return 0.0f;
            }
        } else {
            int num = o + p.pad_before[a] - q * p.dil[a];
            if (num < 0 || num % p.stride[a] != 0 || num / p.stride[a] >= int(p.in_size[a])) {
                return 0.0f;
            }
            i = num / p.stride[a];
        }
        off += ulong(i) * scale;
        scale *= ulong(p.in_size[a]);
    }
    return ld(x[ulong(g * p.cin_g + ci) * p.in_prod + off]);
}

// gemm_b is b[n, k] of group g.
template <typename Tw, int MODE>
inline float gemm_b(constant kargs_gemm& p, device const Tw* w, uint g, uint n, uint k) {
    if (MODE == GEMM_MODE_MATMUL) {
        return ld(w[ulong(n) * ulong(p.k) + k]);
    }
    if (MODE == GEMM_MODE_CONV) { // w [Cout, Cin/groups, kernel...]
        return ld(w[ulong(g * p.cout_g + n) * ulong(p.k) + k]);
    }
    uint ci = k / p.kprod; // w [Cin, Cout/groups, kernel...]
    uint kk = k - ci * p.kprod;
    return ld(w[(ulong(g * p.cin_g + ci) * ulong(p.cout_g) + n) * ulong(p.kprod) + kk]);
}

// gemm_tile computes one 32x32 tile of dst; the kernel owns the threadgroup
// memory (as, bs: GEMM_BM*GEMM_LD floats each; cs: GEMM_BM*GEMM_BN floats).
template <typename Tx, typename Tw, typename To, int MODE>
inline void gemm_tile(constant kargs_gemm& p, device const Tx* x, device const Tw* w, device const uchar* bias,
                      device To* dst, threadgroup float* as, threadgroup float* bs, threadgroup float* cs,
                      uint3 tg, uint tid, uint sg) {
    uint m0 = tg.y * GEMM_BM;
    uint n0 = tg.x * GEMM_BN;
    uint g = tg.z;
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
                    av = gemm_a<Tx, MODE>(p, x, g, m0 + r, k);
                }
                if (n0 + r < p.n) {
                    bv = gemm_b<Tw, MODE>(p, w, g, n0 + r, k);
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
            v += load_any(bias, p.bias_dt, ulong(g * p.cout_g + n));
        }
        if (MODE == GEMM_MODE_MATMUL) {
            dst[ulong(m) * ulong(p.n) + n] = st<To>(v);
        } else {
            dst[ulong(g * p.cout_g + n) * p.out_prod + m] = st<To>(v);
        }
    }
}

#endif
