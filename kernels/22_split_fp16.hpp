// Stage 22's launcher, defined in 22_split_fp16.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

// N a multiple of 8 (TMA writes C's rows).
void launch_split_fp16(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

// The same with what the split cannot hold computed in stage 10's tile whose Stage10Tile::id
// (10_tuned.hpp) is fallback_tile, where the first runs its tuned one (kTunedTileId).
void launch_split_fp16(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream,
                       int fallback_tile);

}  // namespace sgemm
