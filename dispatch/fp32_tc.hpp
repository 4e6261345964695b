// The FP32 track on tensor cores (sgemm fp32-tc): FP32 inputs and C, with SGEMM's accuracy,
// computed by splitting each value into 16-bit parts (stages 22-24) where that pays, on the
// CUDA cores (stage 10) where it does not. Hopper only (sm_90a).
#pragma once

#include "common/gemm_problem.hpp"
#include "dispatch/kernel_choice.hpp"

namespace sgemm {

// The measured crossovers between the kernels, each fitted where its comment in
// fp32_tc.cpp says; `sms`: the GPU's SMs.
bool sums_too_short_to_split(const GemmShape& shape);
bool rows_too_few_to_split(const GemmShape& shape);
bool splits_a_in_registers(const GemmShape& shape);
bool splits_in_registers(const GemmShape& shape, int sms);
bool split_pays(const GemmShape& shape);

KernelChoice choose_fp32_tc_kernel(const GemmShape& shape, int sms);

void launch_fp32_tc_track(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
