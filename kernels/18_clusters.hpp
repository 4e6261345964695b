// Stage 18's launcher, defined in 18_clusters.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_clusters(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                     cudaStream_t stream);

}  // namespace sgemm
