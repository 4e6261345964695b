// Stage 14 — a multistage cp.async pipeline, rasterized, for any shape.
//
// The idea: stage 13 still loads, waits, computes, waits. Here the copies run ahead:
// Stages shared-memory buffers form a ring, and while the tensor cores work on tile t,
// cp.async (kernels/common/cp_async.cuh) is filling the buffers of tiles t+1 ..
// t+Stages-1 directly from global memory, without passing through registers. Each
// iteration waits only for tile t's group of copies, then one barrier (which also
// frees tile t-1's buffer for the next copy).
//
// Also: block rasterization as in stage 10, a float2 epilogue, and any shape — shapes
// that are not whole tiles run the same kernel with bounds-checked loads (through
// registers, zeros outside) and stores; whole tiles pay nothing for it.
//
// The tile shape and depth are template parameters (14_multistage.cuh), chosen by
// scripts/tune.py --stage 14, which writes what it tried to results/<gpu>/.
//
// The fragments are double-buffered as well: each warp issues the ldmatrix of the next
// k16 step (of the next tile, across the barrier, at the last step) before the mma.sync
// of the current one.
//
// Prediction: 1.5-2x stage 13, to 75-85 % of the measured mma.sync ceiling.
//
// Measured on the H100: 410.5 TFLOPS at N = 4096 (55.8 % of cuBLAS BF16, 64.5 % of the
// mma.sync ceiling), 388.0 at 8192 (53.7 %, 60.5 %): 3.4x stage 13, short of the
// prediction. The winner: 128x128x32 blocks of four 64x64 warps, 4 stages, 2 blocks per
// SM, 254 registers, 64 KB of shared memory. What the tuning runs and the profiler
// showed (scripts/tune.py --stage 14; results/h100-80gb-hbm3/tuning_stage14.md):
//   - Double-buffering the fragments added 4 % (344 -> 358 TFLOPS at 8192, 128x128x32).
//   - Nsight Compute at 8192 (on an H200, the same SM, lent once in place of the H100):
//     the main stall was "wait" (2.15 cycles per issued instruction: fixed-latency
//     dependencies), and 873M instructions were issued for 268M mma.sync, 3.25 per
//     mma. The ldmatrix address arithmetic was the part that could go: precomputing the
//     addresses once per thread (load_fragments in 14_multistage.cuh) took the stage
//     from 374 to 388 TFLOPS at 8192 and from 386 to 410 at 4096 (make results).
//   - At the 255-register limit the previous winner (128x256x64) spilled: 12.7M
//     local-memory requests. Streaming B two n8 tiles at a time removed every spill but
//     ran 5 % slower, so spills were not the limit.
//   - A register-only test reaches the full mma.sync ceiling with 8 warps per SM (run on
//     an H200, the same SM), so occupancy alone is not the limit either.
//   - 64x32 warp tiles (fewer registers, more warps) were 15 % slower: more shared
//     loads per mma. A 64-deep K step spilled with 128x128 blocks.
// Next to try: interleave each step's mma.sync with the next step's ldmatrix by hand
// (the volatile asm fixes their order), fewer instructions per cp.async, and measuring
// the L2-to-SM throughput the larger tiles would need.
//
// Shapes: any M, N, K >= 1. Needs sm_80.
#include "14_multistage.cuh"

namespace sgemm {
namespace {

// The tuner's pick for the H100 (results/h100-80gb-hbm3/tuning_stage14.md).
using TunedConfig = Bf16TileConfig<128, 128, 32, 64, 64, 4, 2>;
constexpr int kTunedGroupRows = 8;

}  // namespace

void launch_multistage(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                       float* c, cudaStream_t stream) {
    launch_bf16_tile_config<TunedConfig>(problem, a, b, c, kTunedGroupRows, stream);
}

}  // namespace sgemm
