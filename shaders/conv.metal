// conv.metal: Conv and ConvTranspose (compute.Kernels), N-d (1 to 3 spatial
// axes), batch 1, with groups, stride, dilation and zero/reflect/replicate
// borders (ConvTranspose: zeros, padding crops the full output), as implicit
// matrix products (gemm.h): the input is gathered into tiles on the fly, never
// unfolded in memory.
#include "gemm.h"

template <typename Tx, typename To>
kernel void kernel_conv(constant kargs_gemm& p [[buffer(0)]],
                        device const Tx* x [[buffer(1)]],
                        device const Tx* w [[buffer(2)]],
                        device const uchar* bias [[buffer(3)]],
                        device To* dst [[buffer(4)]],
                        uint3 tg [[threadgroup_position_in_grid]],
                        uint tid [[thread_index_in_threadgroup]],
                        uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float as[GEMM_BM * GEMM_LD];
    threadgroup float bs[GEMM_BN * GEMM_LD];
    threadgroup float cs[GEMM_BM * GEMM_BN];
    gemm_tile<Tx, Tx, To, GEMM_MODE_CONV>(p, x, w, bias, dst, as, bs, cs, tg, tid, sg);
}

template <typename Tx, typename To>
kernel void kernel_conv_transpose(constant kargs_gemm& p [[buffer(0)]],
                                  device const Tx* x [[buffer(1)]],
                                  device const Tx* w [[buffer(2)]],
                                  device const uchar* bias [[buffer(3)]],
                                  device To* dst [[buffer(4)]],
                                  uint3 tg [[threadgroup_position_in_grid]],
                                  uint tid [[thread_index_in_threadgroup]],
                                  uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float as[GEMM_BM * GEMM_LD];
    threadgroup float bs[GEMM_BN * GEMM_LD];
    threadgroup float cs[GEMM_BM * GEMM_BN];
    gemm_tile<Tx, Tx, To, GEMM_MODE_CONV_T>(p, x, w, bias, dst, as, bs, cs, tg, tid, sg);
}

template [[host_name("kernel_conv_f32_f32")]] [[kernel]] decltype(kernel_conv<float, float>) kernel_conv<float, float>;
template [[host_name("kernel_conv_f32_f16")]] [[kernel]] decltype(kernel_conv<float, half>) kernel_conv<float, half>;
template [[host_name("kernel_conv_f32_bf16")]] [[kernel]] decltype(kernel_conv<float, bf16>) kernel_conv<float, bf16>;
template [[host_name("kernel_conv_f16_f32")]] [[kernel]] decltype(kernel_conv<half, float>) kernel_conv<half, float>;
template [[host_name("kernel_conv_f16_f16")]] [[kernel]] decltype(kernel_conv<half, half>) kernel_conv<half, half>;
template [[host_name("kernel_conv_f16_bf16")]] [[kernel]] decltype(kernel_conv<half, bf16>) kernel_conv<half, bf16>;
template [[host_name("kernel_conv_bf16_f32")]] [[kernel]] decltype(kernel_conv<bf16, float>) kernel_conv<bf16, float>;
template [[host_name("kernel_conv_bf16_f16")]] [[kernel]] decltype(kernel_conv<bf16, half>) kernel_conv<bf16, half>;
template [[host_name("kernel_conv_bf16_bf16")]] [[kernel]] decltype(kernel_conv<bf16, bf16>) kernel_conv<bf16, bf16>;

template [[host_name("kernel_conv_transpose_f32_f32")]] [[kernel]] decltype(kernel_conv_transpose<float, float>) kernel_conv_transpose<float, float>;
template [[host_name("kernel_conv_transpose_f32_f16")]] [[kernel]] decltype(kernel_conv_transpose<float, half>) kernel_conv_transpose<float, half>;
template [[host_name("kernel_conv_transpose_f32_bf16")]] [[kernel]] decltype(kernel_conv_transpose<float, bf16>) kernel_conv_transpose<float, bf16>;
template [[host_name("kernel_conv_transpose_f16_f32")]] [[kernel]] decltype(kernel_conv_transpose<half, float>) kernel_conv_transpose<half, float>;
template [[host_name("kernel_conv_transpose_f16_f16")]] [[kernel]] decltype(kernel_conv_transpose<half, half>) kernel_conv_transpose<half, half>;
template [[host_name("kernel_conv_transpose_f16_bf16")]] [[kernel]] decltype(kernel_conv_transpose<half, bf16>) kernel_conv_transpose<half, bf16>;
template [[host_name("kernel_conv_transpose_bf16_f32")]] [[kernel]] decltype(kernel_conv_transpose<bf16, float>) kernel_conv_transpose<bf16, float>;
template [[host_name("kernel_conv_transpose_bf16_f16")]] [[kernel]] decltype(kernel_conv_transpose<bf16, half>) kernel_conv_transpose<bf16, half>;
template [[host_name("kernel_conv_transpose_bf16_bf16")]] [[kernel]] decltype(kernel_conv_transpose<bf16, bf16>) kernel_conv_transpose<bf16, bf16>;
