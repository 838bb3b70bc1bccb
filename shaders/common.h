// common.h: helpers shared by every H3 Studio kernel.
//
// Numerics follow package compute: arithmetic is float32 whatever the storage
// type and a result is rounded once, to the destination type, when stored
// (round to nearest even). bf16 is stored as raw bits (struct bf16) and
// converted by hand, so rounding is exactly compute.BF16FromF32 on every GPU
// family (Apple7 and Apple8 have no bfloat hardware).
#ifndef H3_COMMON_H
#define H3_COMMON_H

#include <metal_stdlib>
using namespace metal;

#include "kargs.h"

// ------------------------------------------------------------------ bf16

struct bf16 {
    ushort bits;
};

inline float bf16_to_f32(ushort b) {
    return as_type<float>(uint(b) << 16);
}

// f32_to_bf16 rounds to nearest even; a NaN stays a quiet NaN with its sign.
inline ushort f32_to_bf16(float f) {
    uint u = as_type<uint>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return ushort((u >> 16) | 0x40u);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return ushort(u >> 16);
}

// ------------------------------------------------------------------ typed values
// ld widens a stored value to float; st<T> rounds a float to storage type T.
// They work on values, not pointers, so one helper serves every address space.

inline float ld(float v) { return v; }
inline float ld(half v) { return float(v); }
inline float ld(bf16 v) { return bf16_to_f32(v.bits); }

template <typename T> inline T st(float f);
template <> inline float st<float>(float f) { return f; }
template <> inline half st<half>(float f) { return half(f); }
template <> inline bf16 st<bf16>(float f) {
    bf16 b;
    b.bits = f32_to_bf16(f);
    return b;
}

// round_to<T> is the value f takes when stored as T.
template <typename T> inline float round_to(float f) { return ld(st<T>(f)); }

// ------------------------------------------------------------------ run-time dtypes
// Operands other than a kernel's main input and output (weights, biases,
// tables, indices) may have any storage type: they are read through load_any
// with the DT_* code of kargs.h, a branch that is uniform across the grid.

// f64_bits_to_f32 converts float64 bits to float32 (round to nearest even, as
// Go's float32(float64)); MSL has no double.
inline float f64_bits_to_f32(ulong b) {
    uint sign = uint(b >> 63) << 31;
    uint e64 = uint(b >> 52) & 0x7ffu;
    ulong man = b & 0xfffffffffffffUL;
    if (e64 == 0x7ffu) {
        if (man != 0) {
            return as_type<float>(sign | 0x7fc00000u | uint(man >> 29));
        }
        return as_type<float>(sign | 0x7f800000u);
    }
    if (e64 == 0u) {
        return as_type<float>(sign);
    }
    int e = int(e64) - 1023 + 127;
    if (e >= 255) {
        return as_type<float>(sign | 0x7f800000u);
    }
    ulong m = man | (1UL << 52);
    int shift = 29;
    uint r;
    if (e <= 0) {
        shift = 30 - e;
        if (shift > 54) {
            return as_type<float>(sign);
        }
        r = 0u;
    } else {
        r = uint(e) << 23;
        m = man;
    }
    ulong q = m >> shift;
    ulong rem = m & ((1UL << shift) - 1UL);
    ulong halfway = 1UL << (shift - 1);
    r += uint(q);
    if (rem > halfway || (rem == halfway && (r & 1u) != 0u)) {
        r += 1u;
    }
    return as_type<float>(sign | r);
}

// f32_to_f64_bits converts exactly.
inline ulong f32_to_f64_bits(float f) {
    uint u = as_type<uint>(f);
    ulong sign = ulong(u >> 31) << 63;
    uint e = (u >> 23) & 0xffu;
    ulong man = ulong(u & 0x7fffffu);
    if (e == 0xffu) {
        return sign | (0x7ffUL << 52) | (man << 29) | (man != 0 ? (1UL << 51) : 0UL);
    }
    if (e == 0u) {
        if (man == 0) {
            return sign;
        }
        int ee = 1;
        while ((man & 0x800000UL) == 0) {
            man <<= 1;
            ee -= 1;
        }
        man &= 0x7fffffUL;
        return sign | (ulong(ee - 127 + 1023) << 52) | (man << 29);
    }
    return sign | (ulong(e - 127u + 1023u) << 52) | (man << 29);
}

inline float load_any(device const uchar* p, uint dt, ulong i) {
    switch (dt) {
    case DT_F32:
        return ((device const float*)p)[i];
    case DT_F16:
        return float(((device const half*)p)[i]);
    case DT_BF16:
        return bf16_to_f32(((device const ushort*)p)[i]);
    case DT_F64:
        return f64_bits_to_f32(((device const ulong*)p)[i]);
    case DT_I64:
        return float(((device const long*)p)[i]);
    case DT_I32:
        return float(((device const int*)p)[i]);
    case DT_I8:
        return float(((device const char*)p)[i]);
    default: // DT_U8, DT_BOOL
        return float(p[i]);
    }
}

// load_index reads element i of an I32 or I64 index tensor.
inline long load_index(device const uchar* p, uint dt, ulong i) {
    if (dt == DT_I64) {
        return ((device const long*)p)[i];
    }
    return long(((device const int*)p)[i]);
}

// store_any rounds f to dt as compute.EncodeFloat32 does (float types round
// to nearest even, integers truncate toward zero).
inline void store_any(device uchar* p, uint dt, ulong i, float f) {
    switch (dt) {
    case DT_F32:
        ((device float*)p)[i] = f;
        break;
    case DT_F16:
        ((device half*)p)[i] = half(f);
        break;
    case DT_BF16:
        ((device ushort*)p)[i] = f32_to_bf16(f);
        break;
    case DT_F64:
        ((device ulong*)p)[i] = f32_to_f64_bits(f);
        break;
    case DT_I64:
        ((device long*)p)[i] = long(f);
        break;
    case DT_I32:
        ((device int*)p)[i] = int(f);
        break;
    case DT_I8:
        ((device char*)p)[i] = char(int(f));
        break;
    default: // DT_U8, DT_BOOL
        p[i] = uchar(uint(f));
        break;
    }
}

// pad_coord maps coordinate i of an axis of n into [0, n) by the border
// rule; ok turns false for a zero-padded position.
inline int pad_coord(int i, int n, uint mode, thread bool& ok) {
    if (i >= 0 && i < n) {
        return i;
    }
    if (mode == PAD_REFLECT) {
        if (n == 1) {
            return 0;
        }
        int period = 2 * (n - 1);
        i %= period;
        if (i < 0) {
            i += period;
        }
        if (i >= n) {
            i = period - i;
        }
        return i;
    }
    if (mode == PAD_REPLICATE) {
        return i < 0 ? 0 : n - 1;
    }
    ok = false;
    return 0;
}

// grid_index is the linear index of a thread of a 2-D grid of 1-D groups
// (the host splits launches larger than one grid row).
inline ulong grid_index(uint2 gid, uint2 gsize) {
    return ulong(gid.y) * ulong(gsize.x) + ulong(gid.x);
}

// ------------------------------------------------------------------ row reductions

// row_sum returns the sum of v over the threadgroup (every thread gets the
// same value); tpg is a multiple of 32 and part holds 32 floats. The caller
// passes a barrier before part is written again. The row kernels of
// norm.metal and fused.metal share it, so that a fused kernel sums a row in
// exactly the order of the unfused one.
inline float row_sum(float v, threadgroup float* part, uint tid, uint tpg, uint sg, uint lane) {
    v = simd_sum(v);
    if (lane == 0u) {
        part[sg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float s = 0.0f;
    for (uint i = 0; i < tpg / 32u; i++) {
        s += part[i];
    }
    return s;
}

#endif
