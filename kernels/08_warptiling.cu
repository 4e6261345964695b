// Stage 8 — warptiling: block tile -> warp tile -> thread tile.
//
// The idea: the warp, not the block, is the unit that issues a shared-memory load.
// What a load costs depends on how many distinct addresses the warp's 32 threads ask
// for. In stage 7 a warp is two rows of 16 threads spread across the whole 128-wide
// block tile: each float4 load of B asks for 16 distinct float4s, of A for 2. Here
// each warp owns a compact 32x64 tile of C and its threads are arranged 4 (M) x 8
// (N) inside it, so a load of B asks for 8 distinct float4s (one quarter-warp's
// worth, the rest are broadcasts) and a load of A for 4: fewer shared-memory
// wavefronts per FMA, with the conflict-free property of stage 7 kept (8 neighbouring
// threads still read 32 consecutive floats).
//
// Tiles: block 128x128 (8 warps as 4 down x 2 across), warp 32x64, thread 8x8 as
// 2 x 2 quads of 4x4, 16 rows and 32 columns apart inside the warp tile.
//
// What changed since stage 7: only the map from (warp, lane) to outputs.
//
// Prediction: 1.05–1.15x over stage 7: shared-memory traffic per FMA falls by about a
// third; FMAs still wait on loads at every tile, which stage 9 addresses.
//
// Measured by make results on the H100 80GB HBM3: 41.6 TFLOPS at N = 4096 (80.5 % of cuBLAS SGEMM),
// 41.6 at 8192 (80.7 %).
// *Slower* than stage 7, by 4-5 %. The prediction was wrong: Nsight Compute counts the same
// shared-memory load wavefronts for both (402.7M at 4096) — the hardware already merged
// stage 7's repeated addresses — and the FMA pipe is 64 % busy against 66 %. Kept as a
// stepping stone: stages 9 and 10 are written in warp tiles, the parameter that mattered
// most when stage 10 was tuned (64x64 warp tiles of 8x16-output threads won by 5 points;
// results/h100-80gb-hbm3/tuning_stage10.md). 114 registers, 8.1 KB of shared memory.
//
// Shapes: M and N multiples of 128, K a multiple of 8.
#include "08_warptiling.hpp"

#include "common/epilogue.cuh"
#include "common/gemm_problem.hpp"
#include "common/register_tile.cuh"
#include "common/vector_access.cuh"

namespace sgemm {
namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 8;
constexpr int kWarpM = 32;
constexpr int kWarpN = 64;
constexpr int kWarpsN = kBlockN / kWarpN;  // 2 warps across, 4 down
constexpr int kThreads = 32 * (kBlockM / kWarpM) * kWarpsN;
constexpr int kLanesN = 8;                 // lanes of a warp across its tile; 4 down
constexpr int kQuad = 4;
constexpr int kQuadStrideM = kWarpM / 2;   // the thread's two quads down the warp tile
constexpr int kQuadStrideN = kWarpN / 2;   // and across it
constexpr int kAPad = 4;
static_assert((kWarpM / (2 * kQuad)) * (kWarpN / (2 * kQuad)) == 32 && kLanesN == kWarpN / (2 * kQuad),
              "a warp's 32 lanes, each with 2 x 2 quads, cover its tile exactly once");

__global__ void __launch_bounds__(kThreads)
    warptiling_kernel(GemmProblem problem, const float* a, const float* b, float* c) {
    __shared__ alignas(16) float a_tile[kBlockK][kBlockM + kAPad];
    __shared__ alignas(16) float b_tile[kBlockK][kBlockN];

    const auto [m, n, k] = problem.shape;
    a += blockIdx.y * kBlockM * k;
    b += blockIdx.x * kBlockN;
    c += blockIdx.y * kBlockM * n + blockIdx.x * kBlockN;

    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int quad_row = warp / kWarpsN * kWarpM + lane / kLanesN * kQuad;
    const int quad_col = warp % kWarpsN * kWarpN + lane % kLanesN * kQuad;
    const int a_row = threadIdx.x / (kBlockK / 4);
    const int a_col = threadIdx.x % (kBlockK / 4) * 4;
    const int b_row = threadIdx.x / (kBlockN / 4);
    const int b_col = threadIdx.x % (kBlockN / 4) * 4;

    float acc[2 * kQuad][2 * kQuad] = {};
    float a_slice[2 * kQuad];
    float b_slice[2 * kQuad];

    for (int k0 = 0; k0 < k; k0 += kBlockK) {
        store_float4_transposed(&a_tile[a_col][a_row], kBlockM + kAPad, load_float4(a + a_row * k + a_col));
        store_float4(&b_tile[b_row][b_col], load_float4(b + b_row * n + b_col));
        __syncthreads();
        a += kBlockK;
        b += kBlockK * n;

#pragma unroll
        for (int i = 0; i < kBlockK; ++i) {
            load_slice<2>(a_slice, &a_tile[i][quad_row], kQuadStrideM);
            load_slice<2>(b_slice, &b_tile[i][quad_col], kQuadStrideN);
            accumulate_outer_product(acc, a_slice, b_slice);
        }
        __syncthreads();
    }

    store_quads<2, 2>(c, n, acc, quad_row, quad_col, kQuadStrideM, kQuadStrideN, problem.alpha, problem.beta);
}

}  // namespace

void launch_warptiling(const GemmProblem& problem, const float* a, const float* b, float* c,
                       cudaStream_t stream) {
    const dim3 grid(problem.shape.n / kBlockN, problem.shape.m / kBlockM);
    warptiling_kernel<<<grid, kThreads, 0, stream>>>(problem, a, b, c);
}

}  // namespace sgemm
