// The bf16 track (sgemm bf16): A and B in bf16, FP32 accumulation, C in FP32 or in bf16
// (--c-type bf16), as cuBLAS's bf16 GEMM.
#pragma once

#include "common/gemm_problem.hpp"
#include "dispatch/kernel_choice.hpp"

namespace sgemm {

// `hopper`: whether the Hopper stages run here (hopper_kernels_run_here()).
KernelChoice choose_bf16_kernel(const GemmShape& shape, bool hopper);

void launch_bf16_track(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream);

// C in bf16: stage 20's kernel, where K and N are multiples of 8 (the driver refuses the rest).
void launch_bf16_track_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                              __nv_bfloat16* c, cudaStream_t stream);

}  // namespace sgemm
