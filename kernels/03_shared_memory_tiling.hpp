// Stage 3's launcher, defined in 03_shared_memory_tiling.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_shared_memory_tiling(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
