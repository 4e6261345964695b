// Stage 10's launchers, defined in 10_tuned.cu.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "common/gemm_problem.hpp"

namespace sgemm {

void launch_tuned(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

// The tiles stage 10's kernel is built in, for a caller that chooses among them (the fp32
// track, dispatch/fp32.cpp): the tuned one, the few-row ones, and narrow and small ones
// (10_tuned.cuh). A block takes block_m x block_n of C, block_k of K a step.
struct Stage10Tile {
    int id;  // its place in stage10_tiles()
    int block_m, block_n, block_k;
    int blocks_per_sm;  // what its __launch_bounds__ asks an SM to hold
    std::string_view name;
};
const std::vector<Stage10Tile>& stage10_tiles();
constexpr int kTunedTileId = 0;  // the tuned tile's place in stage10_tiles()

// The blocks of a tile this GPU runs at once (the occupancy calculator's count).
int stage10_tile_slots(const Stage10Tile& tile);

// The blocks of each tile a GPU runs at once: stage10_tile_slots on this one.
using Stage10Slots = std::function<int(const Stage10Tile&)>;

// The tile and the split of K that stage 10's own launcher (launch_tuned) runs a shape in, on a
// GPU that runs slots(tile) blocks of a tile at once.
struct Stage10Choice {
    Stage10Tile tile;
    int parts;
};
Stage10Choice tuned_choice(const GemmShape& shape, const Stage10Slots& slots);

// Stage 10's kernel in one of stage10_tiles(), K split into `parts` (1: not split).
void launch_tuned_tile(const Stage10Tile& tile, int parts, const GemmProblem& problem, const float* a, const float* b,
                       float* c, cudaStream_t stream);

}  // namespace sgemm
