// What padding a shape costs (kernels/common/padded_launch.cuh): the bytes the copies move
// (which the bf16 track's cost model weighs, bf16_cost.hpp), and for the fp32-tc track,
// where a shape off a kernel's multiples runs faster on stage 10's kernel, which loads any
// shape itself, than on padded copies for the Hopper kernels.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

// The bytes the padded copies move for `shape` with inputs of `input_bytes` each: every
// operand whose rows are off read once and written once padded (A and B in the input
// type, C in FP32; C copied out only, as where beta = 0).
long long padded_copy_bytes(const GemmShape& shape, const GemmShape& multiples, int input_bytes);

// Where the copies would move a byte for fewer than `flops_per_copied_byte` FLOPs (2MNK),
// the math they buy, on the Hopper kernel, pays less than the time they take; and any small
// problem (at most 2^31 FLOPs, K at most 1024), where the copies' own launches outlast the
// math. The threshold is fitted on the random draw of seed 1 (make draw) and measured on
// seed 2's (docs/notes/24_a_in_registers.md).
bool copies_outweigh_math(const GemmShape& shape, const GemmShape& multiples, int input_bytes,
                          double flops_per_copied_byte);

}  // namespace sgemm
