// Stage 6's launcher, defined in 06_vectorized.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_vectorized(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
