// snake.metal: Snake and SnakeBeta (compute.Kernels), the activations of the
// audio VAE: x + 1/(b + 1e-9) * sin(a*x)^2 per channel of x [C, L], with
// a = alpha[c] and b = beta[c] (or a), both exp()ed when log_scale. The order
// of operations follows the reference: x + reciprocal(.) * sin(a*x)^2.
#include "common.h"

template <typename Tin, typename Tout>
kernel void kernel_snake(constant kargs_snake& args [[buffer(0)]],
                         device const Tin* x [[buffer(1)]],
                         device const uchar* alpha [[buffer(2)]],
                         device const uchar* beta [[buffer(3)]],
                         device Tout* dst [[buffer(4)]],
                         uint2 gid [[thread_position_in_grid]],
                         uint2 gsize [[threads_per_grid]]) {
    ulong i = grid_index(gid, gsize);
    if (i >= args.n) {
        return;
    }
    ulong c = i / args.l;
    float a = load_any(alpha, args.alpha_dt, c);
    if (args.log_scale != 0u) {
        a = precise::exp(a);
    }
    float d = a;
    if (args.has_beta != 0u) {
        d = load_any(beta, args.beta_dt, c);
        if (args.log_scale != 0u) {
            d = precise::exp(d);
        }
    }
    float inv = 1.0f / (d + 1e-9f);
    float v = ld(x[i]);
    float s = precise::sin(a * v);
    dst[i] = st<Tout>(v + inv * (s * s));
}

template [[host_name("kernel_snake_f32_f32")]] [[kernel]] decltype(kernel_snake<float, float>) kernel_snake<float, float>;
template [[host_name("kernel_snake_f32_f16")]] [[kernel]] decltype(kernel_snake<float, half>) kernel_snake<float, half>;
template [[host_name("kernel_snake_f32_bf16")]] [[kernel]] decltype(kernel_snake<float, bf16>) kernel_snake<float, bf16>;
template [[host_name("kernel_snake_f16_f32")]] [[kernel]] decltype(kernel_snake<half, float>) kernel_snake<half, float>;
template [[host_name("kernel_snake_f16_f16")]] [[kernel]] decltype(kernel_snake<half, half>) kernel_snake<half, half>;
template [[host_name("kernel_snake_f16_bf16")]] [[kernel]] decltype(kernel_snake<half, bf16>) kernel_snake<half, bf16>;
template [[host_name("kernel_snake_bf16_f32")]] [[kernel]] decltype(kernel_snake<bf16, float>) kernel_snake<bf16, float>;
template [[host_name("kernel_snake_bf16_f16")]] [[kernel]] decltype(kernel_snake<bf16, half>) kernel_snake<bf16, half>;
template [[host_name("kernel_snake_bf16_bf16")]] [[kernel]] decltype(kernel_snake<bf16, bf16>) kernel_snake<bf16, bf16>;
