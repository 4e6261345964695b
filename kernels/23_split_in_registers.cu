// Stage 23 — FP32 on tensor cores for few rows: the weights split in registers.
//
// The idea: where A has few rows (few tokens), B (the weights) is nearly all the bytes,
// and stage 22's pre-pass, which reads B twice and writes its parts, costs more than
// SGEMM's whole run. So B is read once, as FP32, and split where it is used: the kernel
// computes C^T = B^T A^T, so that B^T is wgmma's A operand, which may come from registers.
// Each consumer loads its fragment of a 64 x 64 FP32 tile of B^T from shared memory (TMA's
// 128-byte swizzle puts the 32 values a warp loads at once in 32 banks), splits it into
// fp16 hi and lo parts in registers, and multiplies them by the tokens' parts, which a
// cheap pre-pass (M x K values) writes as stage 22's does, as wgmma's B from shared memory.
//
// Range without a pre-pass: each K tile's 64 values of a column of B are scaled by their
// own power of two (their largest into [2^14, 2^15)), found by the four threads that hold
// them. The tile's products, hi.hi in one partial and the two lo products (2^11 too large,
// as in stage 22) in another, are added to the FP32 sums in registers with the scaling
// undone: the sums hold A's scaled rows times B's true values, so that A's exponent,
// undone at the end, is the only one left. A column whose tile holds NaN or Inf, spans more
// than 2^28, or lies beyond 2^+-63 (where the sums could leave FP32's range) is zeros in
// the split and listed by the kernel; stage 22's FP32 fallback (22_fp32_fallback.cuh)
// computes it on the CUDA cores, with the rows of A the pre-pass lists. Where every row
// of A fails, the kernel does not run; where every row or every column does, the last
// kernel writes nothing and the whole problem is the fallback's.
//
// Tiles and pieces: a CTA takes 128 columns of C (two consumers, an m64 block of C^T
// each) and 64 rows (the wgmma's N). 64 tokens give a C 4096 wide only 32 such tiles, so
// the column blocks' K tiles are cut into one equal run per SM (stream-K), each run taken
// by one CTA per 64 rows side by side, which read B's tiles once from DRAM between them.
// Each piece's sums go to a workspace that a last kernel adds in order, scaling rows,
// alpha and beta C in. A consumer splits the next K tile while the tensor cores multiply
// the current one.
//
// Prediction: at 64 tokens the kernel reads B once from DRAM; its tensor work (three
// products) is a third of that time, and the split's instructions (about ten a value of
// B) fit under it: at 3 TB/s, about 33 us for 64 x 6144 x 4096, 2.5x SGEMM's 87 us.
//
// Measured on the H100 (make shapes): 1.04-2.2x SGEMM on every shape of 256 tokens or
// fewer, 1.72x in geomean, where stage 22 gave 0.79x; 1.32x at 1024^3 (stage 22: 1.00x);
// normwise error 1.4-3.1e-7. Short of the prediction: 67 us, 1.30x, for 64 x 6144 x 4096.
// ncu (one step earlier, at 69 us) put the GEMM kernel at 49 us and 64 % of DRAM
// bandwidth, bound by issue: two consumer warps a scheduler issue 0.48 instructions a
// cycle, about 700 a K tile each (11 a value of B); the pre-pass, the last kernel and the
// fallback's empty launch took 16 us. docs/notes/23_split_in_registers.md has each step.
//
// Where it runs: A of at most 256 rows, or a C too small for stage 22's tiles to fill the
// GPU (splits_in_registers, 23_split_in_registers.cuh); the rest goes to stage 22. The
// fragment's scaling and split are in 23_split_fragment.cuh, which stage 24 shares.
//
// Shapes: any M and K; N a multiple of 8. Needs sm_90a.
#include <cuda.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "22_fp32_fallback.cuh"
#include "22_split_fp16_operands.cuh"
#include "23_split_fragment.cuh"
#include "23_split_in_registers.cuh"
#include "common/fp32_split.cuh"
#include "common/gemm_problem.hpp"
#include "common/hopper_tiles.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/tma.cuh"
#include "common/vector_access.cuh"
#include "common/wgmma.cuh"
#include "common/workspace.cuh"

namespace sgemm {
namespace {

constexpr int kBlockK = 64;
constexpr int kConsumers = 2, kThreads = 128 * (1 + kConsumers);
constexpr int kBlockColumns = SplitBlockRuns::kSplitBlock;  // of B and C: an m64 block of C^T a consumer
constexpr int kBlockRows = SplitBlockRuns::kSideBlock;      // of A and C: the wgmma's N
static_assert(kBlockColumns == 64 * kConsumers, "one m64 block of C^T a consumer");
constexpr int kStages = 4;
// B's tile in FP32: boxes of 32 columns (128 bytes, one swizzle row) by 64 rows of K.
constexpr int kBoxColumns = 32, kBoxBytes = kBlockK * kBoxColumns * 4;
constexpr int kBTileBytes = kBlockColumns / kBoxColumns * kBoxBytes;
// A's parts: 64 rows by 64 values of K in fp16, lo then hi, each one 128-byte-swizzled box.
constexpr int kAPartBytes = kBlockRows * kBlockK * 2;
constexpr int kStageBytes = kBTileBytes + 2 * kAPartBytes;
constexpr int kSharedBytes = kStages * kStageBytes + 2 * kStages * 8 + 1024;
static_assert(kSharedBytes <= 227 * 1024, "an H100 block has at most 227 KB of shared memory");
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;  // after setmaxnreg
static_assert(128 * kProducerRegisters + 128 * kConsumers * kConsumerRegisters <= 65536, "the SM's registers");

__global__ void __launch_bounds__(kThreads, 1)
    split_in_registers_kernel(const __grid_constant__ CUtensorMap b_map, const __grid_constant__ CUtensorMap a_map,
                              float* partials, int* column_flags, GemmShape shape, int padded_k, SplitBlockRuns work,
                              Flagged flagged) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    if (flagged.counts[0] == shape.m) return;  // every row of A flagged: the fallback takes it all
    extern __shared__ std::uint8_t shared_bytes[];
    std::uint8_t* const ring = HopperStageTiles<64, 64>::ring_start(shared_bytes);
    std::uint64_t* const full = reinterpret_cast<std::uint64_t*>(ring + kStages * kStageBytes);
    std::uint64_t* const empty = full + kStages;
    const auto b_tile = [&](int stage) { return ring + stage * kStageBytes; };
    const auto a_lo_tile = [&](int stage) { return b_tile(stage) + kBTileBytes; };
    const auto a_hi_tile = [&](int stage) { return a_lo_tile(stage) + kAPartBytes; };

    init_ring_barriers(full, empty, kStages, kConsumers);
    __syncthreads();

    const int run = blockIdx.x / work.side_blocks, first_row = blockIdx.x % work.side_blocks * kBlockRows;
    const long long begin = work.run_start(run), end = work.run_start(run + 1);
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        warpgroup_release_registers<kProducerRegisters>();
        if (threadIdx.x == 0)
            for (long long unit = begin; unit < end; ++unit) {
                const int passed = static_cast<int>(unit - begin), stage = passed % kStages;
                const int first_column = static_cast<int>(unit / work.k_tiles) * kBlockColumns;
                const int k0 = static_cast<int>(unit % work.k_tiles) * kBlockK;
                mbarrier_wait(&empty[stage], (passed / kStages % 2) ^ 1);  // parity 1 first: free
                mbarrier_arrive_expect_tx(&full[stage], kStageBytes);
                for (int box = 0; box < kBlockColumns / kBoxColumns; ++box)
                    tma_load_2d(b_tile(stage) + box * kBoxBytes, &b_map, first_column + box * kBoxColumns, k0,
                                &full[stage]);
                tma_load_2d(a_lo_tile(stage), &a_map, k0, first_row, &full[stage]);
                tma_load_2d(a_hi_tile(stage), &a_map, padded_k + k0, first_row, &full[stage]);
            }
        return;
    }
    warpgroup_claim_registers<kConsumerRegisters>();
    const int consumer = warpgroup - 1, warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const int quad = lane % 4;
    // The thread's rows of C^T in the block (columns of B), and where in a B tile the value
    // at (row h, k = 2 quad + p + 8 j) sits: its box, its 128-byte row k, and its 16-byte
    // chunk c / 4, which the swizzle moves to (c / 4) ^ (k % 8), with k % 8 = 2 quad + p.
    int rows[2], offsets[2][2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        rows[h] = 64 * consumer + 16 * warp + lane / 4 + 8 * h;
        const int c = rows[h] % kBoxColumns;
#pragma unroll
        for (int p = 0; p < 2; ++p) {
            const int k = 2 * quad + p;
            offsets[h][p] = rows[h] / kBoxColumns * kBoxBytes + k * 128 + ((c / 4) ^ k) * 16 + c % 4 * 4;
        }
    }
    // Unit `passed` of the run: its fragment loaded, scaled and split.
    const auto prepare = [&](int passed, RowScaling& scaling, SplitFragment& parts) {
        const int stage = passed % kStages;
        mbarrier_wait(&full[stage], passed / kStages % 2);
        TileFragment values;
        const unsigned tile = shared_address(b_tile(stage));
#pragma unroll
        for (int step = 0; step < 4; ++step)
#pragma unroll
            for (int q = 0; q < 2; ++q)
#pragma unroll
                for (int h = 0; h < 2; ++h)
#pragma unroll
                    for (int p = 0; p < 2; ++p)
                        values[step][p + 2 * h + 4 * q] =
                            load_shared_float(tile + offsets[h][p] + (16 * step + 8 * q) * 128);
        scaling = tile_row_scaling(values);
        parts = split_fragment(values, scaling);
    };
    RowScaling scaling;
    SplitFragment parts;
    if (begin < end) prepare(0, scaling, parts);
    float sums[32] = {}, hi_products[32], lo_products[32];
    bool left[2] = {false, false};
    for (long long unit = begin; unit < end; ++unit) {
        const int passed = static_cast<int>(unit - begin), stage = passed % kStages;
        wgmma_fence();
#pragma unroll
        for (int step = 0; step < 4; ++step) {
            const std::uint64_t a_hi = a_step_descriptor(a_hi_tile(stage), 0, step);
            const std::uint64_t a_lo = a_step_descriptor(a_lo_tile(stage), 0, step);
            wgmma_m64n64k16_f16_a_in_registers(hi_products, parts.hi[step], a_hi, step > 0);
            wgmma_m64n64k16_f16_a_in_registers(lo_products, parts.hi[step], a_lo, step > 0);
            wgmma_m64n64k16_f16_a_in_registers(lo_products, parts.lo[step], a_hi, true);
        }
        wgmma_commit_group();
        // While they run: the next unit's parts, into other registers (the wgmmas still
        // read these until the wait below, which keep_registers marks).
        const RowScaling current = scaling;
        SplitFragment next_parts;
        if (unit + 1 < end) prepare(passed + 1, scaling, next_parts);
        wgmma_wait_group<0>();
        keep_registers(parts);
        wgmma_fence_accumulators(hi_products);
        wgmma_fence_accumulators(lo_products);
        if (threadIdx.x % 128 == 0) mbarrier_arrive(&empty[stage]);
        // sums += 2^-e (hi.hi + 2^-11 (hi.lo + lo.hi)): the product by a power of two is
        // exact, so each add rounds once.
#pragma unroll
        for (int i = 0; i < 32; ++i)
            sums[i] = fmaf(fmaf(lo_products[i], 1.0f / kF16LoScale, hi_products[i]), current.unscale[i / 2 % 2], sums[i]);
        left[0] = left[0] || current.leave[0];
        left[1] = left[1] || current.leave[1];
        parts = next_parts;

        if (unit + 1 == end || (unit + 1) % work.k_tiles == 0) {
            // The tile's piece: sums[4 j + 2 h + p] is C^T(row h, column 8 j + 2 quad + p),
            // at row 8 j + 2 quad + p and column rows[h] of the slot's tile.
            const int column_block = static_cast<int>(unit / work.k_tiles), first_column = column_block * kBlockColumns;
            float* const slot = partials + static_cast<std::size_t>(work.slot(column_block, run, first_row / kBlockRows)) *
                                               kBlockRows * kBlockColumns;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int column = first_column + rows[h];
                if (left[h] && quad == 0 && column < shape.n && atomicExch(&column_flags[column], 1) == 0)
                    flagged.flag_column(column);
#pragma unroll
                for (int j = 0; j < 8; ++j)
#pragma unroll
                    for (int p = 0; p < 2; ++p)
                        slot[(8 * j + 2 * quad + p) * kBlockColumns + rows[h]] = sums[4 * j + 2 * h + p];
                left[h] = false;
            }
#pragma unroll
            for (int i = 0; i < 32; ++i) sums[i] = 0.0f;
        }
    }
#endif
}

// A's rows -> A' = [lo | hi] (M x 2 padded_k) as stage 22's split_a_kernel writes it, with
// a block a row rather than a warp: there are few rows, and each is long. Both passes
// take the same eight values a thread: the second finds them in L1.
constexpr int kSplitRowThreads = 256;

__global__ void __launch_bounds__(kSplitRowThreads) split_rows_kernel(const float* a, int* row_exponents,
                                                                      __half* split, int m, int k, int padded_k,
                                                                      Flagged flagged) {
    __shared__ int row_exponent;
    const int row = blockIdx.x;
    const float* const values = a + static_cast<std::size_t>(row) * k;
    MagnitudeRange range;
    for (int column = 8 * threadIdx.x; column < k; column += 8 * kSplitRowThreads) {
        float eight[8];
        load_eight(values, k, column, eight);
#pragma unroll
        for (int i = 0; i < 8; ++i) range.include(eight[i]);
    }
    range = block_range<kSplitRowThreads>(range);
    if (threadIdx.x == 0) row_exponent = record_row(range, row, m, row_exponents, flagged);
    __syncthreads();
    split_row(values, k, padded_k, row_exponent, split + static_cast<std::size_t>(row) * 2 * padded_k,
              8 * threadIdx.x, 8 * kSplitRowThreads);
}

// C = alpha 2^-(row exponent) (the pieces' sums, added in run order) + beta C, four
// columns a thread; alpha's term left out where the row or the column went to the
// fallback; nothing where the fallback takes it all.
__global__ void finish_kernel(GemmProblem problem, const float* partials, SplitBlockRuns work, const int* row_exponents,
                              const int* column_flags, float* c, Flagged flagged) {
    const int m = problem.shape.m, n = problem.shape.n;
    if (flagged.whole(m, n)) return;
    const std::size_t count = static_cast<std::size_t>(m) * n / 4;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        const std::size_t first = 4 * i;
        const int row = static_cast<int>(first / n), column = static_cast<int>(first % n);
        const int column_block = column / kBlockColumns;
        const long long first_unit = static_cast<long long>(column_block) * work.k_tiles;
        const int first_run = work.run_of(first_unit), last_run = work.run_of(first_unit + work.k_tiles - 1);
        const std::size_t in_slot = static_cast<std::size_t>(row % kBlockRows) * kBlockColumns + column % kBlockColumns;
        float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int run = first_run; run <= last_run; ++run) {
            const std::size_t slot = work.slot(column_block, run, row / kBlockRows);
            const float4 piece = load_float4(partials + slot * kBlockRows * kBlockColumns + in_slot);
            sum.x += piece.x, sum.y += piece.y, sum.z += piece.z, sum.w += piece.w;
        }
        const int4 flags = *reinterpret_cast<const int4*>(column_flags + column);
        const int exponent = row_exponents[row];
        const bool row_left = exponent == kLeftToFallback;
        const float acc[4] = {row_left || flags.x ? 0.0f : ldexpf(sum.x, -exponent),
                              row_left || flags.y ? 0.0f : ldexpf(sum.y, -exponent),
                              row_left || flags.z ? 0.0f : ldexpf(sum.z, -exponent),
                              row_left || flags.w ? 0.0f : ldexpf(sum.w, -exponent)};
        store_scaled_float4(c + first, acc, problem.alpha, problem.beta);
    }
}

}  // namespace

void launch_split_fp16(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

// The measured crossover with stage 22 (see splits_in_registers in the header).
constexpr int kMaxRowsInRegisters = 256, kStage22StackRows = 256, kStage22StackColumns = 128;

bool splits_in_registers(const GemmShape& shape, int sms) {
    const int stage22_stacks = ceil_div(shape.m, kStage22StackRows) * ceil_div(shape.n, kStage22StackColumns);
    return shape.m <= kMaxRowsInRegisters || stage22_stacks < sms / 2;
}

void launch_split_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c,
                               cudaStream_t stream) {
    const auto [m, n, k] = problem.shape;
    static const int sms = std::max(current_sm_count(), 1);
    if (!splits_in_registers(problem.shape, sms)) return launch_split_fp16(problem, a, b, c, stream);
    const int padded_k = ceil_div(k, kBlockK) * kBlockK, k_tiles = padded_k / kBlockK;
    const int column_blocks = ceil_div(n, kBlockColumns), row_blocks = ceil_div(m, kBlockRows);
    const long long units = static_cast<long long>(column_blocks) * k_tiles;
    const int runs = static_cast<int>(std::min<long long>(std::max(sms / row_blocks, 1), units));
    const SplitBlockRuns work{k_tiles, row_blocks, units, runs};

    // A', the pieces' sums (a slot for each tile and CTA), then the ints: column flags and
    // counts (zeroed), row exponents, the row order and the flagged columns.
    static GrowingWorkspace workspace("stage 23's split rows and partial sums");
    const std::size_t a_values = static_cast<std::size_t>(m) * 2 * padded_k;
    const std::size_t partial_values = static_cast<std::size_t>(work.slot(column_blocks, runs, 0)) * kBlockRows * kBlockColumns;
    const std::size_t ints = 2 * static_cast<std::size_t>(n) + 4 + 2 * static_cast<std::size_t>(m);
    auto* const a_split = static_cast<__half*>(workspace.at_least(a_values * 2 + partial_values * 4 + ints * 4));
    auto* const partials = reinterpret_cast<float*>(a_split + a_values);
    int* const column_flags = reinterpret_cast<int*>(partials + partial_values);
    int* const counts = column_flags + n;
    int* const row_exponents = counts + 4;
    int* const row_order = row_exponents + m;
    int* const flagged_columns = row_order + m;
    const Flagged flagged{row_order, flagged_columns, counts};

    cudaMemsetAsync(column_flags, 0, (static_cast<std::size_t>(n) + 4) * 4, stream);
    split_rows_kernel<<<m, kSplitRowThreads, 0, stream>>>(a, row_exponents, a_split, m, k, padded_k, flagged);
    const CUtensorMap b_map = make_fp32_tensor_map(b, k, n, kBlockK, kBoxColumns);
    const CUtensorMap a_map = make_f16_tensor_map(a_split, m, 2 * padded_k, kBlockRows, kBlockK);
    cudaFuncSetAttribute(split_in_registers_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes);
    split_in_registers_kernel<<<runs * row_blocks, kThreads, kSharedBytes, stream>>>(b_map, a_map, partials, column_flags,
                                                                             problem.shape, padded_k, work, flagged);
    constexpr int kFinishThreads = 256;
    const int finish_blocks =
        static_cast<int>(std::min<std::size_t>(ceil_div(m * (n / 4), kFinishThreads), 8 * static_cast<std::size_t>(sms)));
    finish_kernel<<<finish_blocks, kFinishThreads, 0, stream>>>(problem, partials, work, row_exponents, column_flags,
                                                                 c, flagged);
    launch_fp32_fallback(problem, a, b, c, flagged, stream);
}

}  // namespace sgemm
