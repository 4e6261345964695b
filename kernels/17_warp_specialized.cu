// Stage 17 — warp specialization: a producer warpgroup, two consumers, full and empty barriers.
//
// The idea: in stage 16 the warps that multiply are also the warps that wait for copies
// and meet at a barrier every K tile. Here the roles are split. A producer warpgroup (one
// of its threads) only issues TMA copies; two consumer warpgroups only wait for data and
// multiply. They hand the ring's stages back and forth through two mbarriers a stage:
//   full[s]:  the copy engine's bytes for stage s have landed (expect_tx, as in stage 15);
//             the consumers wait on it.
//   empty[s]: both consumers are done with stage s (each arrives once its wgmmas that
//             read it have finished); the producer waits on it before refilling s.
// Nobody waits on a barrier of the whole block any more: a consumer that is ahead keeps
// multiplying, and the producer runs up to four K tiles ahead, into the next tile too.
// setmaxnreg (common/wgmma.cuh) hands registers from the producer (down to 40) to the
// consumers (up to 232); the SASS shows both (USETMAXREG).
//
// The kernel (17_warp_specialized.cuh, shared with stages 18-20): 384 threads, 128x256
// tiles, each consumer a 64x256 half, four 48 KB stages, one CTA per tile in raster order,
// C from registers as in stage 16.
//
// Prediction: the consumers' barrier wait and thread 0's copy issue were a few percent of
// each K tile; taking them off should bring 3-5 %.
//
// Measured on the H100 (make results): 633.7 TFLOPS at N = 4096, 94.0 % of cuBLAS BF16
// (93.4 % in turns), 64.9 % of the wgmma ceiling; 700.1 at 8192, 99.9 % (95.3 % in
// turns); 727.0 at 16384, 100.8 %: no better than stage 16, short of the prediction.
// What stops the tensor cores is not in the K loop: the same kernel with its C stores
// left out (timing only) ran at 106.9 % of cuBLAS at 4096 and 106.5 % at 8192. Writing the
// 128 KB FP32 tile from registers costs about 10 % at 4096 and 5 % at 8192, while every
// SM stores at once and its tensor cores wait. Stage 19 takes that on.
//
// Registers: ptxas compiles the whole kernel within the 168 a thread that
// __launch_bounds__(384, 1) allows; the consumers hold 128 accumulators and fit, and the
// extra registers setmaxnreg grants them go unused (an epilogue that kept 64 more values
// live spilled: docs/notes/19_persistent.md).
//
// Shapes: any M; K and N multiples of 8. Needs sm_90a.
#include "17_warp_specialized.cuh"

namespace sgemm {

void launch_warp_specialized(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                             cudaStream_t stream) {
    launch_warp_specialized_kernel<WarpSpecializedConfig<128, 256, 4, 1, CStores::kFromRegisters, Schedule::kOneTilePerCta>>(
        problem, a, b, c, 16, stream);
}

}  // namespace sgemm
