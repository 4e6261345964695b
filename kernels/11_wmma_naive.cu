// Stage 11 — tensor cores, naively: one warp computes one 16x16 tile of C with wmma.
//
// A new track. From here on A and B are bf16 (the driver rounds them once, untimed),
// products are accumulated in FP32 and C stays FP32, with alpha and beta as before; the
// reference is cuBLAS with the same types (cublasGemmEx, bf16 in, FP32 compute and out).
//
// The idea: a tensor core multiplies small matrices in one instruction. CUDA's wmma API
// exposes them per warp: the 32 threads together load a 16x16 "fragment" of A and one
// of B, and one mma_sync call multiplies them into a 16x16 FP32 accumulator fragment —
// 4096 multiply-adds in one instruction, where a thread's FFMA does one. This stage is
// stage 1 of the tensor-core track: each warp walks along K, loading its fragments
// straight from global memory (no shared memory, no reuse between warps), and writes
// its tile. Tiles at the edges, or rows not 16-byte aligned, go through a small
// per-warp staging buffer with bounds checks instead.
//
// Prediction: far below what the tensor cores can do — every fragment comes from
// global memory (L2 at best), so this is the memory-bound naive kernel again, at a
// larger scale: maybe 5-10 % of cuBLAS.
//
// Measured by make results on the H100 80GB HBM3: 28.1 TFLOPS at N = 4096 (3.7 % of cuBLAS bf16),
// 28.4 at 8192 (3.6 %).
// 4.3-4.4 % of the measured mma.sync ceiling (646 TFLOPS), under the prediction — and below
// the FP32 stages 6-10: tensor cores fed straight from memory are worse than CUDA cores fed
// from shared memory. 40 registers, 8 KB of shared memory (staging for edge tiles).
//
// Shapes: any M, N, K >= 1. Needs sm_80 (bf16 wmma).
#include "11_wmma_naive.hpp"

#include <mma.h>

#include "common/epilogue.cuh"
#include "common/gemm_problem.hpp"
#include "common/launch.cuh"

namespace sgemm {
namespace {

using namespace nvcuda;

constexpr int kTile = 16;
constexpr int kWarpsPerBlock = 4;  // side by side along N

struct WarpStaging {
    __nv_bfloat16 a[kTile * kTile];
    __nv_bfloat16 b[kTile * kTile];
    float c[kTile * kTile];
};

__global__ void wmma_naive_kernel(GemmProblem problem, const __nv_bfloat16* a,
                                  const __nv_bfloat16* b, float* c) {
#if __CUDA_ARCH__ >= 800  // bf16 wmma; the driver refuses this stage on older GPUs
    __shared__ alignas(32) WarpStaging staging_of_warp[kWarpsPerBlock];
    const auto [m, n, k] = problem.shape;
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    WarpStaging& staging = staging_of_warp[warp];
    const int row0 = blockIdx.y * kTile;
    const int col0 = (blockIdx.x * kWarpsPerBlock + warp) * kTile;
    if (col0 >= n) return;  // a whole warp leaves; no block-wide barrier follows

    // wmma loads need a row stride that is a multiple of 8 values and whole tiles.
    const bool whole_rows = row0 + kTile <= m && col0 + kTile <= n && k % 8 == 0 && n % 8 == 0;

    wmma::fragment<wmma::matrix_a, kTile, kTile, kTile, __nv_bfloat16, wmma::row_major> a_fragment;
    wmma::fragment<wmma::matrix_b, kTile, kTile, kTile, __nv_bfloat16, wmma::row_major> b_fragment;
    wmma::fragment<wmma::accumulator, kTile, kTile, kTile, float> acc;
    wmma::fill_fragment(acc, 0.0f);

    for (int k0 = 0; k0 < k; k0 += kTile) {
        if (whole_rows && k0 + kTile <= k) {
            wmma::load_matrix_sync(a_fragment, a + row0 * k + k0, k);
            wmma::load_matrix_sync(b_fragment, b + k0 * n + col0, n);
        } else {  // the slower tail path: bounds-checked copies, zeros outside
            for (int e = lane; e < kTile * kTile; e += 32) {
                const int r = e / kTile, col = e % kTile;
                staging.a[e] = (row0 + r < m && k0 + col < k) ? a[(row0 + r) * k + k0 + col] : __float2bfloat16(0.0f);
                staging.b[e] = (k0 + r < k && col0 + col < n) ? b[(k0 + r) * n + col0 + col] : __float2bfloat16(0.0f);
            }
            __syncwarp();
            wmma::load_matrix_sync(a_fragment, staging.a, kTile);
            wmma::load_matrix_sync(b_fragment, staging.b, kTile);
            __syncwarp();  // the next tail step overwrites the staging buffers
        }
        wmma::mma_sync(acc, a_fragment, b_fragment, acc);
    }

    // The accumulator's layout inside the warp is unspecified: store it to shared
    // memory, then apply alpha and beta element by element, inside the matrix only.
    wmma::store_matrix_sync(staging.c, acc, kTile, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < kTile * kTile; e += 32) {
        const int row = row0 + e / kTile, col = col0 + e % kTile;
        if (row < m && col < n) {
            float& out = c[row * n + col];
            out = scale_and_accumulate(staging.c[e], problem.alpha, problem.beta, out);
        }
    }
#endif
}

}  // namespace

void launch_wmma_naive(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                       float* c, cudaStream_t stream) {
    const dim3 grid(ceil_div(problem.shape.n, kTile * kWarpsPerBlock), ceil_div(problem.shape.m, kTile));
    wmma_naive_kernel<<<grid, 32 * kWarpsPerBlock, 0, stream>>>(problem, a, b, c);
}

}  // namespace sgemm
