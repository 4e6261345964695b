// Stage 1 — naive: one thread per element of C.
//
// The idea: the definition of matrix multiplication, written as a kernel. Thread
// (x, y) computes C[x][y] as a dot product of row x of A and column y of B, reading
// both straight from global memory.
//
// Why it is slow: threadIdx.x selects the *row*, so the 32 threads of a warp read 32
// different rows of A (32 separate memory transactions where one would do) and write
// C with a stride of N floats. Every operand comes from global memory (through L1/L2):
// two loads per fused multiply-add, no reuse the programmer controls. The arithmetic
// units spend nearly all their time waiting.
//
// Measured by make results on the H100 80GB HBM3: 0.5 TFLOPS at N = 4096 (1.0 % of cuBLAS SGEMM),
// 0.5 at 8192 (1.0 %).
// 32 registers, no shared memory.
//
// Shapes: any M, N, K >= 1.
#include "01_naive.hpp"

#include "common/epilogue.cuh"
#include "common/gemm_problem.hpp"
#include "common/launch.cuh"

namespace sgemm {
namespace {

constexpr int kBlockEdge = 32;

__global__ void naive_kernel(GemmProblem problem, const float* a, const float* b, float* c) {
    const auto [m, n, k] = problem.shape;
    const int row = blockIdx.x * blockDim.x + threadIdx.x;  // consecutive threads: consecutive rows
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= m || col >= n) return;

    float acc = 0.0f;
    for (int i = 0; i < k; ++i) acc += a[row * k + i] * b[i * n + col];
    c[row * n + col] = scale_and_accumulate(acc, problem.alpha, problem.beta, c[row * n + col]);
}

}  // namespace

void launch_naive(const GemmProblem& problem, const float* a, const float* b, float* c,
                  cudaStream_t stream) {
    const dim3 block(kBlockEdge, kBlockEdge);
    const dim3 grid(ceil_div(problem.shape.m, kBlockEdge), ceil_div(problem.shape.n, kBlockEdge));
    naive_kernel<<<grid, block, 0, stream>>>(problem, a, b, c);
}

}  // namespace sgemm
