// rope.metal: RoPE (compute.Kernels), rotate-half pairing.
//
// x [.., S, D]: channel d < rot_dim/2 pairs with d + rot_dim/2, rotated by
// cos/sin [S, rot_dim/2] of the row's position; channels from rot_dim on pass
// through. For bf16/f16 outputs the two products and the sum each round
// (torch's x*cos + rotate_half(x)*sin on low-precision tensors).
#include "common.h"

// Thread (j, r): j < half rotates the pair (j, j + half) of row r; j >= half
// copies channel j + half. A thread reads both channels before writing, so
// dst may be the same view as x.
template <typename Tin, typename Tout>
kernel void kernel_rope(constant kargs_rope& args [[buffer(0)]],
                        device const Tin* x [[buffer(1)]],
                        device const uchar* cs [[buffer(2)]],
                        device const uchar* sn [[buffer(3)]],
                        device Tout* dst [[buffer(4)]],
                        uint2 gid [[thread_position_in_grid]]) {
    uint half_dim = args.rot_dim / 2u;
    if (gid.x >= args.d - half_dim || gid.y >= args.rows) {
        return;
    }
    ulong row = ulong(gid.y);
    ulong base = row * ulong(args.d);
    if (gid.x >= half_dim) {
        ulong c = base + gid.x + half_dim;
        dst[c] = st<Tout>(ld(x[c]));
        return;
    }
    ulong t = (row % ulong(args.s)) * ulong(half_dim) + gid.x;
    float c = load_any(cs, args.cs_dt, t);
    float s = load_any(sn, args.cs_dt, t);
    float a = ld(x[base + gid.x]);
    float b = ld(x[base + gid.x + half_dim]);
    float lo = round_to<Tout>(a * c) + round_to<Tout>(-b * s);
    float hi = round_to<Tout>(b * c) + round_to<Tout>(a * s);
    dst[base + gid.x] = st<Tout>(lo);
    dst[base + gid.x + half_dim] = st<Tout>(hi);
}

template [[host_name("kernel_rope_f32_f32")]] [[kernel]] decltype(kernel_rope<float, float>) kernel_rope<float, float>;
template [[host_name("kernel_rope_f32_f16")]] [[kernel]] decltype(kernel_rope<float, half>) kernel_rope<float, half>;
template [[host_name("kernel_rope_f32_bf16")]] [[kernel]] decltype(kernel_rope<float, bf16>) kernel_rope<float, bf16>;
template [[host_name("kernel_rope_f16_f32")]] [[kernel]] decltype(kernel_rope<half, float>) kernel_rope<half, float>;
template [[host_name("kernel_rope_f16_f16")]] [[kernel]] decltype(kernel_rope<half, half>) kernel_rope<half, half>;
template [[host_name("kernel_rope_f16_bf16")]] [[kernel]] decltype(kernel_rope<half, bf16>) kernel_rope<half, bf16>;
template [[host_name("kernel_rope_bf16_f32")]] [[kernel]] decltype(kernel_rope<bf16, float>) kernel_rope<bf16, float>;
template [[host_name("kernel_rope_bf16_f16")]] [[kernel]] decltype(kernel_rope<bf16, half>) kernel_rope<bf16, half>;
template [[host_name("kernel_rope_bf16_bf16")]] [[kernel]] decltype(kernel_rope<bf16, bf16>) kernel_rope<bf16, bf16>;
