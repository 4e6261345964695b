// Stage 28's launcher, defined in 28_fp8_block_scaled.cu.
#pragma once

#include "common/fp8_problem.hpp"

namespace sgemm {

// Fp8Scaling::rows_and_blocks (the recipe) and rows_and_rows.
void launch_fp8_block_scaled(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                             __nv_bfloat16* d, cudaStream_t stream);

}  // namespace sgemm
