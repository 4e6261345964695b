// Stage 4's launcher, defined in 04_1d_blocktiling.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_1d_blocktiling(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
