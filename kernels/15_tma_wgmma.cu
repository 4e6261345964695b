// Stage 15 — TMA and wgmma: Hopper's own path from memory to the tensor cores.
//
// Builds on stage 14 (14_multistage.cu): its rasterized tiles and ring of K tiles, with
// Hopper's copy engine and warpgroup MMA in place of cp.async and mma.sync.
//
// The idea: stage 14 spends most of its instructions moving operands: every thread
// computes cp.async addresses, every warp loads its fragments with ldmatrix, and each
// mma.sync multiplies a 16x8x16 sliver. Hopper has an instruction for each of those jobs.
//   - TMA (common/tma.cuh): one thread hands the copy engine a tensor map and a tile's
//     coordinates; the engine copies the whole 128x64 box into shared memory, swizzled,
//     with zeros where the tile leaves the matrix, and counts its bytes against an
//     mbarrier (common/mbarrier.cuh) that the consumers wait on.
//   - wgmma (common/wgmma.cuh): a warpgroup (four warps) multiplies a 64x16 slice of A by
//     a 16xN slice of B, both read by the tensor cores straight from shared memory through
//     64-bit descriptors: no ldmatrix, no operand registers, and one instruction where
//     mma.sync needs N/8 per warp. It is asynchronous: wgmmas are committed as a group,
//     and the warpgroup waits for the group before it reuses what they read.
//   - B stays as the user gave it, row-major K x N: wgmma transposes 16-bit operands as it
//     reads them (common/hopper_tiles.cuh has both tiles' layouts and descriptors).
//
// The kernel (15_tma_wgmma.cuh): 128x128 tiles, one warpgroup of 128 threads holding the
// 128x128 FP32 tile (two m64n128 accumulators, 128 registers a thread), a ring of four
// 32 KB stages. Thread 0 fills the ring; each K tile is four k16 steps of two
// m64n128k16 wgmmas, committed as one group; the warpgroup keeps that group running,
// waits for the previous one, and after a barrier thread 0 refills its stage. C goes out
// straight from the accumulators, as float2, with alpha and beta.
//
// Prediction: the same tile and pipeline as stage 14 but without its copy and ldmatrix
// overhead (its loop ran at 87 % of mma.sync's rate per clock), on a unit whose ceiling
// is 1.5x mma.sync's (978 against 646 TFLOPS, ./sgemm peak): 1.3-1.5x stage 14, near
// 600 TFLOPS, 85-90 % of cuBLAS.
//
// Measured by make results on the H100 80GB HBM3: 574.0 TFLOPS at N = 4096 (85.9 % of cuBLAS bf16),
// 619.2 at 8192 (93.2 %).
// 1.32x stage 14 at 4096 and 1.40x at 8192, as predicted; a few points less in turns
// (results.md). 154 registers, 129 KB of shared memory, HGMMA in the SASS and no local
// memory. Already ahead of every mma.sync kernel cuBLASLt has (59-60 %, make survey), with
// one warpgroup per SM that waits on its own copies: the next stages give the tensor cores
// more work per byte and take the waiting off them.
//
// Shapes: any M; K and N multiples of 8 (TMA reads rows that start 16-byte aligned). The
// driver runs other shapes on zero-padded copies of the operands, timed with the stage
// (common/padded_launch.cuh), as it does for every stage to 22; stages 20, 23 and 24
// choose for themselves.
// Needs sm_90a.
#include "15_tma_wgmma.hpp"

#include "15_tma_wgmma.cuh"

namespace sgemm {

void launch_tma_wgmma(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                      cudaStream_t stream) {
    launch_tma_wgmma_kernel<TmaWgmmaConfig<128, 128, 4, 1>>(problem, a, b, c, 16, stream);
}

}  // namespace sgemm
