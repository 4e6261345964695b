// Stage 16 — more math per byte: two warpgroups and 128x256 tiles.
//
// Builds on stage 15 (15_tma_wgmma.cu, whose kernel template it instantiates).
//
// The idea: stage 15's 128x128 tile brings 32 KB into shared memory per K tile for 2.1
// MFLOP; a 128x256 tile brings 48 KB for twice the work, a quarter less traffic from L2
// per FLOP (stage 14's chapter found L2 its first limit). Its FP32 accumulators (128 KB)
// no longer fit one warpgroup, so two warpgroups split its rows: each holds a 64x256
// tile, 128 registers a thread, and issues m64n256k16, the widest wgmma, whose B slice
// both warpgroups read from the same shared memory.
//
// What changed since stage 15: only the template arguments of its kernel
// (15_tma_wgmma.cuh): TmaWgmmaConfig<128, 256, 4, 2>, 256 threads, four 48 KB stages
// (193 KB of shared memory, one block per SM). The barrier after each K tile now waits for
// both warpgroups before thread 0 refills the stage.
//
// Prediction: the tensor cores were waiting on shared memory and on the one warpgroup's
// wait; with two warpgroups one issues while the other waits, and the bytes per FLOP
// fall by a quarter: 10-15 % over stage 15, about cuBLAS at 8192.
//
// Measured by make results on the H100 80GB HBM3: 638.8 TFLOPS at N = 4096 (94.9 % of cuBLAS bf16),
// 702.1 at 8192 (100.6 %).
// About 10 % over stage 15, the low end of the prediction, and 101.1 % of cuBLAS at 16384;
// 65-68 % of the wgmma ceiling. 154 registers. At 1024 it falls to 58.6 % (stage 15
// 83.9 %): 32 tiles of 128x256 leave 100 of the 132 SMs without one.
//
// What it still does: every thread waits at a barrier each K tile, so the tensor cores
// idle while the slowest warp catches up and while thread 0 issues the next copies; the
// C stores (128 KB a tile) stop the tensor cores too. Stage 17 takes the copies off the
// consumers' path.
//
// Shapes: any M; K and N multiples of 8. Needs sm_90a.
#include "16_two_warpgroups.hpp"

#include "15_tma_wgmma.cuh"

namespace sgemm {

void launch_two_warpgroups(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                           cudaStream_t stream) {
    launch_tma_wgmma_kernel<TmaWgmmaConfig<128, 256, 4, 2>>(problem, a, b, c, 16, stream);
}

}  // namespace sgemm
