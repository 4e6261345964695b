// Stage 10's launchers, defined in 10_tuned.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

// How many parts K is split into, for `tiles` tiles of C of k_tiles K tiles each on a GPU
// that runs `slots` blocks at once: stage 10's k_parts (10_tuned.cuh), or a caller's rule.
using KPartsRule = int (*)(int tiles, int k_tiles, int slots);

void launch_tuned(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

// The same with K split into the parts `parts_rule` chooses.
void launch_tuned_with_k_parts(const GemmProblem& problem, const float* a, const float* b, float* c,
                               cudaStream_t stream, KPartsRule parts_rule);

}  // namespace sgemm
