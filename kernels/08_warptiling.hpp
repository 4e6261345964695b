// Stage 8's launcher, defined in 08_warptiling.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_warptiling(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
