// Stage 29's launcher and its tiles, defined in 29_fp8_tiles.cu.
#pragma once

#include <string_view>

#include "common/fp8_problem.hpp"

namespace sgemm {

// A tile of stage 29's kernel: block_m x block_n, in clusters of cluster_m CTAs along M.
struct Fp8Tile {
    int block_m, block_n, cluster_m;
    std::string_view name;  // "128x128 cluster 2"
};

// The tile the model predicts fastest for `shape` on a GPU of `sms` SMs (29_fp8_tiles.cu):
// one of the stage's own, which its launcher tells apart by address.
const Fp8Tile& fp8_tile_for(const GemmShape& shape, int sms);
// The model's cycles for `shape` in `tile`: what fp8_tile_for compares.
double fp8_tile_cycles(const GemmShape& shape, const Fp8Tile& tile, int sms);

// The stage's tiles, the larger first (its launcher tells them apart by address).
struct Fp8TileList {
    const Fp8Tile* first;
    int count;
    const Fp8Tile* begin() const { return first; }
    const Fp8Tile* end() const { return first + count; }
};
Fp8TileList fp8_tiles();

// Every scaling, promoted, in `tile` (one of fp8_tiles()).
void launch_fp8_tile(const Fp8Tile& tile, const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                     __nv_bfloat16* d, cudaStream_t stream);
// The same in the tile fp8_tile_for chooses.
void launch_fp8_tiles(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands, __nv_bfloat16* d,
                      cudaStream_t stream);

}  // namespace sgemm
