// Stage 11's launcher, defined in 11_wmma_naive.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_wmma_naive(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream);

}  // namespace sgemm
