// Which kernel takes a shape on the FP32 track's last stages (read 24_a_in_registers.cu
// first): stage 22's split (22_split_fp16.cu), stage 23's kernel with B split in
// registers, or stage 24's with A. The chapters' launchers each take only their own
// shapes; the choice is made here, in the entry points that the registry lists for stages
// 23 and 24 (split_dispatch.cu):
//   stage 23: sums_too_short_to_split or rows_too_few_to_split ? stage 10's kernel
//           : splits_in_registers ? stage 23's kernels : stage 22's launcher
//   stage 24: sums_too_short_to_split or rows_too_few_to_split ? stage 10's kernel
//           : splits_a_in_registers ? stage 24's kernels : stage 23's entry point
// Both take any shape. With N off a multiple of 8 (the kernels' TMA rows), a problem with
// too few FLOPs for the bytes the copies would move runs on stage 10's kernel as it is
// (copies_outweigh_math, common/padded_launch.cuh), the rest on zero-padded copies.
#pragma once

#include <cuda_runtime.h>

#include "common/gemm_problem.hpp"

namespace sgemm {

// Where stage 23's kernel runs rather than stage 22's: A of at most 256 rows, or a C that
// leaves some of stage 22's clusters of two (on `sms` SMs) without a stack of 256 x 128 (its
// tiles) to take. Measured in the same process on the H100 (docs/notes): the kernel was
// ahead on every such shape tried (1024 x 1024 x 1024: 1.34x SGEMM against 1.00x), stage 22
// on every shape with a stack for each cluster (2048 x 2048 x 2048: 2.09x against 1.67x).
bool splits_in_registers(const GemmShape& shape, int sms);

// Where stage 24's kernel runs rather than stage 23's entry point: a C at most 256 columns
// wide and at least 16 times taller than wide, so that A is much the larger operand (B is
// small beside it and the pre-pass's loads down its columns cost little), with K a
// multiple of 4 (TMA reads A's rows, which must start 16-byte aligned). Measured in the
// same process on the H100 (docs/notes): ahead of stage 23's path on every shape tried
// with 16 rows or more a column (16384 x 256 x 4096: 1.93x SGEMM against 1.33x), behind it
// at 4 (512 x 128 x 4096) and 1 (256 x 256 x 65536: 0.49x against 1.04x).
bool splits_a_in_registers(const GemmShape& shape);

// Where stage 10's kernel runs a problem faster than the split kernels: a small one (at
// most 2^31 FLOPs) whose outputs each sum at most 256 products, where the split's
// pre-passes and three products a K step cost more than the FFMAs they save. Measured in
// the same process on the H100, random draws of seeds 1-3 (docs/notes/24_a_in_registers.md):
// 4437 x 24 x 73 0.26x SGEMM on stage 24's kernel, 0.46x on stage 10's; 552 x 5160 x 45
// 0.36x against 0.91x; even at K = 281; the split kernels ahead from K = 300. A large C
// with short sums stays on the tensor cores, which take its FLOPs 3x faster.
bool sums_too_short_to_split(const GemmShape& shape);

// Where stage 10's kernel runs a problem faster than the split kernels, on its blocks of 16
// rows (10_tuned.cu): at most 16 rows of A and a C at least 3072 columns wide. Such a
// problem is bound by reading B, which stage 10 streams once in FP32 as the split kernel
// does, without the split's three products a K step. Read off the random draw of seed 5 on
// the H100 (15 of 16 such problems faster on stage 10's kernel, 1.07-1.36x) and checked on
// seed 4's (all 11 faster, 1.06-1.28x: docs/notes/24_a_in_registers.md); narrower C, with
// fewer blocks than SMs, went either way (1 x 1920 x 1664: 0.79x, 1 x 2176 x 6912: 1.43x).
bool rows_too_few_to_split(const GemmShape& shape);

// The registry's entry points for stages 23 and 24.
void dispatch_split_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c,
                                 cudaStream_t stream);
void dispatch_a_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c,
                             cudaStream_t stream);

}  // namespace sgemm
