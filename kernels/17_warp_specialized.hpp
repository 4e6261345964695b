// Stage 17's launcher, defined in 17_warp_specialized.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_warp_specialized(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                             cudaStream_t stream);

}  // namespace sgemm
