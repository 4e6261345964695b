// The FP8 track (sgemm fp8): D = alpha A B^T + beta C on e4m3 operands with their scales
// (kernels/common/fp8_problem.hpp), the partial sums promoted into FP32: stage 29's kernel in
// the tile its cost model chooses (the choice's variant names it), any N and K (off N % 8 or
// K % 16 on zero-padded copies, as the bf16 track pads for stage 20). Hopper only (sm_90a).
#pragma once

#include "common/fp8_problem.hpp"
#include "dispatch/kernel_choice.hpp"

namespace sgemm {

KernelChoice choose_fp8_kernel(const GemmShape& shape, Fp8Scaling scaling);

void launch_fp8_track(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands, __nv_bfloat16* d,
                      cudaStream_t stream);

}  // namespace sgemm
