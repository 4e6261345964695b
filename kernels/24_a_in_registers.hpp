// Stage 24's launcher, defined in 24_a_in_registers.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_a_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
