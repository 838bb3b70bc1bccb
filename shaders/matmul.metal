// matmul.metal: MatMul (compute.Kernels), dst[m, n] = sum_k x[m, k] * w[n, k]
// + bias[n], a torch Linear with its [out, in] weight. The hand kernel for
// every shape; on macOS large products of one storage type go to MPSGraph
// instead (oracle metal-hand-gemm keeps them here).
#include "gemm.h"

template <typename Tx, typename Tw, typename To>
kernel void kernel_matmul(constant kargs_gemm& p [[buffer(0)]],
                          device const Tx* x [[buffer(1)]],
                          device const Tw* w [[buffer(2)]],
                          device const uchar* bias [[buffer(3)]],
                          device To* dst [[buffer(4)]],
                          uint3 tg [[threadgroup_position_in_grid]],
                          uint tid [[thread_index_in_threadgroup]],
                          uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float as[GEMM_BM * GEMM_LD];
    threadgroup float bs[GEMM_BN * GEMM_LD];
    threadgroup float cs[GEMM_BM * GEMM_BN];
    gemm_tile<Tx, Tw, To, GEMM_MODE_MATMUL>(p, x, w, bias, dst, as, bs, cs, tg, tid, sg);
}

// x and w of one type: kernel_matmul_<in>_<out>.
template [[host_name("kernel_matmul_f32_f32")]] [[kernel]] decltype(kernel_matmul<float, float, float>) kernel_matmul<float, float, float>;
template [[host_name("kernel_matmul_f32_f16")]] [[kernel]] decltype(kernel_matmul<float, float, half>) kernel_matmul<float, float, half>;
template [[host_name("kernel_matmul_f32_bf16")]] [[kernel]] decltype(kernel_matmul<float, float, bf16>) kernel_matmul<float, float, bf16>;
template [[host_name("kernel_matmul_f16_f32")]] [[kernel]] decltype(kernel_matmul<half, half, float>) kernel_matmul<half, half, float>;
template [[host_name("kernel_matmul_f16_f16")]] [[kernel]] decltype(kernel_matmul<half, half, half>) kernel_matmul<half, half, half>;
template [[host_name("kernel_matmul_f16_bf16")]] [[kernel]] decltype(kernel_matmul<half, half, bf16>) kernel_matmul<half, half, bf16>;
template [[host_name("kernel_matmul_bf16_f32")]] [[kernel]] decltype(kernel_matmul<bf16, bf16, float>) kernel_matmul<bf16, bf16, float>;
template [[host_name("kernel_matmul_bf16_f16")]] [[kernel]] decltype(kernel_matmul<bf16, bf16, half>) kernel_matmul<bf16, bf16, half>;
template [[host_name("kernel_matmul_bf16_bf16")]] [[kernel]] decltype(kernel_matmul<bf16, bf16, bf16>) kernel_matmul<bf16, bf16, bf16>;

// float32 activations with bf16/f16 weights: kernel_matmul_f32_<out>_w<weight type>.
template [[host_name("kernel_matmul_f32_f32_wbf16")]] [[kernel]] decltype(kernel_matmul<float, bf16, float>) kernel_matmul<float, bf16, float>;
template [[host_name("kernel_matmul_f32_f16_wbf16")]] [[kernel]] decltype(kernel_matmul<float, bf16, half>) kernel_matmul<float, bf16, half>;
template [[host_name("kernel_matmul_f32_bf16_wbf16")]] [[kernel]] decltype(kernel_matmul<float, bf16, bf16>) kernel_matmul<float, bf16, bf16>;
template [[host_name("kernel_matmul_f32_f32_wf16")]] [[kernel]] decltype(kernel_matmul<float, half, float>) kernel_matmul<float, half, float>;
template [[host_name("kernel_matmul_f32_f16_wf16")]] [[kernel]] decltype(kernel_matmul<float, half, half>) kernel_matmul<float, half, half>;
template [[host_name("kernel_matmul_f32_bf16_wf16")]] [[kernel]] decltype(kernel_matmul<float, half, bf16>) kernel_matmul<float, half, bf16>;
