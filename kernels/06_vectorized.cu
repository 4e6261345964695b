// Stage 6 — 128-bit loads and stores, with A transposed in shared memory.
//
// The idea: stage 5 moved every float with its own 32-bit instruction. A float4 moves
// four at once: a quarter of the load instructions, and each one fetches 16 bytes.
// Global memory: each thread now loads its share of a tile as one float4 of A and one
// of B. Shared memory: the inner loop reads a thread's 8 values of B as two float4s
// (they are consecutive in a row of the B tile). Its 8 values of A are not: they sit
// in 8 rows of one column of the A tile. So A is stored *transposed*, a_tile[k][m],
// as it is written to shared memory; then those 8 values are consecutive too and are
// read as two float4s. The epilogue also reads and writes C four floats at a time.
//
// What changed since stage 5: same tiles (128x128x8, 256 threads, 8x8 outputs per
// thread), same loop; loads and stores are float4; a_tile is [k][m] instead of [m][k].
//
// Prediction: 1.2–1.4x over stage 5 — the inner loop issues 4 shared loads per 64
// FMAs instead of 16.
//
// Measured by make results on the H100 80GB HBM3: 38.0 TFLOPS at N = 4096 (73.6 % of cuBLAS SGEMM),
// 38.1 at 8192 (73.8 %).
// 1.50x stage 5, above the prediction. Nsight Compute at 4096 (ncu --clock-control none, on
// the first build of this loop): FMA pipe busy 40 % -> 58 %; shared-load bank conflicts
// 537M -> 268M (fewer, wider loads), but shared-store conflicts 4.8M -> 20.8M: the
// transposed stores of A (stage 7). 118 registers, 8 KB of shared memory.
//
// Shapes: M and N multiples of 128, K a multiple of 8.
#include "06_vectorized.hpp"

#include "common/epilogue.cuh"
#include "common/gemm_problem.hpp"
#include "common/register_tile.cuh"
#include "common/vector_access.cuh"

namespace sgemm {
namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 8;
constexpr int kThreadM = 8;
constexpr int kThreadN = 8;
constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);
static_assert(kBlockM * kBlockK == 4 * kThreads && kBlockK * kBlockN == 4 * kThreads,
              "each thread loads one float4 of each tile");

__global__ void __launch_bounds__(kThreads)
    vectorized_kernel(GemmProblem problem, const float* a, const float* b, float* c) {
    __shared__ alignas(16) float a_tile[kBlockK][kBlockM];  // transposed: [k][m]
    __shared__ alignas(16) float b_tile[kBlockK][kBlockN];

    const auto [m, n, k] = problem.shape;
    a += blockIdx.y * kBlockM * k;
    b += blockIdx.x * kBlockN;
    c += blockIdx.y * kBlockM * n + blockIdx.x * kBlockN;

    const int out_row = threadIdx.x / (kBlockN / kThreadN) * kThreadM;
    const int out_col = threadIdx.x % (kBlockN / kThreadN) * kThreadN;
    // The float4 of each tile this thread loads.
    const int a_row = threadIdx.x / (kBlockK / 4);
    const int a_col = threadIdx.x % (kBlockK / 4) * 4;
    const int b_row = threadIdx.x / (kBlockN / 4);
    const int b_col = threadIdx.x % (kBlockN / 4) * 4;

    float acc[kThreadM][kThreadN] = {};
    float a_slice[kThreadM];
    float b_slice[kThreadN];

    for (int k0 = 0; k0 < k; k0 += kBlockK) {
        store_float4_transposed(&a_tile[a_col][a_row], kBlockM, load_float4(a + a_row * k + a_col));
        store_float4(&b_tile[b_row][b_col], load_float4(b + b_row * n + b_col));
        __syncthreads();
        a += kBlockK;
        b += kBlockK * n;

#pragma unroll
        for (int i = 0; i < kBlockK; ++i) {
            load_slice<kThreadM / 4>(a_slice, &a_tile[i][out_row], 4);  // 8 consecutive floats
            load_slice<kThreadN / 4>(b_slice, &b_tile[i][out_col], 4);
            accumulate_outer_product(acc, a_slice, b_slice);
        }
        __syncthreads();
    }

    store_quads<kThreadM / 4, kThreadN / 4>(c, n, acc, out_row, out_col, 4, 4, problem.alpha, problem.beta);
}

}  // namespace

void launch_vectorized(const GemmProblem& problem, const float* a, const float* b, float* c,
                       cudaStream_t stream) {
    const dim3 grid(problem.shape.n / kBlockN, problem.shape.m / kBlockM);
    vectorized_kernel<<<grid, kThreads, 0, stream>>>(problem, a, b, c);
}

}  // namespace sgemm
