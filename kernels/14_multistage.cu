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
// Prediction: 1.5-2x stage 13, to 75-85 % of the measured mma.sync ceiling.
//
// Measured on the H100: see the README table.
//
// Shapes: any M, N, K >= 1. Needs sm_80.
#include "14_multistage.cuh"

namespace sgemm {
namespace {

// The tuner's pick for the H100 (results/h100-80gb-hbm3/tuning_stage14.md).
using TunedConfig = Bf16TileConfig<128, 128, 64, 64, 5, 2>;
constexpr int kTunedGroupRows = 8;

}  // namespace

void launch_multistage(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                       float* c, cudaStream_t stream) {
    launch_bf16_tile_config<TunedConfig>(problem, a, b, c, kTunedGroupRows, stream);
}

}  // namespace sgemm
