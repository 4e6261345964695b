// The FP8 track (sgemm fp8): D = alpha A B^T + beta C on e4m3 operands with their scales
// (kernels/common/fp8_problem.hpp), the partial sums promoted into FP32: stage 31's kernel in
// its plan or stage 29's in one of its tiles (the choice's variant names it), whichever stage
// 31's model predicts faster, each with its own constants (fp8_tiles_fit.hpp, fp8_fit.hpp;
// fitted in the recipe's scales, used for all three). Any N and K: off N % 8 or K % 16 on
// zero-padded copies, as the bf16 track pads for stage 20. Hopper only (sm_90a).
#pragma once

#include "29_fp8_tiles.hpp"
#include "common/fp8_problem.hpp"
#include "dispatch/bf16_tiles.hpp"
#include "dispatch/fp8_tiles.hpp"
#include "dispatch/kernel_choice.hpp"

namespace sgemm {

KernelChoice choose_fp8_kernel(const GemmShape& shape, Fp8Scaling scaling);

// Stage 29's kernel in `tile` on `shape`, as stage 31's model (fp8_tiles.hpp) sees a plan:
// whole tiles in rounds over `sms` SMs (a CTA an SM), K in stage 30's K tiles; and whether
// its D leaves from registers (a consumer's part narrower than a 64-column chunk). With
// kStage29Cost (fp8_fit.hpp), its time in seconds beside stage 31's plans.
AnyTileTerms stage29_tile_terms(const GemmShape& shape, const Fp8Tile& tile, int sms);
bool stage29_stores_from_registers(const Fp8Tile& tile);
// Stage 31's model's FP8 terms of it: its two consumers each promote half the tile's sums a
// K block.
Fp8Terms stage29_fp8_terms(const GemmShape& shape, const Fp8Tile& tile);

// What the track runs on a shape it takes as it is (N a multiple of 8, K of 16).
struct Fp8TrackPlan {
    int stage = 29;
    const Fp8Tile* tile = nullptr;  // stage 29's
    AnyTilePlan plan{};             // stage 31's
    double predicted_seconds = 0;
};
// The faster predicted of stage 29's best tile and stage 31's best plan (both take every
// scaling), on a GPU of `sms` SMs that holds `gpu` of stage 31's kernels.
Fp8TrackPlan fp8_track_plan(const GemmShape& shape, const Fp8TilesGpu& gpu, int sms);

void launch_fp8_track(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands, __nv_bfloat16* d,
                      cudaStream_t stream);

}  // namespace sgemm
