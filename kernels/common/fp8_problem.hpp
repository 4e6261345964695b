// The FP8 track's problem (stages 26 on), beside gemm_problem.hpp's:
//
//   D = alpha * (A * B^T) + beta * C      A is M x K, B is N x K, both e4m3 and K-major
//                                         (rows of K values); D and C are M x N bf16, row-major
//
// as the DeepSeek-V3 recipe runs it (its report, 3.3) and cuBLASLt takes 8-bit operands: B is
// the weight as a layer stores it, one row per output column. Each operand comes with FP32
// scales: a value's real value is its e4m3 value times the scale of its block
// (src/verification/fp8_operands.hpp quantizes them). The blocks, by Fp8Scaling, and where
// the scales lie (cuBLASLt's layouts, so that the stages and cuBLASLt read the same arrays):
//   tensor:                    one scale for A, one for B
//   rows_and_blocks (the recipe): A one scale a row per 128 of K, at [k / 128][row] with
//                              rows_padded = M rounded up to 4; B one a 128 x 128 block, at
//                              [row / 128][k / 128] with k_blocks_padded = ceil(K / 128)
//                              rounded up to 4
//   rows_and_rows:             A and B one scale a row per 128 of K, as A's above (B's rows
//                              padded to a multiple of 4 of N)
// alpha = 0 and beta = 0 follow BLAS (gemm_problem.hpp): C is not read where beta = 0.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/gemm_problem.hpp"

namespace sgemm {

enum class Fp8Scaling {
    tensor,           // one scale each
    rows_and_blocks,  // A 1 x 128, B 128 x 128: the recipe
    rows_and_rows,    // A and B 1 x 128
};

struct Fp8Operands {
    const std::uint8_t* a = nullptr;  // M x K e4m3
    const std::uint8_t* b = nullptr;  // N x K e4m3
    const float* a_scales = nullptr;
    const float* b_scales = nullptr;
};

// Every FP8 stage exposes one of these; it only enqueues work on `stream`. GemmProblem's
// shape is (M, N, K) as above.
using Fp8Launcher = void (*)(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                             __nv_bfloat16* d, cudaStream_t stream);

constexpr int kFp8ScaleBlock = 128;

}  // namespace sgemm
