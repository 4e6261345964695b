// Stage 28 — FP8 with fine-grained scales: DeepSeek-V3's recipe.
//
// Builds on stage 27 (27_fp8_promoted.cu): its promotion, with the scales of blocks in
// place of one a tensor (28_fp8_block_scaled.cuh; diff it against 27's TensorScales).
//
// The idea: e4m3 holds 4 bits of exponent, a range of 2^17 between its smallest normal
// and its largest value; one scale a tensor lets an outlier anywhere push the rest
// towards zero. The recipe scales small blocks instead (quantized as
// src/verification/fp8_operands.cpp does, scale = amax / 448 a block): the activations, A,
// one scale a row per 128 of K; the weights, B, one per 128 x 128 block (or 1 x 128 too:
// Fp8Scaling::rows_and_rows). A K block of 128 then has one scale a row of A and one a
// column of B, constant over the block: so the block's MMA sums, before they are promoted,
// need only be multiplied by scale_a(row) x scale_b(column) (stage 27 added them as they
// were). The promotion that buys accuracy pays for the scales' multiplications too: an FMA
// in place of the FADD.
//
// Where the scales come from: the producer has TMA load A's 128 scales of each K block (a
// row of cuBLASLt's [K / 128][M] layout, described by a tensor map of its own) into the
// stage beside A's and B's blocks, and B's 1 x 128 ones of the tile's columns where B has
// them; each consumer thread reads its two rows' from the stage as it issues the block (its
// columns' as it promotes). B's 128 x 128 scales, one or two a K block, it loads from global
// memory as it issues the block's wgmmas; they are used a K block later.
//
// Prediction: within a point or two of stage 27 with the recipe's scales (an FMA where
// there was an FADD, a multiply and two shared loads a K block); with 1 x 128 scales on B,
// 32 more shared loads and multiplies a thread a K block: a few points more.
//
// Measured by make results on the H100 80GB HBM3: 1101.0 TFLOPS at N = 4096 (98.0 % of
// cuBLASLt FP8), 1112.2 at 8192 (96.0 %).
// 90 % of stage 27's TFLOPS. On four of DeepGEMM's six (N, K) at M = 4096
// (results/h100-80gb-hbm3/experiments/fp8_tiles/deepgemm_stages_27_28.csv): 94.3-102.5 % of
// cuBLASLt with the recipe's scales, 90.2-97.4 % with 1 x 128 on both. A's scales copied
// without a tensor map (cp.async.bulk) measured 89.9 and 87.1 % at 4096 and 8192, by TMA 96.6
// and 96.4 %; B's 128 x 128 ones by TMA too, 92.8 and 89.5 %: docs/notes/27_fp8_promoted.md.
//
// Shapes: stage 26's. Fp8Scaling::rows_and_blocks and rows_and_rows. sm_90a.
#include "28_fp8_block_scaled.hpp"

#include <stdexcept>

#include "28_fp8_block_scaled.cuh"

namespace sgemm {

void launch_fp8_block_scaled(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                             __nv_bfloat16* d, cudaStream_t stream) {
    // Five stages: six and the scales would pass the 227 KB of shared memory a block may have.
    using RowsAndBlocks = Fp8Config<128, 5, 2, RowScalesOfA<Fp8Config<128, 5, 2>>::kBytes>;
    using RowsAndRows = Fp8Config<128, 5, 2, RowAndRowScales::kBytes<Fp8Config<128, 5, 2>>>;
    switch (scaling) {
        case Fp8Scaling::rows_and_blocks:
            return launch_fp8_kernel<RowsAndBlocks, PromotedAccumulation<RowAndBlockScales>>(problem, operands, d, 8,
                                                                                              stream);
        case Fp8Scaling::rows_and_rows:
            return launch_fp8_kernel<RowsAndRows, PromotedAccumulation<RowAndRowScales>>(problem, operands, d, 8,
                                                                                          stream);
        case Fp8Scaling::tensor:
            break;
    }
    throw std::invalid_argument("stage 28 takes the scales of blocks (1x128-128x128 or 1x128-1x128)");
}

}  // namespace sgemm
