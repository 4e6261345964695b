// Any shape on a launcher whose kernels need some sizes to be multiples (stages 15-24:
// TMA reads and writes rows that start 16-byte aligned, so N and K are multiples of 8
// for bf16 rows, N for FP32 C): the operands whose rows are off are copied into buffers
// padded with zeros to the multiples, the launcher runs on the padded problem, and C's
// M x N comes back. Zero columns of A meet zero rows of B, so every sum is the unpadded
// problem's (with products of zeros added in); C's extra columns and rows are dropped.
// The copies are part of the launch, and timed with it, as a library that takes any
// shape must pay them. Whether they pay is the dispatch's to weigh (the bytes they move:
// dispatch/padding_cost.hpp; the bf16 track's cost model counts them, dispatch/bf16_cost.hpp).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "common/gemm_problem.hpp"

namespace sgemm {

// Whether `shape` has each size a multiple of `multiples`' (all three >= 1).
bool takes_as_is(const GemmShape& shape, const GemmShape& multiples);

// The problem the launcher runs for `shape`: each size rounded up to its multiple.
GemmShape padded_shape(const GemmShape& shape, const GemmShape& multiples);

// Enqueues `launch` on `problem` through padded copies (only of the operands that need them).
void launch_padded(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream,
                   const GemmShape& multiples, Fp32Launcher launch);
void launch_padded(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                   cudaStream_t stream, const GemmShape& multiples, Bf16Launcher launch);

}  // namespace sgemm
