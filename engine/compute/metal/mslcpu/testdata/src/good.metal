// Kernels the harness must run correctly.
#include "common.h"

// Sum of squares per row: simd_sum, threadgroup partials, one barrier.
kernel void row_sumsq(constant args_n& a [[buffer(0)]],
                      device const float* x [[buffer(1)]],
                      device float* y [[buffer(2)]],
                      uint row [[threadgroup_position_in_grid]],
                      uint tid [[thread_index_in_threadgroup]],
                      uint tpg [[threads_per_threadgroup]],
                      uint sg [[simdgroup_index_in_threadgroup]],
                      uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float part[32];
    float s = 0.0f;
    for (uint i = tid; i < a.n; i += tpg) {
        float v = x[row * a.n + i];
        s += v * v;
    }
    s = simd_sum(s);
    if (lane == 0) {
        part[sg] = s;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tid == 0) {
        float t = 0.0f;
        for (uint i = 0; i < (tpg + 31) / 32; i++) {
            t += part[i];
        }
        y[row] = t;
    }
}

template <typename T>
kernel void scale_t(constant args_n& a [[buffer(0)]],
                    device const T* x [[buffer(1)]],
                    device T* y [[buffer(2)]],
                    uint2 gid [[thread_position_in_grid]]) {
    if (gid.x < a.n) {
        y[gid.x] = T(float(x[gid.x]) * a.eps);
    }
}

template [[host_name("scale_f32")]] [[kernel]] decltype(scale_t<float>) scale_t<float>;
template [[host_name("scale_f16")]] [[kernel]] decltype(scale_t<half>) scale_t<half>;

// 8x8 simdgroup matrix product of an n x n matrix (n a multiple of 8), one simdgroup per 8x8 tile.
kernel void sgmm(constant args_n& a [[buffer(0)]],
                 device const float* A [[buffer(1)]],
                 device const float* B [[buffer(2)]],
                 device float* C [[buffer(3)]],
                 uint2 tg [[threadgroup_position_in_grid]]) {
    simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    simdgroup_float8x8 ma, mb;
    for (uint k = 0; k < a.n; k += 8) {
        simdgroup_load(ma, A, a.n, ulong2(k, tg.y * 8));
        simdgroup_load(mb, B, a.n, ulong2(tg.x * 8, k));
        simdgroup_multiply_accumulate(acc, ma, mb, acc);
    }
    simdgroup_store(acc, C, a.n, ulong2(tg.x * 8, tg.y * 8));
}

// Reverse within a group through threadgroup memory (a barrier between).
kernel void reverse_tg(device const uint* x [[buffer(0)]],
                       device uint* y [[buffer(1)]],
                       uint gid [[thread_position_in_grid]],
                       uint tid [[thread_position_in_threadgroup]],
                       uint tpg [[threads_per_threadgroup]]) {
    threadgroup uint buf[256];
    threadgroup uint* mine = buf + tid;
    *mine = x[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    y[gid] = buf[tpg - 1 - tid];
}
