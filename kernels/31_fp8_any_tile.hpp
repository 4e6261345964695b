// Stage 31's kernel in every tile it is compiled for (31_fp8_any_tile.cu). It takes stage
// 30's plans (30_any_tile.hpp), a tile named by its index in fp8_any_tiles().
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <vector>

#include "30_any_tile.hpp"
#include "common/fp8_problem.hpp"

namespace sgemm {

// The tiles the kernel is compiled for, in a fixed order: each is one of stage 30's tiles
// (its orientation, rows, columns, consumers and cluster) on e4m3 operands.
const std::vector<AnyTile>& fp8_any_tiles();

// The CTAs of each tile's kernel the GPU holds at once in clusters of 1 to
// kMaxClusterSplits CTAs, in fp8_any_tiles()'s order (asked once a process).
const std::vector<ResidentByCluster>& fp8_any_tile_resident_ctas();

// The kernel on a plan (plan.tile: an index into fp8_any_tiles()), in any scaling. K a
// multiple of 16, N of 8 (TMA's rows start 16-byte aligned).
void launch_fp8_any_tile_plan(const AnyTilePlan& plan, const GemmProblem& problem, Fp8Scaling scaling,
                              const Fp8Operands& operands, __nv_bfloat16* d, cudaStream_t stream);

}  // namespace sgemm
