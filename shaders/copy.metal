// copy.metal: Copy and Fill (compute.Kernels).
//
// Copy between tensors of one dtype moves raw words (kernel_copy_u*); between
// float types it converts with one rounding (kernel_convert_<in>_<out>);
// anything else (integers, float64, bool) goes through float32 exactly as
// compute.DecodeFloat32 / EncodeFloat32 do (kernel_convert_any). Fill writes
// an element's bytes, rounded on the host.
#include "common.h"

// One thread per word; the grid is 2-D when a launch exceeds one grid row.
template <typename W>
kernel void kernel_copy(constant kargs_copy& args [[buffer(0)]],
                        device const W* src [[buffer(1)]],
                        device W* dst [[buffer(2)]],
                        uint2 gid [[thread_position_in_grid]],
                        uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i < args.n) {
        dst[i] = src[i];
    }
}

template [[host_name("kernel_copy_u8")]] [[kernel]] decltype(kernel_copy<uchar>) kernel_copy<uchar>;
template [[host_name("kernel_copy_u16")]] [[kernel]] decltype(kernel_copy<ushort>) kernel_copy<ushort>;
template [[host_name("kernel_copy_u32")]] [[kernel]] decltype(kernel_copy<uint>) kernel_copy<uint>;
template [[host_name("kernel_copy_u64")]] [[kernel]] decltype(kernel_copy<ulong>) kernel_copy<ulong>;

template <typename W>
kernel void kernel_fill(constant kargs_fill& args [[buffer(0)]],
                        device W* dst [[buffer(1)]],
                        uint2 gid [[thread_position_in_grid]],
                        uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i < args.n) {
        dst[i] = W(args.pattern);
    }
}

template [[host_name("kernel_fill_u8")]] [[kernel]] decltype(kernel_fill<uchar>) kernel_fill<uchar>;
template [[host_name("kernel_fill_u16")]] [[kernel]] decltype(kernel_fill<ushort>) kernel_fill<ushort>;
template [[host_name("kernel_fill_u32")]] [[kernel]] decltype(kernel_fill<uint>) kernel_fill<uint>;
template [[host_name("kernel_fill_u64")]] [[kernel]] decltype(kernel_fill<ulong>) kernel_fill<ulong>;

template <typename Tin, typename Tout>
kernel void kernel_convert(constant kargs_convert& args [[buffer(0)]],
                           device const Tin* src [[buffer(1)]],
                           device Tout* dst [[buffer(2)]],
                           uint2 gid [[thread_position_in_grid]],
                           uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i < args.n) {
        dst[i] = st<Tout>(ld(src[i]));
    }
}

template [[host_name("kernel_convert_f32_f16")]] [[kernel]] decltype(kernel_convert<float, half>) kernel_convert<float, half>;
template [[host_name("kernel_convert_f32_bf16")]] [[kernel]] decltype(kernel_convert<float, bf16>) kernel_convert<float, bf16>;
template [[host_name("kernel_convert_f16_f32")]] [[kernel]] decltype(kernel_convert<half, float>) kernel_convert<half, float>;
template [[host_name("kernel_convert_f16_bf16")]] [[kernel]] decltype(kernel_convert<half, bf16>) kernel_convert<half, bf16>;
template [[host_name("kernel_convert_bf16_f32")]] [[kernel]] decltype(kernel_convert<bf16, float>) kernel_convert<bf16, float>;
template [[host_name("kernel_convert_bf16_f16")]] [[kernel]] decltype(kernel_convert<bf16, half>) kernel_convert<bf16, half>;

kernel void kernel_convert_any(constant kargs_convert& args [[buffer(0)]],
                               device const uchar* src [[buffer(1)]],
                               device uchar* dst [[buffer(2)]],
                               uint2 gid [[thread_position_in_grid]],
                               uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i < args.n) {
        store_any(dst, args.dst_dt, i, load_any(src, args.src_dt, i));
    }
}
