// Stage 9 — double buffering: load the next tile while computing this one.
//
// The idea: up to stage 8 every K step runs load -> barrier -> compute -> barrier.
// While a block loads, its FMAs wait; while it computes, the memory system idles, and
// only a second resident block can fill the gap. Here each block overlaps the two
// itself. Before computing on tile t it issues the global loads of tile t+1 into
// registers; those loads are in flight during the 512 FMAs per thread of tile t, and
// only afterwards are written to the *other* shared-memory buffer. With two buffers
// one barrier per tile suffices: a buffer is overwritten only after every thread has
// passed the barrier that ended its last use.
//
// Register prefetch or cp.async? cp.async copies global to shared without passing
// through registers, but it copies bytes as they are: it cannot transpose A on the
// way, which the float4 reads of A (stage 6) need. Register prefetch keeps the
// transpose, for 8 registers per thread.
//
// What changed since stage 8: two shared buffers per operand, the prefetch into
// registers, one barrier per tile, and __launch_bounds__(256, 2), which caps the
// kernel at 128 registers so that two blocks fit on an SM.
//
// Prediction: 1.3–1.5x over stage 8, to 70–80 % of cuBLAS.
//
// Measured by make results on the H100 80GB HBM3: 46.0 TFLOPS at N = 4096 (89.1 % of cuBLAS SGEMM),
// 46.4 at 8192 (89.9 %).
// 1.11x stage 8, 1.06x stage 7 — a smaller step than predicted, because stage 8 was already
// at 80 % of cuBLAS: two resident blocks per SM had been hiding much of the load latency
// for each other. FMA pipe busy 64 % -> 71 % (Nsight Compute, 4096). 128 registers (the cap
// of __launch_bounds__(256, 2)), 16.3 KB of shared memory.
//
// Shapes: M and N multiples of 128, K a multiple of 8.
#include "09_double_buffering.hpp"

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
constexpr int kWarpsN = kBlockN / kWarpN;
constexpr int kThreads = 32 * (kBlockM / kWarpM) * kWarpsN;
constexpr int kLanesN = 8;
constexpr int kQuad = 4;
constexpr int kQuadStrideM = kWarpM / 2;
constexpr int kQuadStrideN = kWarpN / 2;
constexpr int kAPad = 4;
static_assert((kWarpM / (2 * kQuad)) * (kWarpN / (2 * kQuad)) == 32 && kLanesN == kWarpN / (2 * kQuad),
              "a warp's 32 lanes, each with 2 x 2 quads, cover its tile exactly once");

struct Tiles {
    alignas(16) float a[kBlockK][kBlockM + kAPad];
    alignas(16) float b[kBlockK][kBlockN];
};

__global__ void __launch_bounds__(kThreads, 2)
    double_buffering_kernel(GemmProblem problem, const float* a, const float* b, float* c) {
    __shared__ Tiles tiles[2];

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

    const auto store_tile = [&](Tiles& tile, const float4& a_values, const float4& b_values) {
        store_float4_transposed(&tile.a[a_col][a_row], kBlockM + kAPad, a_values);
        store_float4(&tile.b[b_row][b_col], b_values);
    };

    float acc[2 * kQuad][2 * kQuad] = {};
    float a_slice[2 * kQuad];
    float b_slice[2 * kQuad];

    store_tile(tiles[0], load_float4(a + a_row * k + a_col), load_float4(b + b_row * n + b_col));
    __syncthreads();

    const int tile_count = k / kBlockK;
    for (int t = 0; t < tile_count; ++t) {
        const bool has_next = t + 1 < tile_count;
        float4 a_next, b_next;
        if (has_next) {  // in flight while this tile is computed
            a += kBlockK;
            b += kBlockK * n;
            a_next = load_float4(a + a_row * k + a_col);
            b_next = load_float4(b + b_row * n + b_col);
        }

        const Tiles& tile = tiles[t % 2];
#pragma unroll
        for (int i = 0; i < kBlockK; ++i) {
            load_slice<2>(a_slice, &tile.a[i][quad_row], kQuadStrideM);
            load_slice<2>(b_slice, &tile.b[i][quad_col], kQuadStrideN);
            accumulate_outer_product(acc, a_slice, b_slice);
        }

        if (has_next) store_tile(tiles[(t + 1) % 2], a_next, b_next);
        __syncthreads();
    }

    store_quads<2, 2>(c, n, acc, quad_row, quad_col, kQuadStrideM, kQuadStrideN, problem.alpha, problem.beta);
}

}  // namespace

void launch_double_buffering(const GemmProblem& problem, const float* a, const float* b, float* c,
                             cudaStream_t stream) {
    const dim3 grid(problem.shape.n / kBlockN, problem.shape.m / kBlockM);
    double_buffering_kernel<<<grid, kThreads, 0, stream>>>(problem, a, b, c);
}

}  // namespace sgemm
