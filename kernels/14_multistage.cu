// Stage 14 — a multistage cp.async pipeline, rasterized, for any shape.
//
// The idea: stage 13 still loads, waits, computes, waits. Here the copies run ahead:
// Stages shared-memory buffers form a ring, and while the tensor cores work on tile t,
// cp.async (kernels/common/cp_async.cuh) is filling the buffers of tiles t+1 ..
// t+Stages-1 directly from global memory, without passing through registers. Each
// iteration waits only for tile t's group of copies, then one barrier (which also
// frees tile t-1's buffer for the next copy).
//
// What changed since stage 13, besides the pipeline:
//   - Larger tiles, the tuner's pick (the tile shape and depth are template parameters in
//     14_multistage.cuh; scripts/tune.py --stage 14 writes what it tried to results/<gpu>/):
//     128x256x64 blocks of eight 64x64 warps, 3 stages, one block per SM, 228 registers,
//     144 KB of shared memory; block rasterization as in stage 10, in groups of 16 block
//     rows; a float2 epilogue.
//   - The warp loop (multistage_kernel): the fragments are double-buffered, one A and one
//     B ldmatrix of the next k16 step going before each row of mma.sync; every address
//     is computed once per thread; a tile's copies are issued in pieces, one per k16 step.
//   - Smaller tiles where the tuned ones would leave more than half the SMs without one,
//     and a last wave that would leave most of them idle, or tiles so few that they do,
//     split along K (plan_tail_split), the parts added up in a fixed order by a second kernel.
//   - Any shape. Where K and N are multiples of 8, every row starts 16-byte aligned and
//     cp.async still applies: K's remainder is copied first, as a tile that starts before
//     K = 0 and is zero-filled there, so the main loop only ever sees whole tiles; copies
//     past the bottom or right edge read the last row or chunk, whose results are never
//     stored. Any other shape loads through registers with every value tested, and stores
//     its tile of C through shared memory, 32 consecutive values of a row at a time (each
//     value alone wrote every sector twice, half of it each time). Whole tiles pay nothing.
//
// The kernel, 14_multistage.cuh, is the pipeline; the any-shape edges and the tail split
// are in 14_edges_and_tail_split.cuh.
//
// Prediction: 1.5-2x stage 13, to 75-85 % of the measured mma.sync ceiling.
//
// Measured by make results on the H100 80GB HBM3: 438.6 TFLOPS at N = 4096 (62.3 % of cuBLAS bf16),
// 444.5 at 8192 (61.8 %).
// 66-68 % of the mma.sync ceiling (646 TFLOPS);
// about 3.7-3.8x stage 13, and short of the prediction: at the power cap the SM clock
// falls below the ceiling's, and per clock the kernel does what was predicted. Against
// cuBLAS it loses most to the copies and the ldmatrix traffic around each mma.sync,
// which only wgmma removes. docs/notes/14_multistage.md has the figures: the clocks, the
// limits one by one, the small problems, the last wave, the edges, the experiments dropped.
//
// Shapes: any M, N, K >= 1. Needs sm_80. The bf16 track (dispatch/bf16.cpp) runs this
// kernel on GPUs without Hopper's instructions, and on Hopper, off K and N multiples of 8,
// where its cost model predicts it fastest (multistage_plan tells the model what the
// launcher does with a shape).
#include "14_multistage.hpp"

#include "14_multistage.cuh"

namespace sgemm {
namespace {

// The tuner's pick for the H100, both ways: launch by launch, raster groups of 4, 8 and 16
// block rows come within half a point of each other (results/h100-80gb-hbm3/
// tuning_stage14.md); in turns, 16 wins by 0.7-2 points (tuning_stage14_in_turns.md).
using TunedConfig = Bf16TileConfig<128, 256, 64, 64, 64, 3, 1>;
constexpr int kTunedGroupRows = 16;

// Smaller tiles for problems whose tuned tiles would leave more than half the SMs without
// one: 128x128 blocks, two per SM, or where even those would, 128x64 blocks of eight
// 32x32 warp tiles (104 registers, 2 x 96 KB of shared memory).
using MediumProblemConfig = Bf16TileConfig<128, 128, 64, 64, 64, 3, 2>;
using SmallProblemConfig = Bf16TileConfig<128, 64, 64, 32, 32, 4, 2>;
constexpr int kSmallerTilesGroupRows = 8;

template <class Config>
bool tiles_reach_half_the_sms(const GemmShape& shape, int sms) {
    return 2 * ceil_div(shape.m, Config::kBlockM) * ceil_div(shape.n, Config::kBlockN) >= sms;
}

// The tile configuration for the shape: calls visit(Config{}, group_rows).
template <class Visit>
auto with_config_for(const GemmShape& shape, int sms, Visit&& visit) {
    if (tiles_reach_half_the_sms<TunedConfig>(shape, sms)) return visit(TunedConfig{}, kTunedGroupRows);
    if (tiles_reach_half_the_sms<MediumProblemConfig>(shape, sms))
        return visit(MediumProblemConfig{}, kSmallerTilesGroupRows);
    return visit(SmallProblemConfig{}, kSmallerTilesGroupRows);
}

}  // namespace

void launch_multistage(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                       float* c, cudaStream_t stream) {
    with_config_for(problem.shape, current_sm_count(), [&](auto config, int group_rows) {
        launch_bf16_tile_config<decltype(config)>(problem, a, b, c, group_rows, stream);
    });
}

MultistagePlan multistage_plan(const GemmShape& shape, int sms) {
    return with_config_for(shape, sms, [&](auto config, int) {
        using Config = decltype(config);
        const TailSplit split = plan_tail_split<Config>(shape, sms);
        return MultistagePlan{Config::kBlockM, Config::kBlockN, split.full_tiles, split.parts};
    });
}

}  // namespace sgemm
