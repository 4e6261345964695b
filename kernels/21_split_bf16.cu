// Stage 21 — FP32 at tensor-core speed: each operand split into three bf16 parts.
//
// The idea: most FP32 users cannot take bf16's or TF32's rounding (cuBLAS's TF32 path is
// 7-8x faster than SGEMM on the H100 and 230x less accurate), yet the tensor cores can
// still serve them. Every FP32 value is the exact sum of three bf16 values
// (common/fp32_split.cuh): A = A0 + A1 + A2, B = B0 + B1 + B2, each part about 2^-8 the
// size of the one before. Then
//   A B = A0 B0 + (A0 B1 + A1 B0) + (A0 B2 + A1 B1 + A2 B0) + (terms of 2^-24 and less),
// and the six products kept are bf16 products that the tensor cores compute exactly and
// add in FP32. The dropped terms are each about 2^-24 of |A0 B0|, as large as one FP32
// rounding of a product, but unlike SGEMM's roundings they do not grow with the running
// sum: the error should stay at SGEMM's or below, on wide data as on uniform data.
//
// How (this first version): six bf16 GEMMs are one, with K six times as long. A pre-pass
// writes A' = [A2 | A1 | A0 | A1 | A0 | A0] (M x 6K) and B' = [B0; B1; B2; B0; B1; B0]
// (6K x N), each segment K padded to a multiple of 8 with zeros, the smallest products
// first so that they are added before the large ones; then stage 20's kernel computes
// C = alpha A' B' + beta C, with FP32 C as every bf16 stage. The split is timed with it:
// the user hands over FP32 and gets FP32 back. What it wastes: A0 and B0 are written and
// read three times, A1 and B1 twice (12 bytes written per input element, against 4 read).
//
// Prediction: the GEMM does six times the work of a bf16 one at stage 20's rate (about
// 700 TFLOPS): 1.2 ms at N = 4096, 9.4 ms at 8192; the pre-pass moves 0.54 GB at 4096,
// 2.1 GB at 8192 (0.2 and 0.7 ms): 1.9x cuBLAS SGEMM at 4096 and 2.1x at 8192.
//
// Measured on the H100 (make results, make accuracy): 112.5 TFLOPS at N = 4096, 223 % of
// cuBLAS SGEMM (193 % in turns), 118.4 at 8192, 252 % (209 %): faster than predicted, as
// the GEMM's long K (6 x 4096) runs it near the tensor cores' peak; the pre-pass is 16 %
// of the time at 4096 (ncu). But the error is not SGEMM's: normwise 4.0e-6 at 4096
// against SGEMM's 1.15e-6, 8.5e-6 at 8192 against 1.6e-6 (wide data: 4.8e-6 and 9.6e-6
// against 1.0e-6 and 1.4e-6), within the FP32 budget but 3-6x worse. It grows as K (8.5e-7
// at 1024, 4.0e-6 at 4096), where SGEMM's grows as sqrt(K): a bias, not the split. The
// tensor cores add each k16 step's products to the accumulator aligned to the largest of
// them and truncated, toward zero; with the running sum in the accumulator each of the
// K/16 steps loses up to a unit in the last place of the whole sum, always the same way.
// Stage 22 keeps the sum out of the tensor cores. (The tensor cores' power depends on the
// data: on small integers, whose mid and lo parts are zero, the stage ran 13 % faster.)
//
// Shapes: any M and K; N a multiple of 8 (TMA writes C's rows). Needs sm_90a.
#include <cuda_bf16.h>

#include <algorithm>
#include <cstddef>

#include "common/fp32_split.cuh"
#include "common/gemm_problem.hpp"
#include "common/launch.cuh"
#include "common/workspace.cuh"

namespace sgemm {

void launch_hopper_tuned(const GemmProblem&, const __nv_bfloat16*, const __nv_bfloat16*, float*, cudaStream_t);

namespace {

constexpr int kParts = 6;  // products kept, and segments of A' and B'
// Which part of A and of B each segment of A' and B' holds: the smallest products first.
__constant__ int kAPart[kParts] = {2, 1, 0, 1, 0, 0};
__constant__ int kBPart[kParts] = {0, 1, 2, 0, 1, 0};

__device__ __nv_bfloat16 part(const Bf16Parts& parts, int which) {
    return which == 0 ? parts.hi : which == 1 ? parts.mid : parts.lo;
}

// A (M x K) -> A' (M x 6 padded_k): one thread per element of A padded to padded_k.
__global__ void split_a_kernel(const float* a, __nv_bfloat16* split, int m, int k, int padded_k) {
    const std::size_t count = static_cast<std::size_t>(m) * padded_k;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        const std::size_t row = i / padded_k;
        const int column = static_cast<int>(i % padded_k);
        const Bf16Parts parts = split_into_bf16_parts(column < k ? a[row * k + column] : 0.0f);
        __nv_bfloat16* const out = split + row * kParts * padded_k + column;
#pragma unroll
        for (int segment = 0; segment < kParts; ++segment) out[segment * padded_k] = part(parts, kAPart[segment]);
    }
}

// B (K x N) -> B' (6 padded_k x N): one thread per element of B padded to padded_k rows.
__global__ void split_b_kernel(const float* b, __nv_bfloat16* split, int k, int n, int padded_k) {
    const std::size_t count = static_cast<std::size_t>(padded_k) * n;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        const int row = static_cast<int>(i / n);
        const Bf16Parts parts = split_into_bf16_parts(row < k ? b[i] : 0.0f);
#pragma unroll
        for (int segment = 0; segment < kParts; ++segment)
            split[(static_cast<std::size_t>(segment) * padded_k) * n + i] = part(parts, kBPart[segment]);
    }
}


}  // namespace

void launch_split_bf16(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream) {
    const auto [m, n, k] = problem.shape;
    const int padded_k = ceil_div(k, 8) * 8;
    const std::size_t a_values = static_cast<std::size_t>(m) * kParts * padded_k;
    // A' and B', kept between calls.
    static GrowingWorkspace workspace("stage 21's split operands");
    const std::size_t values = a_values + static_cast<std::size_t>(kParts) * padded_k * n;
    auto* const a_split = static_cast<__nv_bfloat16*>(workspace.at_least(values * sizeof(__nv_bfloat16)));
    __nv_bfloat16* const b_split = a_split + a_values;
    constexpr int kThreads = 256;
    const auto blocks = [](std::size_t count) {  // grid-stride loops: at most 8192 blocks
        return static_cast<int>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 8192));
    };
    split_a_kernel<<<blocks(static_cast<std::size_t>(m) * padded_k), kThreads, 0, stream>>>(a, a_split, m, k, padded_k);
    split_b_kernel<<<blocks(static_cast<std::size_t>(padded_k) * n), kThreads, 0, stream>>>(b, b_split, k, n, padded_k);
    const GemmProblem split_problem{GemmShape{m, n, kParts * padded_k}, problem.alpha, problem.beta};
    launch_hopper_tuned(split_problem, a_split, b_split, c, stream);
}

}  // namespace sgemm
