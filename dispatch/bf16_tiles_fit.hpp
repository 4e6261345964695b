// The constants of stage 30's plan model (bf16_tiles.hpp), in the order of AnyTileConstants:
// fixed_seconds, dram_bytes_per_second, load_bytes_per_second, macs_per_second,
// wgmma_seconds, store_bytes_per_second, direct_store_bytes_per_second,
// split_bytes_per_second, cluster_split_bytes_per_second, tile_seconds.
#pragma once

#include "dispatch/bf16_tiles.hpp"

namespace sgemm {

// Fitted by scripts/fit_bf16_tiles.py on the plans of the draw of seed 12 (118 problems, N and K rounded up to multiples of 8), timed on an H100 (results/h100-80gb-hbm3/experiments/fits/bf16_tiles/fit_seed12.md).
constexpr AnyTileConstants kAnyTileCost{3.19392e-06, 2.77874e+12, 5.304e+10, 3.03042e+12, 1.10681e-08, 2.1836e+11, 5.4418e+10, 2.41039e+10, 1.54515e+10, 6.08614e-07};

}  // namespace sgemm
