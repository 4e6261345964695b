// Stage 20's launchers, defined in 20_hopper_tuned.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

// K and N multiples of 8 (TMA's rows start 16-byte aligned).
void launch_hopper_tuned(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                         cudaStream_t stream);

// The same writing C in bf16 (sgemm --c-type bf16).
void launch_hopper_tuned_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                                __nv_bfloat16* c, cudaStream_t stream);

}  // namespace sgemm
