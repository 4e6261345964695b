// Stage 12 — wmma with shared-memory block tiling and warp tiling.
//
// The idea: what stages 3-8 did for CUDA cores, for tensor cores. A block of 8 warps
// computes a 128x128 tile of C. It walks along K in steps of 32: the 256 threads copy
// a 128x32 tile of A and a 32x128 tile of B into shared memory with 16-byte loads, and
// each warp then computes its 64x32 part of the block tile as a 4x2 grid of 16x16
// accumulator fragments, loading each A fragment once for 2 multiplications and each
// B fragment once for 4. Global traffic per multiply-add falls by the tile sizes, as
// in stage 3; fragment reuse does for registers what stage 5 did.
//
// Shared-memory rows are padded by 8 values (16 bytes): wmma wants row strides that
// are multiples of 8 values, and the padding also spreads rows over banks.
//
// Prediction: an order of magnitude over stage 11; still well under cuBLAS, since
// loads and math do not overlap and wmma hides how fragments map onto banks.
//
// Measured by make results on the H100 80GB HBM3: 104.7 TFLOPS at N = 4096 (14.0 % of cuBLAS bf16),
// 107.1 at 8192 (13.5 %).
// 16.3-16.7 % of the mma.sync ceiling: 3.8x stage 11, not 10x. Nsight Compute at 4096:
// tensor pipe busy 17 %; shared-store bank conflicts 8.8M (the padded rows still collide on
// the 16-byte stores). 128 registers, 18.5 KB of shared memory.
//
// Shapes: M and N multiples of 128, K a multiple of 32. Needs sm_80.
#include "12_wmma_tiled.hpp"

#include <mma.h>

#include "common/gemm_problem.hpp"

namespace sgemm {
namespace {

using namespace nvcuda;

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 32;
constexpr int kWarpM = 64;
constexpr int kWarpN = 32;
constexpr int kWarpsN = kBlockN / kWarpN;
constexpr int kThreads = 32 * (kBlockM / kWarpM) * kWarpsN;
constexpr int kFragment = 16;
constexpr int kFragmentsM = kWarpM / kFragment;
constexpr int kFragmentsN = kWarpN / kFragment;
constexpr int kPad = 8;
constexpr int kChunk = 8;  // bf16 values per 16-byte load

__global__ void __launch_bounds__(kThreads)
    wmma_tiled_kernel(GemmProblem problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c) {
#if __CUDA_ARCH__ >= 800  // bf16 wmma; the driver refuses this stage on older GPUs
    __shared__ alignas(32) __nv_bfloat16 a_tile[kBlockM][kBlockK + kPad];
    __shared__ alignas(32) __nv_bfloat16 b_tile[kBlockK][kBlockN + kPad];

    const auto [m, n, k] = problem.shape;
    a += blockIdx.y * kBlockM * k;
    b += blockIdx.x * kBlockN;
    c += blockIdx.y * kBlockM * n + blockIdx.x * kBlockN;
    const int warp = threadIdx.x / 32;
    const int warp_row = warp / kWarpsN * kWarpM;
    const int warp_col = warp % kWarpsN * kWarpN;

    wmma::fragment<wmma::matrix_a, kFragment, kFragment, kFragment, __nv_bfloat16, wmma::row_major> a_fragment[kFragmentsM];
    wmma::fragment<wmma::matrix_b, kFragment, kFragment, kFragment, __nv_bfloat16, wmma::row_major> b_fragment[kFragmentsN];
    wmma::fragment<wmma::accumulator, kFragment, kFragment, kFragment, float> acc[kFragmentsM][kFragmentsN];
    for (auto& row : acc)
        for (auto& fragment : row) wmma::fill_fragment(fragment, 0.0f);

    for (int k0 = 0; k0 < k; k0 += kBlockK) {
        for (int chunk = threadIdx.x; chunk < kBlockM * kBlockK / kChunk; chunk += kThreads) {
            const int row = chunk / (kBlockK / kChunk), col = chunk % (kBlockK / kChunk) * kChunk;
            *reinterpret_cast<uint4*>(&a_tile[row][col]) = *reinterpret_cast<const uint4*>(a + row * k + col);
        }
        for (int chunk = threadIdx.x; chunk < kBlockK * kBlockN / kChunk; chunk += kThreads) {
            const int row = chunk / (kBlockN / kChunk), col = chunk % (kBlockN / kChunk) * kChunk;
            *reinterpret_cast<uint4*>(&b_tile[row][col]) = *reinterpret_cast<const uint4*>(b + row * n + col);
        }
        __syncthreads();
        a += kBlockK;
        b += kBlockK * n;

        for (int kk = 0; kk < kBlockK; kk += kFragment) {
            for (int i = 0; i < kFragmentsM; ++i)
                wmma::load_matrix_sync(a_fragment[i], &a_tile[warp_row + i * kFragment][kk], kBlockK + kPad);
            for (int j = 0; j < kFragmentsN; ++j)
                wmma::load_matrix_sync(b_fragment[j], &b_tile[kk][warp_col + j * kFragment], kBlockN + kPad);
            for (int i = 0; i < kFragmentsM; ++i)
                for (int j = 0; j < kFragmentsN; ++j) wmma::mma_sync(acc[i][j], a_fragment[i], b_fragment[j], acc[i][j]);
        }
        __syncthreads();
    }

    // Accumulator and C fragments share one (unspecified) layout, so alpha and beta can
    // be applied element by element between a load and a store of C.
    wmma::fragment<wmma::accumulator, kFragment, kFragment, kFragment, float> c_fragment;
    for (int i = 0; i < kFragmentsM; ++i)
        for (int j = 0; j < kFragmentsN; ++j) {
            float* tile = c + (warp_row + i * kFragment) * n + warp_col + j * kFragment;
            if (problem.beta != 0.0f) wmma::load_matrix_sync(c_fragment, tile, n, wmma::mem_row_major);
            for (int e = 0; e < acc[i][j].num_elements; ++e)
                acc[i][j].x[e] = problem.beta != 0.0f ? problem.alpha * acc[i][j].x[e] + problem.beta * c_fragment.x[e]
                                                      : problem.alpha * acc[i][j].x[e];
            wmma::store_matrix_sync(tile, acc[i][j], n, wmma::mem_row_major);
        }
#endif
}

}  // namespace

void launch_wmma_tiled(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                       float* c, cudaStream_t stream) {
    const dim3 grid(problem.shape.n / kBlockN, problem.shape.m / kBlockM);
    wmma_tiled_kernel<<<grid, kThreads, 0, stream>>>(problem, a, b, c);
}

}  // namespace sgemm
