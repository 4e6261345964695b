// The FP8 problem (fp8_problem.hpp: A M x K and B N x K, both rows of K e4m3 values, D M x N
// bf16) at any N and K, on a launcher that takes N a multiple of 8 and K of 16 (TMA's 16-byte
// rows), as padded_launch.cuh does for the other precisions: A's and B's rows padded with zeros
// to K rounded up to 16, B's rows to N rounded up to 8, D through an M x N-rounded-up buffer.
// The scales keep their blocks (K's blocks of 128 and N's are the same in the padded problem);
// B's 1 x 128 scales are laid out again where its rows' padding to 4 differs from 8. The copies
// are part of the launch, and timed with it.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "common/fp8_problem.hpp"
#include "common/gemm_problem.hpp"

namespace sgemm {

inline constexpr GemmShape kFp8TmaMultiples{1, 8, 16};

// Enqueues `launch` on `problem` through padded copies (only of what needs them).
void launch_fp8_padded(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                       __nv_bfloat16* d, cudaStream_t stream, Fp8Launcher launch);

}  // namespace sgemm
