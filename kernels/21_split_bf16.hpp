// Stage 21's launcher, defined in 21_split_bf16.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_split_bf16(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
