// Stage 15's launcher, defined in 15_tma_wgmma.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_tma_wgmma(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                      cudaStream_t stream);

}  // namespace sgemm
