// Stage 16's launcher, defined in 16_two_warpgroups.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_two_warpgroups(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                           cudaStream_t stream);

}  // namespace sgemm
