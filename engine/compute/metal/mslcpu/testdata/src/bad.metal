// Broken kernels the harness must catch.
#include "common.h"

// The barrier between the write and the read of threadgroup memory is missing.
kernel void missing_barrier(device const uint* x [[buffer(0)]],
                            device uint* y [[buffer(1)]],
                            uint gid [[thread_position_in_grid]],
                            uint tid [[thread_position_in_threadgroup]],
                            uint tpg [[threads_per_threadgroup]]) {
    threadgroup uint buf[256];
    buf[tid] = x[gid];
    y[gid] = buf[tpg - 1 - tid];
}

// Reads one element past the end.
kernel void off_by_one(constant args_n& a [[buffer(0)]],
                       device const float* x [[buffer(1)]],
                       device float* y [[buffer(2)]],
                       uint gid [[thread_position_in_grid]]) {
    if (gid <= a.n) {
        y[gid % a.n] = x[gid];
    }
}

// Returns early, before the barrier the others wait at.
kernel void early_return(constant args_n& a [[buffer(0)]],
                         device float* y [[buffer(1)]],
                         uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float t[64];
    if (tid >= a.n) {
        return;
    }
    t[tid] = 1.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    y[tid] = t[(tid + 1) % a.n];
}

// Writes to a buffer bound read-only.
kernel void writes_input(device float* x [[buffer(0)]],
                         uint gid [[thread_position_in_grid]]) {
    x[gid] = 0.0f;
}

// Reads threadgroup memory nobody wrote.
kernel void uninitialised(device float* y [[buffer(0)]],
                          uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float t[64];
    t[tid] = 1.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    y[tid] = t[tid + 32];
}

// Half the lanes take a different simd_sum.
kernel void divergent_simd(device float* y [[buffer(0)]],
                           uint lane [[thread_index_in_simdgroup]]) {
    float s;
    if (lane < 16) {
        s = simd_sum(1.0f);
    } else {
        s = simd_sum(2.0f);
    }
    y[lane] = s;
}

// Never ends.
kernel void endless(constant args_n& a [[buffer(0)]],
                    device uint* y [[buffer(1)]]) {
    uint i = 0;
    while (a.n > 0) {
        i++;
        y[0] = i;
    }
}
