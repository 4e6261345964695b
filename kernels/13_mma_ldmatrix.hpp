// Stage 13's launcher, defined in 13_mma_ldmatrix.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_mma_ldmatrix(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                         cudaStream_t stream);

}  // namespace sgemm
