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
// Measured on the H100: 385.8 TFLOPS at N = 4096 (51.8 % of cuBLAS BF16, 60.7 % of the
// mma.sync ceiling), 373.7 at 8192 (48.9 %, 58.9 %): 3.3x stage 13, but short of the
// prediction. The winner (128x256 blocks, 64-deep K, 64x64 warp tiles, 3 stages) runs
// one 256-thread block per SM at the 255-register limit (8 bytes of stack), so 8 warps
// per SM must keep 4 tensor cores fed; Nsight Compute on the 128x128x32 5-stage shape
// showed the tensor pipe 63 % busy with 12 % of warp slots occupied. What the tuning
// runs showed (scripts/tune.py --stage 14; results/h100-80gb-hbm3/tuning_stage14.md):
//   - Double-buffering the fragments added 4 % (344 -> 358 TFLOPS at 8192, 128x128x32).
//   - A 64-deep K step helps only with 128x256 or 256x128 blocks; 128x128x64 spills.
//   - 64x32 warp tiles (fewer registers, more warps) were 15 % slower: more shared
//     loads per mma.
// Why it stops here, as far as measured: Nsight Compute at N = 8192 (on an H200, the
// same SM, lent once in place of the H100) counts 12.7M local-memory spill requests at
// the 255-register limit and only 0.49 of 2 warps per scheduler eligible to issue.
// Streaming B two n8 tiles at a time (8 live registers instead of 32) removed every
// spill but ran 5 % slower (353 TFLOPS at 8192), so spills are not the limit; and a
// register-only test reaches the full mma.sync ceiling with 8 warps per SM, so
// occupancy alone is not either. Next to try: split the mma.sync of a step across
// the ldmatrix of the next one by hand (the volatile asm fixes their order), a
// 4-warp 128x128 block with 2 blocks per SM and 64-deep K without spills, and
// measuring L2-to-SM throughput, which 128x256 tiles at 480 TFLOPS would push past
// 5 TB/s.
//
// Shapes: any M, N, K >= 1. Needs sm_80.
#include "14_multistage.cuh"

namespace sgemm {
namespace {

// The tuner's pick for the H100 (results/h100-80gb-hbm3/tuning_stage14.md).
using TunedConfig = Bf16TileConfig<128, 256, 64, 64, 64, 3, 1>;
constexpr int kTunedGroupRows = 8;

}  // namespace

void launch_multistage(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                       float* c, cudaStream_t stream) {
    launch_bf16_tile_config<TunedConfig>(problem, a, b, c, kTunedGroupRows, stream);
}

}  // namespace sgemm
