// modulate.metal: Modulate (AdaLN) and GatedAdd (gated residual) of compute.Kernels.
//
// Row r of x [R, H] uses row idx[r] of a modulation table [T, W] at given
// columns. For bf16/f16 outputs every operation of the reference's
// low-precision chain rounds (round_to<Tout>); for float outputs round_to is
// the identity and the same expression is the float32 reference.
#include "common.h"

// dst = x * (1 + table[idx[r], scale_col + j]) + table[idx[r], shift_col + j]
template <typename Tin, typename Tout>
kernel void kernel_modulate(constant kargs_modulate& args [[buffer(0)]],
                            device const Tin* x [[buffer(1)]],
                            device const uchar* table [[buffer(2)]],
                            device const uchar* idx [[buffer(3)]],
                            device Tout* dst [[buffer(4)]],
                            uint2 gid [[thread_position_in_grid]],
                            uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i >= args.n) {
        return;
    }
    ulong h = ulong(args.h);
    ulong row = i / h;
    ulong j = i - row * h;
    long tr = load_index(idx, args.idx_dt, row);
    if (tr < 0 || tr >= long(args.table_rows)) {
        dst[i] = st<Tout>(NAN);
        return;
    }
    ulong base = ulong(tr) * ulong(args.table_w);
    float sc = load_any(table, args.table_dt, base + args.scale_col + j);
    float sh = load_any(table, args.table_dt, base + args.shift_col + j);
    float xv = ld(x[i]);
    float prod = round_to<Tout>(xv * round_to<Tout>(1.0f + sc));
    dst[i] = st<Tout>(prod + sh);
}

// dst = x + table[idx[r], gate_col + j] * y
template <typename Tin, typename Tout>
kernel void kernel_gated_add(constant kargs_gated_add& args [[buffer(0)]],
                             device const Tin* x [[buffer(1)]],
                             device const uchar* y [[buffer(2)]],
                             device const uchar* table [[buffer(3)]],
                             device const uchar* idx [[buffer(4)]],
                             device Tout* dst [[buffer(5)]],
                             uint2 gid [[thread_position_in_grid]],
                             uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i >= args.n) {
        return;
    }
    ulong h = ulong(args.h);
    ulong row = i / h;
    ulong j = i - row * h;
    long tr = load_index(idx, args.idx_dt, row);
    if (tr < 0 || tr >= long(args.table_rows)) {
        dst[i] = st<Tout>(NAN);
        return;
    }
    float g = load_any(table, args.table_dt, ulong(tr) * ulong(args.table_w) + args.gate_col + j);
    float yv = load_any(y, args.y_dt, i);
    dst[i] = st<Tout>(ld(x[i]) + round_to<Tout>(g * yv));
}

template [[host_name("kernel_modulate_f32_f32")]] [[kernel]] decltype(kernel_modulate<float, float>) kernel_modulate<float, float>;
template [[host_name("kernel_modulate_f32_f16")]] [[kernel]] decltype(kernel_modulate<float, half>) kernel_modulate<float, half>;
template [[host_name("kernel_modulate_f32_bf16")]] [[kernel]] decltype(kernel_modulate<float, bf16>) kernel_modulate<float, bf16>;
template [[host_name("kernel_modulate_f16_f32")]] [[kernel]] decltype(kernel_modulate<half, float>) kernel_modulate<half, float>;
template [[host_name("kernel_modulate_f16_f16")]] [[kernel]] decltype(kernel_modulate<half, half>) kernel_modulate<half, half>;
template [[host_name("kernel_modulate_f16_bf16")]] [[kernel]] decltype(kernel_modulate<half, bf16>) kernel_modulate<half, bf16>;
template [[host_name("kernel_modulate_bf16_f32")]] [[kernel]] decltype(kernel_modulate<bf16, float>) kernel_modulate<bf16, float>;
template [[host_name("kernel_modulate_bf16_f16")]] [[kernel]] decltype(kernel_modulate<bf16, half>) kernel_modulate<bf16, half>;
template [[host_name("kernel_modulate_bf16_bf16")]] [[kernel]] decltype(kernel_modulate<bf16, bf16>) kernel_modulate<bf16, bf16>;

template [[host_name("kernel_gated_add_f32_f32")]] [[kernel]] decltype(kernel_gated_add<float, float>) kernel_gated_add<float, float>;
template [[host_name("kernel_gated_add_f32_f16")]] [[kernel]] decltype(kernel_gated_add<float, half>) kernel_gated_add<float, half>;
template [[host_name("kernel_gated_add_f32_bf16")]] [[kernel]] decltype(kernel_gated_add<float, bf16>) kernel_gated_add<float, bf16>;
template [[host_name("kernel_gated_add_f16_f32")]] [[kernel]] decltype(kernel_gated_add<half, float>) kernel_gated_add<half, float>;
template [[host_name("kernel_gated_add_f16_f16")]] [[kernel]] decltype(kernel_gated_add<half, half>) kernel_gated_add<half, half>;
template [[host_name("kernel_gated_add_f16_bf16")]] [[kernel]] decltype(kernel_gated_add<half, bf16>) kernel_gated_add<half, bf16>;
template [[host_name("kernel_gated_add_bf16_f32")]] [[kernel]] decltype(kernel_gated_add<bf16, float>) kernel_gated_add<bf16, float>;
template [[host_name("kernel_gated_add_bf16_f16")]] [[kernel]] decltype(kernel_gated_add<bf16, half>) kernel_gated_add<bf16, half>;
template [[host_name("kernel_gated_add_bf16_bf16")]] [[kernel]] decltype(kernel_gated_add<bf16, bf16>) kernel_gated_add<bf16, bf16>;
