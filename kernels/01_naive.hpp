// Stage 1's launcher, defined in 01_naive.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_naive(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
