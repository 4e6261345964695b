// The constants of stage 30's plan model (bf16_tiles.hpp), in the order of AnyTileConstants:
// fixed_seconds, dram_bytes_per_second, load_bytes_per_second, macs_per_second,
// wgmma_seconds, store_bytes_per_second, swapped_store_bytes_per_second,
// split_bytes_per_second.
#pragma once

#include "dispatch/bf16_tiles.hpp"

namespace sgemm {

// Fitted by scripts/fit_bf16_tiles.py on the plans of the draw of seed 12 (118 problems, N and K rounded up to multiples of 8), timed on an H200 (results/h200/experiments/fits/bf16_tiles/fit_seed12.md).
constexpr AnyTileConstants kAnyTileCost{3.31484e-06, 3.44908e+12, 5.55667e+10, 3.09721e+12, 6.15711e-09, 1.49653e+11, 2.46499e+10, 3.23969e+10};

}  // namespace sgemm
