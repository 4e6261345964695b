// Any shape on a stage whose kernels need some sizes to be multiples (stages 15-24: TMA
// reads and writes rows that start 16-byte aligned, so N and K are multiples of 8 for bf16
// rows, N for FP32 C): the operands whose rows are off are copied into buffers padded with
// zeros to the stage's multiples, the stage runs on the padded problem, and C's M x N comes
// back. Zero columns of A meet zero rows of B, so every sum is the unpadded problem's
// (with products of zeros added in); C's extra columns and rows are dropped. The copies are
// part of the launch, and timed with it, as a library that takes any shape must pay them.
#pragma once

#include <cuda_runtime.h>

#include "driver/stage.hpp"

namespace sgemm {

// The problem a stage's kernels run for `shape` under `rule`: each size rounded up to its multiple.
GemmShape padded_shape(const GemmShape& shape, const ShapeRule& rule);

// Enqueues `stage` on `problem` through padded copies (only of the operands that need them).
void launch_padded(const Stage& stage, const GemmProblem& problem, const StageOperands& operands, float* c,
                   cudaStream_t stream);

}  // namespace sgemm
