// Stage 14 — a multistage cp.async pipeline, rasterized, for any shape.
//
// The idea: stage 13 still loads, waits, computes, waits. Here the copies run ahead:
// Stages shared-memory buffers form a ring, and while the tensor cores work on tile t,
// cp.async (kernels/common/cp_async.cuh) is filling the buffers of tiles t+1 ..
// t+Stages-1 directly from global memory, without passing through registers. Each
// iteration waits only for tile t's group of copies, then one barrier (which also
// frees tile t-1's buffer for the next copy).
//
// Also: block rasterization as in stage 10, a float2 epilogue, smaller tiles for small
// problems and a last wave split along K where it would leave the GPU mostly idle (both
// below), and any shape. Where K and N are multiples of 8, every row starts 16-byte
// aligned and cp.async still applies: K's remainder is copied first, as a tile that
// starts before K = 0 and is zero-filled there, so the main loop only ever sees whole
// tiles; copies past the bottom or right edge read the last row or chunk, whose results
// are never stored. Any other shape loads through registers with every value tested.
// Whole tiles pay nothing for either.
//
// The tile shape and depth are template parameters (14_multistage.cuh), chosen by
// scripts/tune.py --stage 14, which writes what it tried to results/<gpu>/. The raster
// groups are 16 block rows: at 8192 they halve the DRAM reads against groups of 4 (2.39
// -> 1.26 GB, L2 hit rate 62 -> 80 %, Nsight Compute) in the same cycles, so launch by
// launch they tie, but at the power cap the energy saved buys clock: in turns they gain
// 1-2 points of cuBLAS.
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
// Measured on the H100 (make results): 434.0 TFLOPS at N = 4096, 61.7 % of cuBLAS BF16
// and 67.2 % of the mma.sync ceiling (646 TFLOPS); 440.1 at 8192, 61.5 % and 68.2 %;
// about 3.7-3.8x stage 13, and short of the prediction. The winner: 128x256x64 blocks
// of eight 64x64 warps, 3 stages, one block per SM, 228 registers, 144 KB of shared
// memory (the first version, 128x128x32 blocks two per SM, measured 410 and 388 TFLOPS).
// The H100 runs power-limited, so absolute figures move by several percent from run to
// run (the make results before: 436.7 and 440.3 TFLOPS, 62.0 % and 61.6 %), and the
// tuner takes the median of three passes. Runs cut at 200 launches, a burst before the
// power cap settles, read more (462 TFLOPS, 62.8 %, 71.2 % at 4096, against 439, 62.0 %,
// 68.5 % over a full second), which is why every figure here is timed for a second.
//
// Per clock it is closer. Launch by launch this kernel and cuBLAS share one clock, the
// one their mix sets: the SMs counted 1553 and 1468 MHz over those launches
// (src/measuring/sm_clock.hpp), and 1815 over the ceiling's, so per clock this kernel does 78.6
// and 84.3 % of what mma.sync does. Timed in turns of 0.5 s instead (--timing blocks,
// src/measuring/timing.hpp), each runs at the clock its own power draw allows, and cuBLAS, which
// draws more per clock, loses more: 447.6 TFLOPS at 4096 (66.1 % of cuBLAS, 69.3 % of
// the ceiling; 1617 MHz against cuBLAS's 1450) and 471.4 at 8192 (70.2 %, 73.0 %; 1527
// against 1355 MHz).
//
// NVIDIA's own kernels on this path do no better: cuBLASLt 13.1 carries CUTLASS's sm80
// kernels (cutlass_80_tensorop_s16816gemm_bf16_*, mma.sync m16n8k16 as here) beside its
// Hopper ones, and sgemm_survey (make survey) times them as a stage is timed. The fastest,
// 256x128 tiles, reached 424.0 TFLOPS at 4096 (60.3 % of cuBLAS, 66.2 % of the ceiling)
// and 439.5 at 8192 (59.7 %, 68.6 %), against 438.9 (61.8 %, 68.5 %) and 453.7 (61.7 %,
// 70.8 %) for this kernel in the same run; in turns 63.7 % and 67.3 % of cuBLAS against
// 66.5 % and 70.3 % (results/h100-80gb-hbm3/cublaslt_survey*.md).
//
// What limits it, in the order the profiler and the experiments found it:
//   - L2 bandwidth. The L2-to-SM read rate measures about 32 bytes per clock per SM
//     (6.2-7.3 TB/s). 128x128 blocks need 64 bytes from L2 per mma.sync and drew 6.35
//     TB/s at 431 TFLOPS, 88 % of it; 128x256 blocks need 48, and they are the largest
//     tile whose accumulators fit in one SM's register file.
//   - The loop. The 8-warp blocks lost to 128x128 ones until the loop was rebuilt as
//     above: Nsight Compute at 4096 put the tensor pipe 70.9 % busy for the old loop
//     (ptxas had gathered the next step's ldmatrix into a burst, the copy addresses were
//     recomputed every tile: 191 instructions per 64 mma.sync, 137 now), 75.7 % with the
//     loads spread and the addresses precomputed, 80.5 % with the copies in pieces.
//   - Power. The H100 holds its 700 W cap by lowering the SM clock, and the tensor cores
//     do not get the top clock even on constant operands (the ceiling's 1816 MHz). In
//     ./sgemm 14 N --seed 121 the shared clock was 1571 MHz at 4096 and 1476 at 8192;
//     per clock this kernel did 78.0 and 87.1 % of the ceiling, cuBLAS's wgmma kernel
//     1.26x and 1.42x that. So 65 % of cuBLAS launch by launch needs 82 % of mma.sync's
//     rate per clock at 4096 and 92 % at 8192, and 75 % of the ceiling 87 and 92 %.
//     Random operands at the cap cost 8-12 %: the warp loop below, on random bf16 in
//     shared memory, sustains 574-594 TFLOPS after 2 s (sgemm peak); on inputs of all
//     ones the whole kernel runs at 1.86 GHz and 548 TFLOPS. (nvidia-smi cannot show any
//     of this: over 4 s in turns its readings ranged 1380-1845 MHz while the SMs counted
//     1603 over the stage's turns and 1445 over cuBLAS's.)
//   - The copies and the barrier. The same warp loop with its operands already in shared
//     memory, no copy and no barrier (mma_sync_bf16_warp_loop in ./sgemm peak, eight warps
//     an SM as here) runs at 94.2-94.5 % of the register-only rate per clock, this
//     kernel's loop at about 87 %: the copies and the barrier take 7-8 points, feeding
//     through ldmatrix 5.5-6. Without any global loads the kernel runs near 550 TFLOPS,
//     and copying a quarter fewer L2 bytes gains 2 %: less than half of the loads' cost
//     is L2 traffic, the rest is cp.async's stores, which share shared memory with
//     ldmatrix (176 bytes per mma.sync), and the waits. Nsight Compute at 8192: tensor pipe
//     83 % busy, shared-memory wavefronts 63 % of peak; per issued instruction a warp
//     waits 2.6 cycles for the busy tensor pipe, 2.5 on fixed-latency dependencies, 0.2
//     on memory and 0.15 at the barrier.
//   - What each tile costs beyond its K loop. At M = N = 4096 with K growing (the same
//     512 tiles, ./sgemm 14 -m 4096 -n 4096 -k K --no-verify), the clock-scaled fraction
//     of the ceiling is 55.4 % at K = 1024, 69.8 % at 2048, 78.5 % at 4096, 82.7 % at
//     8192, 85.9 % at 32768: a loop near 87 % plus about 8 us a tile outside it, the time
//     of 7-9 K steps (10 % of a tile at K = 4096, 5 % at 8192). The C stores are about
//     5 us of it (without them the kernel runs 6 % faster at 4096, 3 % at 8192: every
//     block of a wave writes its 128 KB at once, tensor cores idle), the pipeline's fill
//     most of the rest. And the last wave is half empty at 8192 (2048 tiles are 15.5
//     waves of 132; 512 are 3.9 at 4096).
// So even with the C stores free this kernel would reach about 65-66 % of cuBLAS at
// 4096 and 63-64 % at 8192; what is left is the copies' 7-8 points inside the loop and the
// ldmatrix traffic (128 bytes per mma.sync), which only wgmma removes.
//
// Small problems: at 1024 the tuned tiles are 32 blocks for 132 SMs, and the kernel ran at
// 93 TFLOPS, 43-44 % of cuBLAS. Where they would leave more than half the SMs without a
// tile, the launcher takes 128x128 blocks, two per SM, and where even those would, 128x64
// blocks of eight 32x32 warp tiles, two per SM, all from the tuner's list. Timed with
// build/sgemm_tune --stage 14 (every block shape at each size):
//   size  tuned tiles  128x256        128x128        128x64
//   1024      32        93 (43 %)     136            155 (72-74 %)
//   1280      50       154 (49 %)     220 (70 %)     177 (56 %)
//   1536      72       225 (53 %)     218 (51 %)     191 (44 %)
//   1792      98       307 (70 %)     299 (69 %)     201 (47 %)
//   2048     128       396 (69 %)                    270 (47 %)
// (TFLOPS, % of cuBLAS.) The small blocks read four times the L2 bytes per mma.sync
// (192) and lose as soon as the large ones fill the GPU. The first rule, smaller tiles
// below three quarters of the SMs, took 128x64 blocks at 1536 and 1792: against it,
// ./sgemm 14 at 1280, 1536 and 1792 went from 177, 192 and 257 TFLOPS (57, 44 and 60 % of
// cuBLAS) to 220, 224 and 306 (70, 52 and 70 %).
//
// The last wave: at 3072, 288 tiles are two full waves and 24 tiles, so for a third of
// the time 108 SMs wait (50.5 % of cuBLAS, against 62 % at 4096). Where the last wave
// would use at most half the SMs and each tile's K loop is long enough (plan_tail_split
// in 14_multistage.cuh), each of its tiles is split along K into as many blocks as fill
// the SMs once: 24 tiles in 5 parts at 3072, 8 in 16 at 5120. Each part writes its sums
// to a slot of a buffer taken from the stream's memory pool, and a second kernel adds
// each tile's parts in a fixed order and applies alpha and beta, so the result does not
// depend on which block finished first. ./sgemm 14 against the same kernel without the
// split, one to six runs each (TFLOPS, % of cuBLAS):
//   3072                 367-376 (53.9-54.2 %)  against 347-354 (50.4-50.9 %)
//   5120                 426-430 (59.0-59.2 %)  against 401-411 (55.4-55.6 %)
//   2176 x 2048 x 2048   286-287 (51.8 %)       against 238-239 (43.0-43.3 %)
//   2100 x 2040 x 2040   255 (47.6 %)           against 216 (40.2 %)  (rows aligned)
//   2099 x 2041 x 2039    91 (91.0 %)           against  66 (66.6 %)  (any shape)
// Split too eagerly, short K loops lost up to 14 points (3072 x 3072 x 512: 46.0 %
// against 60.4 %): each part pays a pipeline fill and moves its partial tile out and back,
// and adding the parts up is one more launch. At 4096 and 8192 the last wave is 88 % and
// 52 % full, nothing is split, and the kernel is compiled without the split
// (kSplitTail): compiled with it, whole tiles lost 1-1.3 points of cuBLAS at both sizes.
// The first version added the parts up with a block per tile: 40 us at 3072 (24 blocks
// reading 15 MB), where a block per 1024 values takes 9 us.
//
// Off the tile grid, where K and N are multiples of 8 (./sgemm 14 -m 4000 -n 4000
// -k 4000, with 4096 in the same run): 421 TFLOPS, 63.5 % of cuBLAS, against 487
// (64.7 %) at 4096; cuBLAS loses about as much there. 4095 (rows not 16-byte aligned)
// takes the register path: 126 TFLOPS, where cuBLAS too falls to 154. Tried for the
// edges and dropped: testing every chunk against the edges in every tile (4-5 points of
// cuBLAS lower with an edge in M or K; behind a branch taken only at the edges, no
// faster, since the branch splits the copies from the mma.sync they interleave with);
// moving edge blocks back inside the matrix instead of clamping their reads (the same
// within noise at 4000 and 8000, and only possible where M and N are at least a block).
//
// Tried and dropped, each against this kernel in the same runs on the H100 (% of cuBLAS,
// launch by launch; most by sgemm_tune, three passes):
//   - Fragments: double-buffering them paid (+4 %); streaming B to avoid spills (-5 %)
//     and 64x32 warp tiles (-15 %, more shared loads per mma.sync) did not.
//   - Larger warp tiles, fewer shared bytes per mma.sync (157 against 176): 160x256
//     blocks of 80x64 warps (A's fragments not double-buffered, to fit 246 registers)
//     60.5-60.8 % against 61.5-61.6 % at 8192, 51.7-51.9 % at 4096 (3.2 waves); 192x256
//     blocks spill (43-45 %). Shared memory is not what is short (61 % of its peak).
//   - The order of the mma.sync, at 8192 against 61.4-61.7 %: B fixed along a column
//     60.6-60.8 %; every other row backwards, so one B fragment carries over, 60.8-60.9 %;
//     the two warps of each SM sub-partition on the same rows of A, 61.3-61.5 %. (On
//     registers alone, A fixed along a row as here sustains the most: 618-633 TFLOPS.)
//   - cp.async with the L2::256B prefetch hint: the same (61.2-61.9 % against 61.4-61.7 %).
//   - How often the warps meet. mbarriers in place of the barrier, so a warp waits only
//     for the copies or the buffer it needs (cp.async.mbarrier.arrive on a "full" one per
//     buffer, an arrival on an "empty" one after a tile's last ldmatrix): 58.6-58.8 %
//     against 61.5-62.0 % at 8192 (polling with test_wait 58.1-58.3 %, one arrival per
//     warp 56.3-56.5 %). A barrier every two k16 steps 59.9-60.2 % (a tie at 4096),
//     every step 58.4-58.6 %; 128x256x128 blocks with 2 stages, half the barriers,
//     50-53 % against 62-65 %.
//   - TMA (sm_90a) in place of cp.async: one thread copies a tile with five
//     cp.async.bulk.tensor (the TMA's 128-byte swizzle is this file's), the warps wait on
//     an mbarrier per buffer. Alone 59.4-60.3 %; with B multicast to a cluster of two,
//     which cuts the L2 reads by a third, 58.1-58.9 %; either with a barrier per tile in
//     place of per-warp arrivals 54.1-57.3 %; against 61.4-61.9 %. What the cp.async
//     pipeline does well, pieces landing while the mma.sync run and one barrier keeping
//     the warps together, the bulk copies lose.
//   - Copies by warps of their own. One ninth warp cannot keep 64x64 warp tiles: a
//     block's warps are dealt to the SM's four schedulers in turn, so ptxas gives 288
//     threads 168 registers at most, and the loop spills. A producer warpgroup with
//     setmaxnreg (sm_90a: 40 registers for it, 232 for the eight others): 54.0-54.2 % at
//     4096 and 53.4-53.7 % at 8192 against 61.6-61.8 and 61.5-61.7 %.
//   - A persistent grid (block b takes tiles b, b + 132, ...). Starting the next tile's
//     copies before the epilogue: the same within noise. One ring of copies running
//     across a block's tiles: 57.7-57.8 % at 4096 and 56.7-56.9 % at 8192 against
//     61.8-62.0 and 61.5-61.9 %, from 5 % more instructions (69.8 million against 66.4,
//     Nsight Compute) spent counting K tiles to know when the copies move on. With that
//     count out of the loop (a tile's K loop split in two: the last two K tiles copy for
//     the next tile) the ring beats this kernel by half a point, 62.6-62.7 % against
//     61.7-62.2 % and 61.9-62.3 against 61.5-62.0 % (244 registers): not worth a second
//     kernel with its own edges and split tail. The split alone, without the ring,
//     61.7-61.8 and 61.0-61.2 %: the half point is the next tile's copies overlapping
//     the epilogue. Tiles handed out by an atomic counter: 42 and 47 %.
//   - Part of C through shared memory, written out during the next tile's first K steps
//     so that the tensor cores wait for less of it (all 128 KB do not fit beside the
//     buffers). On the split ring above, a quarter of C 59.0-59.2 % and 57.9-58.1 %, half
//     59.9-60.0 and 58.4-58.5 %: the same instructions at 7.9 cycles each against 7.4,
//     memory waits (long scoreboard) up from 0.18 to 0.60 cycles per instruction and
//     dispatch stalls from 0.05 to 0.34 (not C's beta path: without it, 58.9-59.1 %).
//     On the first ring, counting in the loop, a quarter of C had gained a point.
//     Pipelines that leave room for all of C lose more than C costs: two buffers of
//     64-deep K steps 45.2 %, four of 32-deep 56.6-57.4 %, against 61.5-61.6 %.
//   - The C stores as streaming stores (st.global.cs), or staged in shared memory and
//     written as whole 1 KB rows of float4: 61.0-61.1 % at 8192 for both, against
//     61.1-61.4 %. Staggering the first wave so that every block's C does not leave at
//     once (sleeps of 0.5-2 us by block): a few tenths of a point at most. C staged in
//     the freed buffers and written by bulk asynchronous copies (sm_90's
//     cp.async.bulk, a 1 KB row each), so that a block leaves once they have read
//     shared memory and the next one starts while the writes drain: 62.3-62.4 % at 4096
//     and 61.4-61.8 % at 8192, against 61.8-62.0 and 61.4-62.0 % (./sgemm 14, three
//     rounds, alternating): half a point at 4096 only, not worth a Hopper-only path in
//     this chapter. The writes and the next blocks' first copies still leave every SM at
//     once and share the L2.
//   - The ring unrolled by its depth, every buffer offset a constant: 226 instructions
//     per K tile against 239, and 60.4-60.5 % at 4096 and 60.1-60.7 % at 8192 against
//     61.5-61.6 and 61.2-61.8 %: fewer instructions did not make the loop faster.
//   - Stream-K (Osama et al., 2023) for the last wave, as a stage 15, the tiles left
//     after the full waves split along K and summed in a fixed order: on a persistent grid
//     59.9-60.3 % at 8192 against 61.0-61.7 % (2-6 points lower at 4096); this kernel for
//     the full waves and a second one for the remainder in fifths of a tile, 61.4-61.5 %
//     against 61.1-61.2 %. Each piece refills the pipeline and moves a 128 KB partial
//     tile out and back; where the last wave is emptier the simpler split above pays.
//
// Shapes: any M, N, K >= 1. Needs sm_80.
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

}  // namespace

void launch_multistage(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                       float* c, cudaStream_t stream) {
    const int sms = current_sm_count();
    if (tiles_reach_half_the_sms<TunedConfig>(problem.shape, sms))
        launch_bf16_tile_config<TunedConfig>(problem, a, b, c, kTunedGroupRows, stream);
    else if (tiles_reach_half_the_sms<MediumProblemConfig>(problem.shape, sms))
        launch_bf16_tile_config<MediumProblemConfig>(problem, a, b, c, kSmallerTilesGroupRows, stream);
    else
        launch_bf16_tile_config<SmallProblemConfig>(problem, a, b, c, kSmallerTilesGroupRows, stream);
}

}  // namespace sgemm
