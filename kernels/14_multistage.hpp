// Stage 14's launcher, defined in 14_multistage.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_multistage(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream);

// How the launcher runs a shape on a GPU of `sms` SMs (for the bf16 track's cost model):
// block_m x block_n tiles, the first full_tiles whole, the rest each split along K into
// `parts` (1: none split).
struct MultistagePlan {
    int block_m;
    int block_n;
    int full_tiles;
    int parts;
};
MultistagePlan multistage_plan(const GemmShape& shape, int sms);

}  // namespace sgemm
