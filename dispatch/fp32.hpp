// The FP32 track on CUDA cores (sgemm fp32): FP32 inputs, arithmetic and C, as SGEMM.
#pragma once

#include "common/gemm_problem.hpp"
#include "dispatch/kernel_choice.hpp"

namespace sgemm {

KernelChoice choose_fp32_kernel(const GemmShape& shape);

void launch_fp32_track(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
