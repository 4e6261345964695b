// Stage 2's launcher, defined in 02_global_coalescing.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_global_coalescing(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
