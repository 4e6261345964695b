// Stage 19's launchers, defined in 19_persistent.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_persistent(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream);

// The same writing C in bf16 (sgemm --c-type bf16).
void launch_persistent_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                              __nv_bfloat16* c, cudaStream_t stream);

}  // namespace sgemm
