// Stage 22's launcher, defined in 22_split_fp16.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

// N a multiple of 8 (TMA writes C's rows).
void launch_split_fp16(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

// A rule for stage 10's K split (KPartsRule, 10_tuned.hpp) that keeps SGEMM's accuracy:
// stage 10's own, but where it splits K at all, no part sums more than 256 products (the
// FP32 fallback's split, 22_fp32_fallback.cuh).
int k_parts_of_at_most_256_products(int tiles, int k_tiles, int slots);

}  // namespace sgemm
