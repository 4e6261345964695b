// The FP32 track on tensor cores: which kernel takes a shape, by a model of each kernel's
// time. Four kernels are weighed:
//   stage 22's: both operands split by a pre-pass, 128 x 128 tiles in stacks of 256 x 128,
//     one stack a cluster of two SMs at a time;
//   stage 23's: B split in registers (read once, as FP32), A's rows by a pre-pass, C^T in
//     tiles of 128 columns by 64 rows, K cut evenly among the SMs (stream-K);
//   stage 24's: A split in registers, B's columns by a pre-pass, tiles of 128 rows by 64
//     columns, K cut evenly among the SMs; K a multiple of 4 (TMA reads A's rows);
//   stage 10's kernel on the CUDA cores, in the fp32 track's plan (dispatch/fp32.cpp) among
//     those whose chains are at most 1.1x stage 10's own plan's (kLongestChainOverOwn), whose
//     error matched SGEMM's or was below it at every problem of the accuracy table (SGEMM splits K too
//     where tiles are few, 4096 x 64 x 4096: 8 parts of 512; stage 10's 16-row blocks sum in
//     parts of 128 products, as SGEMM's gemmSN_NN at 16 rows). K whole or in parts of at most
//     128 products, the rule before, took K whole where stage 10 splits it: 60 x 12993 x
//     10888 at 0.45x SGEMM, the fp32 track's bounded plan 0.72x (docs/notes/10_tuned.md).
// A split kernel's time (fp32_tc_terms, fp32_tc_predicted_seconds):
//   seconds = fixed + split values x seconds a value
//             + max(bytes x seconds a byte, products x seconds a product)
// split values: those its pre-pass splits; bytes: what its GEMM reads (the pre-pass's fp16
// parts, the operand it splits in registers in FP32) and writes; products: M N K on the
// kernel's tiles, stage 22's in whole waves of stacks over its clusters. The four constants
// of each kernel are fitted on its times by CUDA graphs on a draw of problems
// (scripts/fit_fp32_tc_model.py, which writes dispatch/fp32_tc_fit.hpp); stage 10's plan has
// the fp32 track's model's time. The track runs the kernel of the least time.
//
// N off a multiple of 8 (the split kernels' TMA rows): stage 10's kernel where the copies
// would outweigh the math (padding_cost.hpp, 40 FLOPs a copied byte, fitted on the draw of
// seed 1); else a split kernel on zero-padded copies where its time on them and the copies'
// (their bytes at the rate fitted for stage 20's padded copies, bf16_cost_fit.hpp) come in
// under stage 10's on the shape as it is.
// Every kernel but stage 10's sends what its split cannot hold to stage 22's FP32 path, in
// the tile of the fp32 model's plan with K whole or in short parts (fallback_plan), or stage
// 10's tuned tile where that fills the GPU (fallback_tile).
#include "dispatch/fp32_tc.hpp"

#include <algorithm>
#include <cmath>

#include "10_tuned.hpp"
#include "22_split_fp16.hpp"
#include "23_split_in_registers.hpp"
#include "24_a_in_registers.hpp"
#include "common/padded_launch.cuh"
#include "dispatch/bf16_cost_fit.hpp"
#include "dispatch/fp32_tc_fit.hpp"
#include "dispatch/padding_cost.hpp"

namespace sgemm {
namespace {

// The FP32 stages' kernels read N-wide rows of B and the splits, and write C, through TMA.
constexpr GemmShape kTmaMultiples{1, 8, 1};
constexpr double kFlopsPerCopiedByte = 40.0;
constexpr std::string_view kShortChains = "chains at most 1.1x stage 10's own plan's";
// The slack over stage 10's own chains: a part count that does not divide K's steps as
// evenly in another tile. Where stage 10's own plan is a poor tile (128 x 128 at 44 x 17 x
// 10357, chains of 168 products), no slack left out the fp32 track's 64 x 64 (176 products,
// predicted 2.2x faster; the track ran 0.56x SGEMM there and the fp32 track 1.01x, seed 97's
// draw on an H200). Rounding errors grow as the chain's square root, here at most 1.05x.
constexpr double kLongestChainOverOwn = 1.1;
constexpr int kFallbackMostProductsPerPart = 128;

// The split kernels' tiles (kernels/22_split_fp16.cu, 23_split_in_registers.cuh and
// 24_a_in_registers.cu): rows x columns of C.
constexpr int kStage22StackRows = 256, kStage22StackColumns = 128;
constexpr int kSplitLines = 128, kSideLines = 64;

double rounded_up(double value, double step) { return std::ceil(value / step) * step; }

const Fp32TcKernelConstants& constants_of(int stage) {
    for (const Fp32TcKernelConstants& constants : kFp32TcModel)
        if (constants.stage == stage) return constants;
    return kFp32TcModel[0];
}

}  // namespace

bool split_kernel_takes(const GemmShape& shape, int stage) {
    return shape.n % kTmaMultiples.n == 0 && (stage != 24 || shape.k % 4 == 0);
}

Fp32TcTerms fp32_tc_terms(const GemmShape& shape, int stage, int sms) {
    const double m = shape.m, n = shape.n, k = shape.k;
    switch (stage) {
        case 22: {  // both operands split, their parts (2 fp16 a value) read by the GEMM
            const double stacks = std::ceil(m / kStage22StackRows) * std::ceil(n / kStage22StackColumns);
            const double clusters = std::max(1, sms / 2);
            return {(m + n) * k, 4.0 * (m + n) * k + 4.0 * m * n,
                    rounded_up(stacks, clusters) * kStage22StackRows * kStage22StackColumns * k};
        }
        case 23:  // A's rows split by the pre-pass, B read in FP32; C^T's tiles: 128 of N by 64 of M
            return {m * k, 4.0 * (m * k + k * n + m * n), rounded_up(n, kSplitLines) * rounded_up(m, kSideLines) * k};
        default:  // 24: B's columns split by the pre-pass, A read in FP32; tiles 128 of M by 64 of N
            return {k * n, 4.0 * (m * k + k * n + m * n), rounded_up(m, kSplitLines) * rounded_up(n, kSideLines) * k};
    }
}

double fp32_tc_predicted_seconds(const Fp32TcTerms& terms, const Fp32TcKernelConstants& constants) {
    return constants.launch_seconds + terms.split_values * constants.seconds_per_split_value +
           std::max(terms.bytes * constants.seconds_per_byte, terms.products * constants.seconds_per_product);
}

double fp32_tc_predicted_seconds(const GemmShape& shape, int stage, int sms) {
    return fp32_tc_predicted_seconds(fp32_tc_terms(shape, stage, sms), constants_of(stage));
}

Fp32Plan fp32_tc_stage10_plan(const GemmShape& shape, int sms) {
    return fp32_track_plan(shape, sms, modelled_slots(sms), kLongestChainOverOwn);
}

// Stage 10's kernel, its plan (tile and split) found again at launch.
constexpr KernelChoice kStage10InShortChains{10, false, kShortChains};

namespace {

// The kernel of least predicted time, where stage 10's plan would take stage10_seconds on
// the shape as it is; a split kernel on zero-padded copies where N is off a multiple of 8.
KernelChoice fastest_kernel(const GemmShape& shape, int sms, double stage10_seconds) {
    const bool as_is = split_kernel_takes(shape, 22);
    if (!as_is && copies_outweigh_math(shape, kTmaMultiples, sizeof(float), kFlopsPerCopiedByte))
        return kStage10InShortChains;
    const GemmShape split_shape = as_is ? shape : padded_shape(shape, kTmaMultiples);
    const double copy_seconds =
        as_is ? 0.0
              : padded_copy_bytes(shape, kTmaMultiples, sizeof(float)) / kStage20PaddedCost.copy_bytes_per_second;
    KernelChoice best = kStage10InShortChains;
    double best_seconds = stage10_seconds;
    for (const int stage : {24, 23, 22}) {
        if (!split_kernel_takes(split_shape, stage)) continue;
        const double seconds = fp32_tc_predicted_seconds(split_shape, stage, sms) + copy_seconds;
        if (seconds < best_seconds) best = KernelChoice{stage, !as_is}, best_seconds = seconds;
    }
    return best;
}

}  // namespace

// The plan whose tile the fallback runs: the fp32 model's among K whole or in parts of at
// most 128 products. The fallback splits K its own way (kernels/22_fp32_fallback.cuh) and
// takes only the tile; in the tiles of the track's stage-10 plan (chains no longer than
// stage 10's own, the rule then) hostile data at 1024 and 128 x 6144 x 4096 lost a third of its speed
// (outliers at 1024: 0.71x -> 0.46x SGEMM; docs/notes/22_split_fp16.md).
Fp32Plan fallback_plan(const GemmShape& shape, int sms) { return fp32_plan(shape, sms, kFallbackMostProductsPerPart); }

// The tile of stage 10's kernel that computes what a split kernel's check sends to FP32:
// the plan's, but stage 10's tuned tile where that fills the GPU (two blocks an SM), as at
// the squares: there the fp32 model prefers 32 x 256, which it rates by FFMAs and DRAM
// alone, though each of its blocks reads 2.3x the bytes from L2 (docs/notes/10_tuned.md);
// on hostile data at 4096 and 8192 the fallback in it ran at 0.86-0.98x SGEMM where the
// tuned tile's ran at 0.90-1.43x (accuracy table, device runs 75 and 83).
int fallback_tile(const GemmShape& shape, int sms, const Fp32Plan& plan) {
    const Stage10Tile& tuned = stage10_tiles().at(kTunedTileId);
    const double tuned_tiles = std::ceil(double(shape.m) / tuned.block_m) * std::ceil(double(shape.n) / tuned.block_n);
    return tuned_tiles >= double(tuned.blocks_per_sm) * sms ? kTunedTileId : plan.tile.id;
}

KernelChoice choose_fp32_tc_kernel(const GemmShape& shape, int sms) {
    return fastest_kernel(shape, sms, fp32_tc_stage10_plan(shape, sms).seconds);
}

void launch_fp32_tc_track(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream) {
    // Stage 10's plan, weighed once: the problem's; where a split kernel runs, the tile of
    // what its split cannot hold is the fallback's (fallback_tile).
    const int sms = sm_count_here();
    const Fp32Plan stage10 = fp32_tc_stage10_plan(problem.shape, sms);
    const KernelChoice choice = fastest_kernel(problem.shape, sms, stage10.seconds);
    // On the padded copies, the same choice again (their shape is the one it was made for).
    if (choice.padded) return launch_padded(problem, a, b, c, stream, kTmaMultiples, launch_fp32_tc_track);
    const int fallback = fallback_tile(problem.shape, sms, fallback_plan(problem.shape, sms));
    switch (choice.stage) {
        case 24:
            return launch_a_in_registers(problem, a, b, c, stream, fallback);
        case 23:
            return launch_split_in_registers(problem, a, b, c, stream, fallback);
        case 22:
            return launch_split_fp16(problem, a, b, c, stream, fallback);
        default:
            return launch_fp32_plan(stage10, problem, a, b, c, stream);
    }
}

}  // namespace sgemm
