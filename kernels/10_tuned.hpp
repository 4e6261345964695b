// Stage 10's launchers, defined in 10_tuned.cu.
#pragma once

#include <string_view>
#include <vector>

#include "common/gemm_problem.hpp"

namespace sgemm {

// How many parts K is split into, for `tiles` tiles of C of k_tiles K tiles each on a GPU
// that runs `slots` blocks at once: stage 10's k_parts (10_tuned.cuh), or a caller's rule.
using KPartsRule = int (*)(int tiles, int k_tiles, int slots);

void launch_tuned(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

// The same with K split into the parts `parts_rule` chooses.
void launch_tuned_with_k_parts(const GemmProblem& problem, const float* a, const float* b, float* c,
                               cudaStream_t stream, KPartsRule parts_rule);

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

// Stage 10's kernel in one of stage10_tiles(), K split into `parts` (1: not split).
void launch_tuned_tile(const Stage10Tile& tile, int parts, const GemmProblem& problem, const float* a, const float* b,
                       float* c, cudaStream_t stream);

}  // namespace sgemm
