// Stage 30's kernel in every tile it is compiled for (30_any_tile.cu), and the plan it
// takes: which tile, how many CTAs, whether the leftover tiles are shared out by K.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <array>
#include <vector>

#include "common/gemm_problem.hpp"

namespace sgemm {

// A tile the kernel is compiled for: `rows` sums along wgmma's M (64 x blocks, taken by
// `consumers` warpgroups of rows / 64 / consumers m64 blocks each) by `columns` along
// wgmma's N (a multiple of 16), in clusters of `cluster` tiles stacked along the rows that
// share the columns' operand. weights_as_rows: the rows are C's columns (B's) and the
// columns C's rows (A's, the tokens), as stage 25 swaps them; else stage 20's way round.
struct AnyTile {
    bool weights_as_rows;
    int rows;
    int columns;
    int consumers;
    int cluster;
    bool splits_k;  // K may be split over a cluster (cluster 1, the tile's sums fit in the ring)

    // The rows and columns of sums of a shape, in the tile's orientation.
    int row_extent(const GemmShape& shape) const { return weights_as_rows ? shape.n : shape.m; }
    int column_extent(const GemmShape& shape) const { return weights_as_rows ? shape.m : shape.n; }
    // C's rows (tokens) and columns (weights) a tile covers.
    int tokens() const { return weights_as_rows ? columns : rows; }
    int weights() const { return weights_as_rows ? rows : columns; }
};

// A cluster of CTAs splits a tile's K at most this many ways (clusters of 8 are portable).
constexpr int kMaxClusterSplits = 8;

// How a shape runs: a tile, the CTAs of the persistent grid (a multiple of the cluster,
// at most what the GPU holds at once), and, with split_tail, the tiles left after the
// whole rounds shared out by K over every cluster (stream-K; where the tiles are fewer
// than the clusters, this splits each tile's K). Or, with splits > 1, one tile a cluster
// of `splits` CTAs, each an even range of its K (ctas: tiles x splits, one wave).
// group_rows: the raster's group height.
struct AnyTilePlan {
    int tile;  // index into any_tiles()
    int ctas;
    bool split_tail;
    int group_rows = 8;
    int splits = 1;
};

// The tiles the kernel is compiled for, in a fixed order (a plan names one by index).
const std::vector<AnyTile>& any_tiles();

// The CTAs of each tile's kernel the GPU holds at once in clusters of 1 to
// kMaxClusterSplits CTAs (asked of the occupancy calculator once a process), in
// any_tiles()'s order: [tile][cluster size], 0 where it cannot launch them.
using ResidentByCluster = std::array<int, kMaxClusterSplits + 1>;
const std::vector<ResidentByCluster>& any_tile_resident_ctas();

// The kernel on a plan. K and N multiples of 8 (TMA's rows start 16-byte aligned).
void launch_any_tile_plan(const AnyTilePlan& plan, const GemmProblem& problem, const __nv_bfloat16* a,
                          const __nv_bfloat16* b, float* c, cudaStream_t stream);
void launch_any_tile_plan_bf16_c(const AnyTilePlan& plan, const GemmProblem& problem, const __nv_bfloat16* a,
                                 const __nv_bfloat16* b, __nv_bfloat16* c, cudaStream_t stream);

}  // namespace sgemm
