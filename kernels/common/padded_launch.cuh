// Any shape on a launcher whose kernels need some sizes to be multiples (stages 15-24:
// TMA reads and writes rows that start 16-byte aligned, so N and K are multiples of 8
// for bf16 rows, N for FP32 C): the operands whose rows are off are copied into buffers
// padded with zeros to the multiples, the launcher runs on the padded problem, and C's
// M x N comes back. Zero columns of A meet zero rows of B, so every sum is the unpadded
// problem's (with products of zeros added in); C's extra columns and rows are dropped.
// The copies are part of the launch, and timed with it, as a library that takes any
// shape must pay them.
//
// On a small problem the copies cost more than the math (each is a launch of its own,
// and on a thin problem they move as many bytes as the GEMM): there a kernel that loads
// any shape itself runs it faster (copies_outweigh_math, below).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "common/gemm_problem.hpp"

namespace sgemm {

// Whether `shape` has each size a multiple of `multiples`' (all three >= 1).
bool takes_as_is(const GemmShape& shape, const GemmShape& multiples);

// The problem the launcher runs for `shape`: each size rounded up to its multiple.
GemmShape padded_shape(const GemmShape& shape, const GemmShape& multiples);

// The bytes the copies of launch_padded move for `shape` with inputs of `input_bytes`
// each: every operand whose rows are off read once and written once padded (A and B in
// the input type, C in FP32; C copied out only, as where beta = 0).
long long padded_copy_bytes(const GemmShape& shape, const GemmShape& multiples, int input_bytes);

// Where a shape off the multiples runs faster unpadded, on stage 10's kernel (FP32) or
// stage 14's (bf16), both of which load any shape, than padded on the Hopper stages: where
// the copies would move a byte for fewer than `flops_per_copied_byte` FLOPs (2MNK), the
// math they buy, on the Hopper kernel, pays less than the time they take; and any small
// problem (at most 2^31 FLOPs, K at most 1024), where the copies' own launches outlast
// the math. Each caller's threshold is fitted on the random draw of seed 1 (make draw) and
// measured on seed 2's in docs/notes/20_hopper_tuned.md.
bool copies_outweigh_math(const GemmShape& shape, const GemmShape& multiples, int input_bytes,
                          double flops_per_copied_byte);

// Enqueues `launch` on `problem` through padded copies (only of the operands that need them).
void launch_padded(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream,
                   const GemmShape& multiples, Fp32Launcher launch);
void launch_padded(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                   cudaStream_t stream, const GemmShape& multiples, Bf16Launcher launch);

}  // namespace sgemm
