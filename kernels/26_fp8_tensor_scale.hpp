// Stage 26's launcher, defined in 26_fp8_tensor_scale.cu.
#pragma once

#include "common/fp8_problem.hpp"

namespace sgemm {

// Fp8Scaling::tensor only.
void launch_fp8_tensor_scale(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                             __nv_bfloat16* d, cudaStream_t stream);

}  // namespace sgemm
