// The FP32 track on tensor cores: which kernel takes a shape. "Stage 10's kernel" runs in
// the tile and split of K the fp32 track's model chooses (dispatch/fp32.cpp) among those
// that come nearest SGEMM's accuracy: K whole, or parts of at most 128 products. SGEMM
// splits K too where tiles are few (4096 x 64 x 4096: 8 parts of 512), and at 16 rows runs
// a kernel of its own (gemmSN_NN). There parts of at most 256 left 1.1-1.4x its normwise
// error, 128 1.03-1.08x, at 2.2x and 2.0x its speed (device runs 74-75, accuracy.md).
//   sums_too_short_to_split or rows_too_few_to_split: stage 10's kernel
//   N off a multiple of 8 (the kernels' TMA rows): stage 10's kernel where the copies
//     would outweigh the math (padding_cost.hpp, 40 FLOPs a copied byte, fitted on the
//     draw of seed 1), else the choice below for zero-padded copies
//   splits_a_in_registers: stage 24's kernels (A read once and split in registers)
//   splits_in_registers: stage 23's kernels (B read once and split in registers)
//   split_pays: stage 22's kernels (both operands split by a pre-pass)
//   else stage 10's kernel
// Every kernel but stage 10's sends what its split cannot hold to stage 22's FP32 path.
#include "dispatch/fp32_tc.hpp"

#include "10_tuned.hpp"
#include "22_split_fp16.hpp"
#include "23_split_in_registers.hpp"
#include "24_a_in_registers.hpp"
#include "common/padded_launch.cuh"
#include "dispatch/fp32.hpp"
#include "dispatch/padding_cost.hpp"

namespace sgemm {
namespace {

// The FP32 stages' kernels read N-wide rows of B and the splits, and write C, through TMA.
constexpr GemmShape kTmaMultiples{1, 8, 1};
constexpr double kFlopsPerCopiedByte = 40.0;
constexpr int kMostProductsPerPart = 128;
constexpr std::string_view kShortParts = "K whole or in parts of at most 128 products";

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

// A small problem (at most 2^31 FLOPs) whose outputs each sum at most 256 products, where
// the split's pre-passes and three products a K step cost more than the FFMAs they save.
// Measured in the same process on the H100, random draws of seeds 1-3
// (docs/notes/24_a_in_registers.md): 4437 x 24 x 73 0.26x SGEMM on stage 24's kernel, 0.46x
// on stage 10's; 552 x 5160 x 45 0.36x against 0.91x; even at K = 281; the split kernels
// ahead from K = 300. A large C with short sums stays on the tensor cores, which take its
// FLOPs 3x faster.
constexpr int kMaxShortK = 256;
constexpr long long kMaxShortFlops = 1LL << 31;

bool sums_too_short_to_split(const GemmShape& shape) {
    return shape.k <= kMaxShortK && 2LL * shape.m * shape.n * shape.k <= kMaxShortFlops;
}

// At most 16 rows of A and a C at least 3072 columns wide, on stage 10's blocks of 16 rows
// (10_tuned.cu): bound by reading B, which stage 10 streams once in FP32 as the split kernel
// does, without the split's three products a K step. Read off the random draw of seed 5 on
// the H100 (15 of 16 such problems faster on stage 10's kernel, 1.07-1.36x) and checked on
// seed 4's (all 11 faster, 1.06-1.28x: docs/notes/24_a_in_registers.md); narrower C, with
// fewer blocks than SMs, went either way (1 x 1920 x 1664: 0.79x, 1 x 2176 x 6912: 1.43x).
constexpr int kMaxStreamedRows = 16, kMinStreamedColumns = 3072;

bool rows_too_few_to_split(const GemmShape& shape) {
    return shape.m <= kMaxStreamedRows && shape.n >= kMinStreamedColumns;
}

// A C at most 256 columns wide and at least 16 times taller than wide, so that A is much
// the larger operand (B is small beside it and the pre-pass's loads down its columns cost
// little), with K a multiple of 4 (TMA reads A's rows, which must start 16-byte aligned).
// Measured in the same process on the H100 (docs/notes/24_a_in_registers.md): ahead of the
// other kernels on every shape tried with 16 rows or more a column (16384 x 256 x 4096:
// 1.93x SGEMM against 1.33x), behind at 4 (512 x 128 x 4096) and 1 (256 x 256 x 65536:
// 0.49x against 1.04x).
constexpr int kMaxColumns = 256, kMinRowsPerColumn = 16;

bool splits_a_in_registers(const GemmShape& shape) {
    return shape.n <= kMaxColumns && static_cast<long long>(shape.n) * kMinRowsPerColumn <= shape.m &&
           shape.k % 4 == 0;
}

// A of at most 256 rows, or a C that leaves some of stage 22's clusters of two (on `sms`
// SMs) without a stack of 256 x 128 (its tiles) to take. Measured in the same process on
// the H100 (docs/notes/23_split_in_registers.md): stage 23's kernel was ahead on every such
// shape tried (1024 x 1024 x 1024: 1.34x SGEMM against 1.00x), stage 22's on every shape
// with a stack for each cluster (2048 x 2048 x 2048: 2.09x against 1.67x).
constexpr int kMaxRowsInRegisters = 256, kStage22StackRows = 256, kStage22StackColumns = 128;

bool splits_in_registers(const GemmShape& shape, int sms) {
    const int stage22_stacks = ceil_div(shape.m, kStage22StackRows) * ceil_div(shape.n, kStage22StackColumns);
    return shape.m <= kMaxRowsInRegisters || stage22_stacks < sms / 2;
}

// Stage 22's pre-pass reads each value of A and B and writes its parts, (M + N) K values,
// for the M N K products that then run on the tensor cores: at least this many products a
// value (M N / (M + N)) before the tensor cores win the pre-pass's time back. The suite
// (make shapes) put the break-even between 128 (128 tokens: stage 10 ahead on every layer)
// and 240 (256 tokens: stage 22 ahead on every layer).
constexpr double kMinProductsPerSplitValue = 192;

bool split_pays(const GemmShape& shape) {
    const double m = shape.m, n = shape.n;
    return m * n / (m + n) >= kMinProductsPerSplitValue;
}

// Stage 10's kernel, its plan (tile and split) found at launch, where the model weighs every
// plan once.
constexpr KernelChoice kStage10InShortParts{10, false, kShortParts};

KernelChoice choose_fp32_tc_kernel(const GemmShape& shape, int sms) {
    if (sums_too_short_to_split(shape) || rows_too_few_to_split(shape)) return kStage10InShortParts;
    if (!takes_as_is(shape, kTmaMultiples)) {
        if (copies_outweigh_math(shape, kTmaMultiples, sizeof(float), kFlopsPerCopiedByte))
            return kStage10InShortParts;
        KernelChoice padded = choose_fp32_tc_kernel(padded_shape(shape, kTmaMultiples), sms);
        padded.padded = true;
        return padded;
    }
    if (splits_a_in_registers(shape)) return KernelChoice{24};
    if (splits_in_registers(shape, sms)) return KernelChoice{23};
    if (split_pays(shape)) return KernelChoice{22};
    return kStage10InShortParts;
}

void launch_fp32_tc_track(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream) {
    const KernelChoice choice = choose_fp32_tc_kernel(problem.shape, sm_count_here());
    // On the padded copies, the same choice again (their shape is the one it was made for).
    if (choice.padded) return launch_padded(problem, a, b, c, stream, kTmaMultiples, launch_fp32_tc_track);
    switch (choice.stage) {
        case 24:
            return launch_a_in_registers(problem, a, b, c, stream);
        case 23:
            return launch_split_in_registers(problem, a, b, c, stream);
        case 22:
            return launch_split_fp16(problem, a, b, c, stream);
        default:
            return launch_fp32_plan(fp32_plan(problem.shape, sm_count_here(), kMostProductsPerPart), problem, a, b, c,
                                    stream);
    }
}

}  // namespace sgemm
