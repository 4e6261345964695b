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
// measured below), and any shape. Where K and N are multiples of 8, every row starts
// 16-byte aligned and cp.async still applies: K's remainder is copied first, as a tile
// that starts before K = 0 and is zero-filled there, so the main loop only ever sees
// whole tiles; copies past the bottom or right edge read the last row or chunk, whose
// results are never stored. Any other shape loads through registers with every value
// tested. Whole tiles pay nothing for either.
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
// about 3.7-3.8x stage 13, and short of the prediction. Per clock it is closer: the SMs
// counted 1553 and 1468 MHz over those launches and 1815 over the ceiling's (the third
// results table), so per clock this kernel does 78.6 and 84.3 % of what mma.sync does.
// The H100 runs power-limited, so absolute figures move by several percent from run to
// run (the make results before, of the same kernel at these sizes: 436.7 and 440.3
// TFLOPS, 62.0 % and 61.6 % of cuBLAS, 67.5 % and 68.0 % of a 648 TFLOPS ceiling), and
// the tuner takes the median of three passes. The winner: 128x256x64 blocks of eight
// 64x64 warps, 3 stages, one block per SM, 228 registers, 144 KB of shared memory (the
// first version, 128x128x32 blocks two per SM, measured 410 and 388 TFLOPS).
//
// Those figures are timed launch by launch, where stage 14 and cuBLAS share one clock.
// Timed in turns of 0.5 s instead (--timing blocks, src/timing.hpp; the fourth results
// table), each runs at the clock its own power draw allows, and cuBLAS, which draws more
// per clock, loses more: 447.6 TFLOPS at 4096 (66.1 % of cuBLAS, 69.3 % of the ceiling;
// the SMs at 1617 MHz against cuBLAS's 1450) and 471.4 at 8192 (70.2 %, 73.0 %; 1527
// against 1355 MHz); the runs before, 444.6 (66.0 %, 68.6 %) and 467.0 (67.6 %, 72.1 %),
// 440.8 (66.3 %, 67.5 %) and 463.0 (70.9 %, 70.9 %). Measurements
// once stopped at 200 launch pairs, which at 4096 is 0.1 s, a burst before the power cap
// settles: such runs of the version with raster groups of 4 read up to 489 TFLOPS, 65.1 %
// of cuBLAS and 75.7 % of the ceiling (this version, ./sgemm 14 4096 --seed 80 --reps
// 200: 462 TFLOPS, 62.8 %, 71.2 %, against 439, 62.0 %, 68.5 % over a full second).
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
//     (6.2-7.3 TB/s). 128x128 blocks need 64 bytes from L2 per mma.sync and drew
//     6.35 TB/s at 431 TFLOPS, 88 % of it; 128x256 blocks need 48 (5.2 TB/s at 475
//     TFLOPS), and they are the largest tile whose accumulators fit in one SM's
//     register file, so this path tops out near 600 TFLOPS even at full L2 speed.
//   - The loop. The 8-warp blocks lost to 128x128 ones until the loop was rebuilt:
//     ptxas had gathered the next step's ldmatrix into a burst after the mma.sync, the
//     cp.async addresses were recomputed every tile (191 instructions per 64 mma.sync,
//     137 now), and every warp drained at the same barrier. Nsight Compute, tensor pipe
//     busy at 4096: 70.9 % for the old loop, 75.7 % with the loads spread and the
//     addresses precomputed, 80.5 % once the copies went out in pieces (barrier stalls
//     0.48 -> 0.26 and long-scoreboard stalls 0.66 -> 0.31 cycles per instruction). A
//     register-only copy of the loop's instruction mix reaches the full 640 TFLOPS.
//   - Power. The H100 holds its 700 W cap by lowering the SM clock, and ./sgemm prints
//     the clock the SMs themselves count over the timed launches (src/sm_clock.hpp).
//     Launch by launch, this kernel and cuBLAS share one clock: 1571 MHz at 4096 and
//     1476 at 8192 (./sgemm 14 N --seed 121), while the register-only mma.sync ceiling's
//     fastest launch ran at 1816 MHz, not the 1980 the GPU reaches on CUDA-core work:
//     the tensor cores do not get the top clock even on constant operands. Scaled to the
//     shared clock the ceiling is 560 and 526 TFLOPS; this kernel (437.0 and 458.2
//     TFLOPS there) does 78.0 and 87.1 % of it, cuBLAS's wgmma kernel (708.0 and 744.6)
//     1.26x and 1.42x. So 65 % of cuBLAS launch by launch needs 82 % of mma.sync's rate
//     per clock at 4096 and 92 % at 8192, and 75 % of the ceiling (485 TFLOPS) 87 and
//     92 %: at 8192 more than this loop does even with no tile boundary at all (below).
//     nvidia-smi cannot tell this: it samples the clock, and over 4 s in turns at 4096 its
//     readings every 50 ms ranged 1380-1845 MHz while the SMs counted 1603 MHz over the
//     stage's turns and 1445 over cuBLAS's (./sgemm 14 4096 --timing blocks --time-budget
//     4 --seed 121). In turns each runs at its own clock (1617 against 1450 MHz at 4096,
//     1527 against 1355 at 8192 in make results), which is why the ratio rises there.
//     On inputs of all ones, which flip no bits in the datapaths, it runs at 1.86 GHz
//     and 548 TFLOPS (nvidia-smi; cuBLAS gains as much). `sgemm peak` measures that price alone:
//     mma_sync_bf16_sustained, this warp loop on random bf16 in shared memory with no
//     global memory, sustains 574-594 TFLOPS after 2 s at the cap, 88-92 % of the
//     ceiling. 75 % of the ceiling (486) would leave the copies, the epilogue and the
//     last wave 16-18 % of that; they take 22-25 % (433.6-453.7 TFLOPS at 8192 in make
//     results, against 574-594 sustained).
//   - What the rest costs, from timing-only variants: without any global loads the
//     kernel runs near 550 TFLOPS (tensor pipe 92 % against 86 %), and copying a quarter
//     fewer L2 bytes gains 2 %, so the loads cost a sixth, less than half of it L2
//     traffic; the rest is cp.async's stores, which share shared memory with ldmatrix
//     (176 bytes per mma.sync), and the waits. Without its C stores the kernel runs 6 %
//     faster at 4096 and 3 % at 8192: every block of a wave writes its 128 KB of C at
//     the same moment, tensor cores idle. And the last wave is half empty at 8192 (2048
//     tiles are 15.5 waves of 132; 512 are 3.9 at 4096).
//   - What each tile costs beyond its K loop, from the clock-scaled fraction of the
//     ceiling at M = N = 4096 as K grows (./sgemm 14 -m 4096 -n 4096 -k K --seed 141
//     --no-verify; the same 512 tiles, a K loop K / 64 steps long): 55.4 % at K = 1024,
//     69.8 % at 2048, 78.5 % at 4096, 82.7 % at 8192, 85.0 % at 16384, 85.9 % at 32768.
//     That is a loop near 87 % of mma.sync per clock plus about 8 us a tile outside it,
//     the time of 7-9 K steps: 10 % of a tile at K = 4096, 5 % at 8192 (8192 x 8192 x K
//     agrees: 75.9, 80.9, 84.4, 86.5 % at K = 2048 to 16384). The C stores would be
//     about 5 us of it (the 6 and 3 % above), the pipeline's fill most of the rest. Half
//     of it back would reach 65 % of cuBLAS at 4096; at 8192 the loop itself is short.
//   - What the copies and the barrier cost the loop. The same warp loop with its
//     operands already in shared memory, no copy and no barrier (the
//     mma_sync_bf16_warp_loop ceiling of ./sgemm peak, eight warps an SM as here) runs
//     at 94.2-94.5 % of the register-only rate per clock on the H100, where this
//     kernel's loop reaches about 87 % (above): the copies and the barrier take 7-8
//     points of it, feeding through ldmatrix 5.5-6. Nsight Compute at 8192 (--set full,
//     ./sgemm 14 8192 --profile): tensor pipe 83 % busy, shared-memory wavefronts 63 %
//     of peak; per issued instruction a warp waits 2.6 cycles for the busy tensor pipe,
//     2.5 on fixed-latency dependencies, 0.2 on memory and 0.15 at the barrier.
//
// Tried and dropped (same-run comparisons on the H100):
//   - Fragments: double-buffering them paid (+4 %); streaming B to avoid spills (-5 %)
//     and 64x32 warp tiles (-15 %, more shared loads per mma.sync) did not.
//   - The order of the mma.sync. On registers alone (random fragments that change
//     every step, 4 s each at 700 W), A fixed along a row as here sustains 618-633
//     TFLOPS, B fixed along a column 602-616, two k16 steps back to back on each
//     accumulator 616-627. In this kernel at 8192, against 61.4-61.7 % of cuBLAS (four
//     interleaved runs each): B fixed along a column, 60.6-60.8 %; every other row run
//     backwards, so that one B fragment carries over between rows, 60.8-60.9 %; the
//     two warps of each SM sub-partition on the same rows of A instead of the same
//     columns of B, 61.3-61.5 %.
//   - cp.async with the L2::256B prefetch hint: the same at 8192 (61.2-61.9 % of
//     cuBLAS against 61.4-61.7 %, four interleaved runs each).
//   - How often the warps meet. mbarriers (sm_80) in place of the barrier, so that a warp
//     waits only for the copies or the buffer it needs: each thread's copies arrive on
//     their buffer's "full" mbarrier as they land (cp.async.mbarrier.arrive), each
//     thread arrives on an "empty" one after its last ldmatrix of a tile, and a thread
//     waits for the full buffer it reads next and the empty one it copies into. At
//     8192, against 61.5-62.0 % of cuBLAS (four interleaved runs each): 58.6-58.8 %;
//     polling with test_wait instead of try_wait, 58.1-58.3 %; one arrival per warp on
//     the empty mbarriers, so that warps drift further apart, 56.3-56.5 %. Meeting more
//     often loses too: a barrier every two k16 steps, 59.9-60.2 %; every step,
//     58.4-58.6 %. At 4096 all were lower too but the barrier every two steps (62.7-63.4
//     % against 62.1-63.4 %), which loses 1.5 points at 8192. One barrier a tile it is.
//   - 128x256x128 blocks with 2 stages (half the barriers, the same 228 registers):
//     50-53 % of cuBLAS at both sizes, against 62-65 % in the same runs.
//   - TMA (sm_90a) in place of cp.async, as a stage 15: one thread copies a tile with
//     five cp.async.bulk.tensor (A, and B in four 64-column boxes, with the TMA's
//     128-byte swizzle, which is this file's), the warps wait on an mbarrier per buffer
//     and release it with one arrival each; and with B's boxes multicast to a cluster of
//     two blocks that share them, which cuts the L2 reads by a third. Against 61.4-61.9 %
//     of cuBLAS for this kernel in the same runs: TMA alone 59.4-60.3 %, multicast
//     58.1-58.9 % (two or three tiles in flight), either with one barrier per tile in
//     place of the per-warp arrivals 54.1-57.3 %; in turns, 64.4-65.0 % at 4096 and
//     65.9-68.5 % at 8192 against 65.8-66.3 % and 67.2-68.2 %. The copies' instructions
//     and L2 traffic are not what is left:
//     what the cp.async pipeline does well (its pieces land while the mma.sync run, and
//     one barrier keeps the warps together) the bulk copies lose.
//   - Copies by warps of their own, the eight others only ldmatrix and mma.sync, meeting
//     at named barriers (one "full" and one "empty" per buffer, bar.arrive and bar.sync),
//     so that the copies leave the loop without TMA. One ninth warp cannot keep 64x64
//     warp tiles: the register file is split among the SM's four schedulers and a
//     block's warps are dealt to them in turn, so the scheduler with three warps sets the
//     limit, and ptxas gives 288 threads at most 168 registers (16384 / 3 / 32, rounded
//     down to 8; the loop spills 376 bytes). A third warpgroup, of producers, with Hopper's
//     setmaxnreg (sm_90a: 40 registers for them, 232 for the consumers, no spills), each
//     tile's copies in one go from 128 threads: 54.0-54.2 % of cuBLAS at 4096 and 53.4-53.7
//     % at 8192 against 61.6-61.8 and 61.5-61.7 % (sgemm_tune, three passes launch by
//     launch, 3 and 4 stages; in turns, 3 stages, 60.2 and 64.6 % against 65.5 and 67.1 %).
//     Taking the copies out of the consumers' loop cost more than it saved.
//   - A persistent grid that starts the next tile's copies before the epilogue: the
//     same as one tile per block, within noise.
//   - A persistent grid with one ring of copies running across a block's tiles, and
//     part of C handed to shared memory at a tile's end (64 rows of a 128x256 tile, a
//     row-padded 66 KB beside the ring; or 32 rows) and written out as float4 by every
//     thread during the next tile's first K steps, one piece after each barrier, so
//     that the tensor cores wait for less of C. sgemm_tune, three passes launch by
//     launch, % of cuBLAS at 4096 and 8192, against 61.8-62.0 and 61.5-61.9 % for this
//     kernel: the persistent ring alone 57.7-57.8 and 56.7-56.9 %, a quarter of C through
//     shared memory 58.9-59.0 and 57.8-58.0 %, half 56.8-56.9 and 55.2-55.4 % (248-251
//     registers, no spills); in turns 62.7, 64.2 and 62.2 % at 4096 against 65.8 %, and
//     64.1, 66.9 and 65.8 % at 8192 against 70.6 %. The quarter paid a point over the
//     same persistent kernel, but that kernel lost four to the one-tile blocks it
//     replaced. Why, Nsight Compute showed on a second version (block b takes tiles b,
//     b + 132, ...; at 4096): the same 7.3 cycles per issued instruction, but 5 % more
//     instructions (69.8 million against 66.4) and 4 % more cycles. They were the ring's
//     count of K tiles, tested in every K tile to know when the copies move on to the
//     next tile. Moved out of the loop (a tile's K loop split in two: the first K / 64 - 2
//     K tiles copy for this tile, the last two for the next), the persistent ring beats
//     this kernel by half a point: 62.6-62.7 % of cuBLAS against 61.7-62.2 % at 4096 and
//     61.9-62.3 % against 61.5-62.0 % at 8192 (244 registers; three sgemm_tune runs of
//     three passes each), 486 thousand cycles against 491 thousand. Half a point does not
//     pay for a second kernel beside this one, with its own edges and split tail; not
//     kept. A quarter of C through shared memory on top of that ring lost 3 points
//     (59.0-59.2 % and 57.9-58.1 %; half of C, 59.9-60.0 and 58.4-58.5 %): the same
//     instruction count, 7.9 cycles per issued instruction against 7.4. Per issued
//     instruction the stores' queue (LG throttle) waited 0.17 cycles less, but waits on
//     memory (long scoreboard, which includes the cp.async waits) rose from 0.18 to 0.60
//     cycles and dispatch stalls from 0.05 to 0.34 (Nsight Compute at 4096). Not C's
//     beta path: stores without it measured 58.9-59.1 % at 4096, against 58.6-58.8 %
//     with it in the same runs. Tiles handed out by an atomic counter instead of
//     b + 132 j measured 42 and 47 % (not looked into).
//   - The other half of that split without the ring: the last two K tiles copy nothing,
//     and the others skip the test against the last tile. 61.7-61.8 % of cuBLAS at 4096
//     and 61.0-61.2 % at 8192, against 61.9-62.2 and 61.5-61.7 % (230 registers against
//     228; sgemm_tune, three passes): what the ring gains is the next tile's copies during
//     the epilogue, not a shorter loop.
//   - The ring unrolled by its depth, so that every buffer offset is a constant in the
//     instruction: 226 instructions from a K tile's first mma.sync to its last, against
//     239 (SASS), and 232 registers against 228; 60.4-60.5 % of cuBLAS at 4096 and
//     60.1-60.7 % at 8192, against 61.5-61.6 and 61.2-61.8 % (sgemm_tune, three passes
//     launch by launch, with 3 and 4 stages): fewer instructions did not make the loop
//     faster.
//   - Staggering the first wave, so that every block's 128 KB of C does not leave at the
//     same moment: the first 132 blocks slept (blockIdx % 8) x 0.5, 1 or 2 us before
//     starting, a lag the blocks after them on each SM inherit. Against 61.9 % of cuBLAS
//     at 4096 and 61.6-61.8 % at 8192 (three interleaved runs each): 0.5 us 62.0-62.2 %
//     and 61.6-61.9 %, 1 us 62.3-62.4 % and 61.8-62.0 %, 2 us 61.7-62.0 % and 61.8-61.9 %.
//     A few tenths of a point, not worth a sleep: the stores colliding across SMs are not
//     what the epilogue costs.
//   - The C stores as streaming stores (st.global.cs), or staged in shared memory and
//     written as whole 1 KB rows of float4: 61.0-61.1 % of cuBLAS at 8192 for both,
//     61.1-61.4 % for the float2 stores (three runs each).
//   - Stream-K (Osama et al., 2023) for the last wave, as a stage 15: the tiles left
//     after the full waves split along K, each tile's parts summed in a fixed order
//     through a workspace. At 8192 (15 waves and 68 tiles): a persistent grid, with equal
//     shares of K iterations or shares cut at fifths of a tile, 59.9-60.3 % of cuBLAS
//     against 61.0-61.7 % (2-6 points lower at 4096; the persistent grid alone,
//     splitting nothing, takes 5 % more cycles: 3.86 million against 3.67);
//     this kernel for the full waves, then a second one dealing out the remainder in
//     fifths of a tile, 61.4-61.5 % against 61.1-61.2 % in four runs. Each piece refills
//     the pipeline and moves a 128 KB partial tile out and back, and at 4096 (116 tiles
//     left for 132 SMs) no cut pays. Where the last wave is emptier, a simpler split
//     does (below).
//   - Larger warp tiles, to read fewer shared-memory bytes per mma.sync: 160x256 blocks
//     of eight 80x64 warp tiles (157 bytes per mma.sync against 176; A's fragments
//     loaded once per step, not double-buffered, to fit 246 registers; 255 with edges)
//     measured 60.5-60.8 % of cuBLAS at 8192 against 61.5-61.6 % (three passes each;
//     70.1 % against 68.7 % in one pass in turns), and at 4096, where 416 such tiles are
//     3.2 waves, 51.7-51.9 %; 192x256 blocks of 96x64 warp tiles spill (43-45 %).
//     Shared memory is not what is short: Nsight Compute at 8192 puts this kernel's
//     shared-memory wavefronts at 61 % of peak, its tensor pipe at 86 % busy.
// All 128 KB of C do not fit beside the three 48 KB buffers, and the pipelines that
// leave room for it lose more than C costs (sgemm_tune, two passes, % of cuBLAS at 4096
// and 8192: two buffers of 64-deep K steps 45.2 and 45.2-45.3 %, four of 32-deep
// 57.3-57.4 and 56.6 %, against 61.6 and 61.5-61.6 %).
// What is left: the persistent ring above is worth half a point, and C through shared
// memory, as tried, costs more than it saves. Nothing here reaches the 92 % of
// mma.sync's rate per clock that 65 % of cuBLAS needs at 8192 launch by launch: that
// takes the copies' 7-8 points back inside the loop. Past that, the ldmatrix traffic
// (128 bytes per mma.sync), which only wgmma removes.
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
