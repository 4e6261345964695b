// The FP8 problem (fp8_problem.hpp: A M x K and B N x K, both rows of K e4m3 values, D M x N
// bf16) at any N and K, for launchers that take K a multiple of 16 (TMA's rows of A and B
// start 16-byte aligned): A's and B's rows padded with zeros to K rounded up to 16. D either
// stays the caller's, for a launcher that writes it at any N (not through TMA), or goes through
// a buffer of N rounded up to 8 columns, for one that writes it through TMA (its rows too
// start 16-byte aligned): B's rows are then padded to that N and its 1 x 128 scales laid out
// again where their rows' padding to 4 differs. The scales keep their blocks (K's blocks of
// 128 and N's are the same in the padded problem). The copies are part of the launch, and
// timed with it: one kernel pads every operand that needs it, one more copies D out.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "common/fp8_problem.hpp"
#include "common/gemm_problem.hpp"

namespace sgemm {

inline constexpr GemmShape kFp8TmaMultiples{1, 8, 16};

// What the launcher runs for a problem off kFp8TmaMultiples: its problem (K rounded up to 16,
// and N to 8 where D goes through the padded buffer), operands and D.
struct Fp8PaddedProblem {
    GemmProblem problem;
    Fp8Operands operands;
    __nv_bfloat16* d;
};

// The shape the launcher runs: K rounded up to 16, and N to 8 with pad_n.
GemmShape fp8_padded_shape(const GemmShape& shape, bool pad_n);

// Enqueues the copies into padded operands (of those that need them; with pad_n, of B to N
// rounded up to 8 and of D in where beta is not 0). What they return is valid until the next call.
Fp8PaddedProblem pad_fp8_problem(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                                 __nv_bfloat16* d, bool pad_n, cudaStream_t stream);

// Enqueues D's copy out of the padded buffer, where `padded` has one.
void copy_fp8_d_out(const GemmProblem& problem, const Fp8PaddedProblem& padded, __nv_bfloat16* d,
                    cudaStream_t stream);

}  // namespace sgemm
