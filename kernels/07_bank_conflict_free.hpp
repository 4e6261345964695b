// Stage 7's launcher, defined in 07_bank_conflict_free.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_bank_conflict_free(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
