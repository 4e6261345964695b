// Stage 22's launcher, defined in 22_split_fp16.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

// N a multiple of 8 (TMA writes C's rows).
void launch_split_fp16(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
