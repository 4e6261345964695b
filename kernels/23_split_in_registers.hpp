// Stage 23's launcher, defined in 23_split_in_registers.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_split_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

// The same with what the split cannot hold computed in stage 10's tile whose Stage10Tile::id
// (10_tuned.hpp) is fallback_tile, where the first runs its tuned one (kTunedTileId).
void launch_split_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream,
                               int fallback_tile);

}  // namespace sgemm
