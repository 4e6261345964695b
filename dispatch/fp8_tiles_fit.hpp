// The constants of stage 31's plan model (fp8_tiles.hpp): stage 30's model (bf16_tiles.hpp)
// with its own constants, in the order of AnyTileConstants, then FP8's own
// (promoted_value_seconds). scripts/fit_bf16_tiles.py --stage 31 fits them on timed FP8
// plans (sgemm_model --track fp8-tiles --time).
#pragma once

#include "dispatch/fp8_tiles.hpp"

namespace sgemm {

// Fitted by scripts/fit_bf16_tiles.py on the plans of the draw of seed 18 (59 problems, N and K rounded up to multiples of 8 and 16), timed on an H200 (results/h200/experiments/fits/fp8_tiles/fit_seed18.md).
constexpr Fp8TileConstants kFp8AnyTileCost{2.83075e-06, 3.27862e+12, 6.34823e+10, 1.10375e+13, 3.73574e-08, 8.62651e+21, 3.25388e+10, 1.97773e+10, 1.5924e+10, 8.78726e-07, 5.14507e-11};

}  // namespace sgemm
