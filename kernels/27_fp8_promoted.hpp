// Stage 27's launcher, defined in 27_fp8_promoted.cu.
#pragma once

#include "common/fp8_problem.hpp"

namespace sgemm {

// Fp8Scaling::tensor only.
void launch_fp8_promoted(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                         __nv_bfloat16* d, cudaStream_t stream);

}  // namespace sgemm
