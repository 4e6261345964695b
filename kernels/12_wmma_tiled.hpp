// Stage 12's launcher, defined in 12_wmma_tiled.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_wmma_tiled(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream);

}  // namespace sgemm
