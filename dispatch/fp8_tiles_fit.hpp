// The constants of stage 31's plan model (fp8_tiles.hpp): stage 30's model (bf16_tiles.hpp)
// with its own constants, in the order of AnyTileConstants. scripts/fit_bf16_tiles.py
// --stage 31 fits them on timed FP8 plans (sgemm_model --track fp8-tiles --time).
#pragma once

#include "dispatch/bf16_tiles_fit.hpp"

namespace sgemm {

// Fitted by scripts/fit_bf16_tiles.py on the plans of the draw of seed 16 (57 problems, N and K rounded up to multiples of 8 and 16), timed on an H200 (results/h200/experiments/fits/fp8_tiles/fit_seed16.md).
constexpr AnyTileConstants kFp8AnyTileCost{3.15331e-06, 2.96023e+12, 5.43893e+10, 3.07771e+12, 9.58532e-09, 4.33801e+11, 2.60559e+10, 1.29565e+10, 1.37508e+10};

}  // namespace sgemm
