// The FP8 track (sgemm fp8): D = alpha A B^T + beta C on e4m3 operands with their scales
// (kernels/common/fp8_problem.hpp), the partial sums promoted into FP32: stage 31's kernel in
// its plan or stage 29's in one of its tiles (the choice's variant names it), whichever stage
// 31's model predicts faster, each with its own constants (fp8_tiles_fit.hpp, fp8_fit.hpp;
// fitted in the recipe's scales, used for all three). Any N and K: K off 16 on A and B padded
// with zeros; N off 8 in stage 31's plans at that N (D not through TMA), or on B and D padded
// too, whichever the model predicts faster with the copies' time. Hopper only (sm_90a).
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

// How the track meets a shape (kernels/common/fp8_padded_launch.cuh): as it is (K a multiple
// of 16; N off 8 in stage 31's plans only); A's and B's rows padded to K rounded up to 16, D
// written at its own N; or also B's rows to N rounded up to 8, D through a padded buffer.
enum class Fp8Padding { none, k, k_and_n };

// What the track runs on a shape.
struct Fp8TrackPlan {
    int stage = 29;
    const Fp8Tile* tile = nullptr;  // stage 29's
    AnyTilePlan plan{};             // stage 31's
    Fp8Padding padding = Fp8Padding::none;
    double predicted_seconds = 0;   // the kernel's and the copies'
};
// The fastest predicted of stage 29's best tile and stage 31's best plan (both take every
// scaling), on a GPU of `sms` SMs that holds `gpu` of stage 31's kernels: on the shape as it
// is where the kernels take it, else on its padded copies, the copies' time added (and where
// N is off 8, stage 31's plans at that N, on A and B padded in K where K is off 16, weighed
// against both stages on the copies padded in N too).
Fp8TrackPlan fp8_track_plan(const GemmShape& shape, const Fp8TilesGpu& gpu, int sms);
// The fastest predicted in one padding (none only where K is a multiple of 16).
Fp8TrackPlan fp8_track_plan_in(const GemmShape& shape, Fp8Padding padding, const Fp8TilesGpu& gpu, int sms);

// The copies' time for `shape` in `padding`: a launch that pads A and B (and, in N, one that
// copies D out), each stage 31's model's fixed part and its bytes at that model's DRAM rate.
double fp8_copy_seconds(const GemmShape& shape, Fp8Padding padding);

// Enqueues `plan` on `problem` (the copies of its padding, the kernel): the track's launch
// with the plan decided.
void launch_fp8_track_plan(const Fp8TrackPlan& plan, const GemmProblem& problem, Fp8Scaling scaling,
                           const Fp8Operands& operands, __nv_bfloat16* d, cudaStream_t stream);
void launch_fp8_track(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands, __nv_bfloat16* d,
                      cudaStream_t stream);

}  // namespace sgemm
