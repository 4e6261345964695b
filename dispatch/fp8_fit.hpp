// The constants of the fp8 track's view of stage 29's tiles (fp8.hpp's stage29_tile_terms):
// stage 31's model (fp8_tiles.hpp) with stage 29's own constants, in the order of
// Fp8TileConstants. scripts/fit_bf16_tiles.py --stage 29 fits them on stage 29's timed tiles
// (sgemm_model --track fp8 --time).
#pragma once

#include "dispatch/fp8_tiles_fit.hpp"

namespace sgemm {

// Fitted by scripts/fit_bf16_tiles.py on stage 29's tiles on the draw of seed 18 (59 problems, N and K rounded up to multiples of 8 and 16), timed on an H200 (results/h200/experiments/fits/fp8_stage29/fit_seed18.md).
constexpr Fp8TileConstants kStage29Cost{2.39017e-06, 1.99091e+12, 7.43964e+10, 3.63707e+12, 2.26754e-08, 8.62651e+21, 3.46098e+21, 1.92455e+10, 1.49383e+10, 6.20956e-07, 3.86563e-11};

}  // namespace sgemm
