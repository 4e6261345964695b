// Stage 14 — a multistage cp.async pipeline, rasterized, for any shape.
//
// The idea: stage 13 still loads, waits, computes, waits. Here the copies run ahead:
// Stages shared-memory buffers form a ring, and while the tensor cores work on tile t,
// cp.async (kernels/common/cp_async.cuh) is filling the buffers of tiles t+1 ..
// t+Stages-1 directly from global memory, without passing through registers. Each
// iteration waits only for tile t's group of copies, then one barrier (which also
// frees tile t-1's buffer for the next copy).
//
// Also: block rasterization as in stage 10, a float2 epilogue, and any shape. Where K
// and N are multiples of 8, every row starts 16-byte aligned and cp.async still
// applies: K's remainder is copied first, as a tile that starts before K = 0 and is
// zero-filled there, so the main loop only ever sees whole tiles; copies past the
// bottom or right edge read the last row or chunk, whose results are never stored.
// Any other shape loads through registers with every value tested. Whole tiles pay
// nothing for either.
//
// The tile shape and depth are template parameters (14_multistage.cuh), chosen by
// scripts/tune.py --stage 14, which writes what it tried to results/<gpu>/.
//
// Inside a warp (multistage_kernel in 14_multistage.cuh):
//   - The fragments are double-buffered and the loads are spread: before each row of
//     mma.sync of step s, one A and one B ldmatrix of step s + 1. At a tile's last step
//     half the mma.sync go before the barrier, so a warp waiting there keeps the tensor
//     cores busy.
//   - Every address is computed once per thread: each thread's chunks of a tile share
//     one swizzle, so a copy is a pointer plus constants, and the next tile is one
//     pointer increment; ldmatrix addresses are per-lane constants plus offsets.
//   - The copies of a tile are issued in pieces, one per k16 step, not in one burst, and
//     past the last tile they zero-fill instead of branching.
//
// Prediction: 1.5-2x stage 13, to 75-85 % of the measured mma.sync ceiling.
//
// Measured on the H100 (make results): 452.1 TFLOPS at N = 4096, 62.4 % of cuBLAS BF16
// and 70.4 % of the mma.sync ceiling (643 TFLOPS); 436.1 at 8192, 61.5 % and 68.1 %;
// about 4x stage 13. Earlier make results, same kernel: 489.1 and 457.5 (64.6 % and
// 61.5 %; 75.5 % and 71.3 % of the ceiling), 453.9 and 453.1. Short of the prediction. The winner: 128x256x64
// blocks of eight 64x64 warps, 3 stages, one block per SM, 228 registers, 144 KB of
// shared memory (the first version, 128x128x32 blocks two per SM: 410 and 388
// TFLOPS). Runs of this kernel at 4096 and 8192 measured 437-489 TFLOPS: the H100
// runs power-limited, so absolute figures move by several percent from run to run (the
// tuner takes the median of three passes). What the profiler, the tuning and the power
// experiments showed:
//   - L2 bandwidth was the first wall. The L2-to-SM read rate measures about 32 bytes
//     per clock per SM (6.2-7.3 TB/s). The earlier winner, 128x128 blocks two per SM,
//     needs 64 bytes from L2 per mma.sync and drew 6.35 TB/s at 431 TFLOPS: 88 % of that.
//     128x256 blocks need 48 bytes per mma.sync (5.2 TB/s at 475 TFLOPS), the largest
//     tile whose accumulators fit in the register file of one SM, so this path tops out
//     near 600 TFLOPS on the H100 even at full L2 speed.
//   - The 8-warp blocks lost to 128x128 ones until the loop was rebuilt: ptxas had moved
//     the next step's ldmatrix into a burst after the mma.sync (SASS), the cp.async
//     address arithmetic was redone every tile (191 instructions per 64 mma.sync at
//     128x128x32, 137 now), and every warp of the block drained at the same barrier.
//     Nsight Compute, tensor pipe busy at 4096: 70.9 % for the old loop (128x128x32);
//     75.7 % with the loads spread and the addresses precomputed (256x128x64); 80.5 %
//     once the copies went out in pieces, which cut barrier stalls from 0.48 to 0.26
//     and long-scoreboard stalls from 0.66 to 0.31 cycles per instruction.
//   - A register-only copy of this loop's instruction mix (64x64 warp tile, ldmatrix
//     interleaved) reaches the full 640 TFLOPS: the loop itself is not the limit.
//   - A persistent grid that starts the next tile's copies before the epilogue measured
//     the same as one tile per block, within run-to-run noise, and was dropped.
//   - Earlier: double-buffered fragments +4 %; streaming B to avoid spills -5 %; 64x32
//     warp tiles -15 % (more shared loads per mma.sync). Later: 128x256x128 blocks with
//     2 stages (half the barriers, one tile in flight, the same 228 registers): 50-53 % of
//     cuBLAS at both sizes against 62-65 % in the same runs.
//   - Power is the last wall. Run back to back at N = 8192, this kernel holds the H100
//     at its 700 W cap with the SM clock near 1.5 GHz, where the ceiling's mma.sync
//     loop holds 1.98 GHz at 390 W (nvidia-smi); cuBLAS sits at the same cap. On inputs
//     of all ones, which flip no bits in the datapaths, the same kernel runs at 1.86
//     GHz and 548 TFLOPS: the energy of switching real data costs a fifth of the speed
//     (cuBLAS gains as much). `sgemm peak` measures that price on its own: its
//     mma_sync_bf16_sustained runs this kernel's warp loop, ldmatrix included, on random
//     bf16 in shared memory with no global memory at all, and after 2 s at the cap it
//     sustains 581-584 TFLOPS, 90 % of the ceiling. So 75 % of the ceiling (482) leaves
//     the copies, the epilogue and the last wave 17 % of what the loop sustains; they
//     take 25 % (436 at 8192). The order of the mma.sync does not change the energy:
//     the same loop on registers holding random fragments that change every step
//     sustained 618-633 TFLOPS in this kernel's order (A fixed along a row), 602-616
//     with B fixed along a column, 616-627 with two k16 steps back to back on each
//     accumulator (scratch variants, 4 s each, all at 700 W).
//   - What the copies cost, from two timing-only variants of this kernel: without any
//     global loads it runs at about 550 TFLOPS (tensor pipe 92 % against 86 %); copying
//     a quarter fewer L2 bytes gains 2 %. So the loads cost about a sixth of the speed;
//     L2 traffic, extrapolated, less than half of that. The rest goes to cp.async's
//     stores, which share shared memory with ldmatrix (176 bytes per mma.sync, about
//     three quarters of its 128 bytes per clock), and to the waits they cause.
//   - The epilogue: without its C stores (timing only) the kernel runs 6 % faster at
//     4096 and 3 % at 8192 (Nsight Compute: tensor pipe 80.8 % -> 85.6 % at 4096): every
//     block of a wave writes its 128 KB of C at the same moment, with the tensor cores
//     idle. And the last wave is half empty (2048 tiles are 15.5 waves of 132 at 8192,
//     512 are 3.9 at 4096).
//   - Stream-K (Osama et al., 2023) for the last wave, tried as a stage 15 and dropped.
//     Each version split the tiles left after the full waves along K over all SMs and
//     summed each tile's parts in a fixed order through a workspace (flags and partial
//     tiles). At 8192 (2048 tiles: 15 waves and 68 left over):
//       - a persistent grid, one block per SM, equal shares of K iterations: 60.3 and
//         59.9 % of cuBLAS against 61.1 and 61.2 % in the same runs (2-6 points lower at
//         4096). With the shares cut at fifths of a tile: 59.9-60.3 % against
//         61.0-61.7 %. Nsight Compute: the persistent grid alone, splitting nothing, takes
//         5 % more cycles than one block per tile (3.86 against 3.67 million);
//       - this kernel for the full waves, then a second one for the remainder, cut into
//         fifths dealt out part by part so that neighbouring tiles' pieces run at the
//         same K (DRAM reads 2.27 + 0.11 GB against 2.34): 61.4-61.5 % against 61.1-61.2 %
//         in four runs, 1 % fewer cycles. The remainder took 0.8 of a tile's time where
//         its pieces hold 0.6: each piece refills the pipeline and moves a 128 KB
//         partial tile out and back.
//     At 4096 the remainder, 116 tiles for 132 SMs, has no cut that pays. Half a point
//     at one size did not justify a workspace in every launcher's signature.
//   - The C stores themselves: streaming stores (st.global.cs), or the tile staged in
//     shared memory and written as whole 1 KB rows with float4 stores, measured the
//     same as the float2 stores within noise (8192: 61.0-61.1 % for both, 61.1-61.4 %
//     for float2, three runs each).
// Next to try: what is left are the copies' energy and shared-memory traffic, and
// Hopper removes them: TMA copies a tile with one instruction and multicasts it to a
// cluster of SMs (what cuBLAS's kernel does), and wgmma reads its operands straight
// from shared memory.
//
// Off the tile grid, where K and N are multiples of 8 (./sgemm 14 -m 4000 -n 4000
// -k 4000, with 4096 in the same run): 421 TFLOPS, 63.5 % of cuBLAS, against 487
// (64.7 %) at 4096; cuBLAS loses about as much there. Such shapes used to take the
// register path, at 125 TFLOPS, as 4095 (rows not 16-byte aligned) still does: 126,
// where cuBLAS too falls to 154. Tried for the edges and dropped: testing every chunk
// against the edges in every tile (4-5 points of cuBLAS lower with an edge in M or K:
// the tests sit in the main loop; behind a branch taken only at the edges, no faster:
// the branch splits the copies from the mma.sync they interleave with); moving edge
// blocks back inside the matrix instead of clamping their reads (the same within noise
// at 4000 and 8000, and only possible where M and N are at least a block).
//
// Shapes: any M, N, K >= 1. Needs sm_80.
#include "14_multistage.cuh"

namespace sgemm {
namespace {

// The tuner's pick for the H100 (results/h100-80gb-hbm3/tuning_stage14.md).
using TunedConfig = Bf16TileConfig<128, 256, 64, 64, 64, 3, 1>;
constexpr int kTunedGroupRows = 4;

}  // namespace

void launch_multistage(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                       float* c, cudaStream_t stream) {
    launch_bf16_tile_config<TunedConfig>(problem, a, b, c, kTunedGroupRows, stream);
}

}  // namespace sgemm
