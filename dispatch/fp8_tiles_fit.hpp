// The constants of stage 31's plan model (fp8_tiles.hpp): stage 30's model (bf16_tiles.hpp)
// with its own constants, in the order of AnyTileConstants. scripts/fit_bf16_tiles.py
// --stage 31 fits them on timed FP8 plans (sgemm_model --track fp8-tiles --time).
#pragma once

#include "dispatch/bf16_tiles_fit.hpp"

namespace sgemm {

// Not fitted on FP8 plans yet: stage 30's, fitted on bf16 plans (bf16_tiles_fit.hpp).
constexpr AnyTileConstants kFp8AnyTileCost = kAnyTileCost;

}  // namespace sgemm
