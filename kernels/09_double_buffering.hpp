// Stage 9's launcher, defined in 09_double_buffering.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_double_buffering(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
