// The constants of stage 30's plan model (bf16_tiles.hpp), in the order of AnyTileConstants:
// fixed_seconds, dram_bytes_per_second, load_bytes_per_second, macs_per_second,
// wgmma_seconds, store_bytes_per_second, direct_store_bytes_per_second,
// split_bytes_per_second, cluster_split_bytes_per_second.
#pragma once

#include "dispatch/bf16_tiles.hpp"

namespace sgemm {

// Fitted by scripts/fit_bf16_tiles.py on the plans of the draw of seed 12 (118 problems, N and K rounded up to multiples of 8), timed on an H100 (results/h100-80gb-hbm3/experiments/fits/bf16_tiles/fit_seed12.md).
constexpr AnyTileConstants kAnyTileCost{3.73889e-06, 2.74632e+12, 5.43505e+10, 3.07771e+12, 9.58532e-09, 1.04414e+11, 2.78197e+10, 2.45882e+10, 1.60947e+10};

}  // namespace sgemm
