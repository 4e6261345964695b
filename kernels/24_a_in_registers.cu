// Stage 24 — FP32 on tensor cores for a narrow C: A split in registers, as it stands.
//
// The idea: where C has few columns, A is nearly all the bytes, and stage 23 pre-splits it
// (reads it twice and writes its parts) before its kernel reads the parts again: 4096 x 64
// x 4096 ran at 0.64x SGEMM and 8192 x 16 x 8192 at 0.40x. So stage 23's roles swap, and
// the transpose goes: A, row-major, is already what wgmma takes from registers (K-major).
// It is read once, as FP32 through TMA, and split in registers by stage 23's code
// (23_split_fragment.cuh: each K tile's 64 values of a row get their own power of two);
// B's few columns are the pre-split operand, scaled by a power of two a column and split
// into fp16 parts by a pre-pass over N x K values, wgmma's B from shared memory. The
// three products, the sums, the runs (23_split_in_registers.cuh) and the last kernel are
// stage 23's with rows and columns exchanged; what the checks list, stage 22's fallback takes.
//
// The one new piece is the fragment load. A thread's four values of a row for one k16 step
// (k = 2t, 2t+1, 2t+8, 2t+9, t = lane % 4) are not side by side in A's rows, and loading
// them one at a time (as stage 23 must, down B's columns) costs instructions, which bound
// stage 23. But their order within a K tile is free, as long as B's parts follow it: the
// thread finds its four values of step s in one 16-byte chunk, 2t + s % 2 of a 128-byte
// row of the tile (physical_k), and the pre-pass puts B's values in the same order. One
// LDS.128 where stage 23 issues four; and the two rows a quarter warp loads fall on even
// and odd chunks, which the 128-byte swizzle (chunk ^ row % 8) sends to disjoint banks.
//
// Prediction: reading A once from DRAM bounds it, as B bounded stage 23 at 64 tokens:
// 8192 x 16 x 8192 (268 MB of A) in about 95 us at 2.8 TB/s, 1.6x SGEMM; 4096 x 64 x 4096
// (67 MB) in about 30 us, 2x.
//
// Measured on the H100 (make shapes): 8192 x 16 x 8192 in 132 us, 1.18x SGEMM (stage 23:
// 0.40x); 4096 x 64 x 4096 in 58 us, 1.17x (0.63x); normwise error 1.5-1.8e-7. With it, the
// FP32 track is above SGEMM on every shape of the suite. Short of the prediction: ncu puts
// the GEMM kernel at 108 us and 75 % of DRAM bandwidth on the first, and at 33 us on the
// second, where the pre-pass (11 us: each of a block's loads down a column of B takes 32
// sectors), the last kernel (7 us) and the fallback's empty launch (3 us) take the rest.
// docs/notes/24_a_in_registers.md has the figures, and those on hostile data.
//
// Where it runs: N at most 256 and M at least 16 N, K a multiple of 4 (TMA's rows of A);
// the rest goes to stage 23's launcher (and from there to stage 22).
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
#include "common/epilogue.cuh"
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
constexpr int kBlockRows = SplitBlockRuns::kSplitBlock;    // of A and C: an m64 block a consumer
constexpr int kBlockColumns = SplitBlockRuns::kSideBlock;  // of B and C: the wgmma's N
static_assert(kBlockRows == 64 * kConsumers, "one m64 block of C a consumer");
constexpr int kStages = 4;
// A's tile in FP32: boxes of 32 values of K (128 bytes, one swizzle row) by 128 rows.
constexpr int kBoxK = 32, kBoxBytes = kBlockRows * kBoxK * 4;
constexpr int kATileBytes = kBlockK / kBoxK * kBoxBytes;
// B's parts: 64 columns by 64 values of K in fp16, lo then hi, each one 128-byte-swizzled box.
constexpr int kBPartBytes = kBlockColumns * kBlockK * 2;
constexpr int kStageBytes = kATileBytes + 2 * kBPartBytes;
constexpr int kSharedBytes = kStages * kStageBytes + 2 * kStages * 8 + 1024;
static_assert(kSharedBytes <= 227 * 1024, "an H100 block has at most 227 KB of shared memory");
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;  // after setmaxnreg
static_assert(128 * kProducerRegisters + 128 * kConsumers * kConsumerRegisters <= 65536, "the SM's registers");

// Where the value that the wgmmas take as k (0..63 in a K tile) sits in the tile of A: step
// k / 16's four values of thread t = k % 8 / 2 (p = k % 2, q = k % 16 / 8) are the chunk
// 2t + step % 2 of box step / 2's row, in the order p + 2q.
__host__ __device__ constexpr int physical_k(int k) {
    const int step = k / 16, t = k % 8 / 2, p = k % 2, q = k % 16 / 8;
    return step / 2 * kBoxK + 4 * (2 * t + step % 2) + p + 2 * q;
}

constexpr bool physical_k_is_a_permutation() {
    bool taken[kBlockK] = {};
    for (int k = 0; k < kBlockK; ++k) {
        const int place = physical_k(k);
        if (place < 0 || place >= kBlockK || taken[place]) return false;
        taken[place] = true;
    }
    return true;
}
static_assert(physical_k_is_a_permutation(), "every value of a K tile taken once");

__global__ void __launch_bounds__(kThreads, 1)
    a_in_registers_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                          float* partials, int* row_flags, GemmShape shape, int padded_k, SplitBlockRuns work,
                          Flagged flagged) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ std::uint8_t shared_bytes[];
    std::uint8_t* const ring = HopperStageTiles<64, 64>::ring_start(shared_bytes);
    std::uint64_t* const full = reinterpret_cast<std::uint64_t*>(ring + kStages * kStageBytes);
    std::uint64_t* const empty = full + kStages;
    const auto a_tile = [&](int stage) { return ring + stage * kStageBytes; };
    const auto b_lo_tile = [&](int stage) { return a_tile(stage) + kATileBytes; };
    const auto b_hi_tile = [&](int stage) { return b_lo_tile(stage) + kBPartBytes; };

    init_ring_barriers(full, empty, kStages, kConsumers);
    __syncthreads();

    const int run = blockIdx.x / work.side_blocks, first_column = blockIdx.x % work.side_blocks * kBlockColumns;
    const long long begin = work.run_start(run), end = work.run_start(run + 1);
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        warpgroup_release_registers<kProducerRegisters>();
        if (threadIdx.x == 0)
            for (long long unit = begin; unit < end; ++unit) {
                const int passed = static_cast<int>(unit - begin), stage = passed % kStages;
                const int first_row = static_cast<int>(unit / work.k_tiles) * kBlockRows;
                const int k0 = static_cast<int>(unit % work.k_tiles) * kBlockK;
                mbarrier_wait(&empty[stage], (passed / kStages % 2) ^ 1);  // parity 1 first: free
                mbarrier_arrive_expect_tx(&full[stage], kStageBytes);
                for (int box = 0; box < kBlockK / kBoxK; ++box)
                    tma_load_2d(a_tile(stage) + box * kBoxBytes, &a_map, k0 + box * kBoxK, first_row, &full[stage]);
                tma_load_2d(b_lo_tile(stage), &b_map, k0, first_column, &full[stage]);
                tma_load_2d(b_hi_tile(stage), &b_map, padded_k + k0, first_column, &full[stage]);
            }
        return;
    }
    warpgroup_claim_registers<kConsumerRegisters>();
    const int consumer = warpgroup - 1, warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const int quad = lane % 4;
    // The thread's rows of C in the block, and where in a box row of the A tile the chunk of
    // steps 0 and 2 (odd = 0) and of steps 1 and 3 (odd = 1) sits: chunk 2 quad + odd of
    // the row, which the swizzle moves to (2 quad + odd) ^ (row % 8), with row % 8 = lane / 4.
    int rows[2], offsets[2][2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        rows[h] = 64 * consumer + 16 * warp + lane / 4 + 8 * h;
#pragma unroll
        for (int odd = 0; odd < 2; ++odd) offsets[h][odd] = rows[h] * 128 + ((2 * quad + odd) ^ (lane / 4)) * 16;
    }
    // Unit `passed` of the run: its fragment loaded, scaled and split.
    const auto prepare = [&](int passed, RowScaling& scaling, SplitFragment& parts) {
        const int stage = passed % kStages;
        mbarrier_wait(&full[stage], passed / kStages % 2);
        TileFragment values;
        const unsigned tile = shared_address(a_tile(stage));
#pragma unroll
        for (int step = 0; step < 4; ++step)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float4 four = load_shared_float4(tile + step / 2 * kBoxBytes + offsets[h][step % 2]);
                values[step][2 * h] = four.x;      // k = 2 quad
                values[step][2 * h + 1] = four.y;  // 2 quad + 1
                values[step][2 * h + 4] = four.z;  // 2 quad + 8
                values[step][2 * h + 5] = four.w;  // 2 quad + 9
            }
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
            const std::uint64_t b_hi = a_step_descriptor(b_hi_tile(stage), 0, step);
            const std::uint64_t b_lo = a_step_descriptor(b_lo_tile(stage), 0, step);
            wgmma_m64n64k16_f16_a_in_registers(hi_products, parts.hi[step], b_hi, step > 0);
            wgmma_m64n64k16_f16_a_in_registers(lo_products, parts.hi[step], b_lo, step > 0);
            wgmma_m64n64k16_f16_a_in_registers(lo_products, parts.lo[step], b_hi, true);
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
        // sums += 2^-e (hi.hi + 2^-11 (hi.lo + lo.hi)), as in stage 23.
#pragma unroll
        for (int i = 0; i < 32; ++i)
            sums[i] = fmaf(fmaf(lo_products[i], 1.0f / kF16LoScale, hi_products[i]), current.unscale[i / 2 % 2], sums[i]);
        left[0] = left[0] || current.leave[0];
        left[1] = left[1] || current.leave[1];
        parts = next_parts;

        if (unit + 1 == end || (unit + 1) % work.k_tiles == 0) {
            // The tile's piece: sums[4 j + 2 h + p] is C(row h, column 8 j + 2 quad + p).
            const int split_block = static_cast<int>(unit / work.k_tiles), first_row = split_block * kBlockRows;
            float* const slot = partials + static_cast<std::size_t>(work.slot(split_block, run, first_column / kBlockColumns)) *
                                               kBlockRows * kBlockColumns;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = first_row + rows[h];
                if (left[h] && quad == 0 && row < shape.m && atomicExch(&row_flags[row], 1) == 0) flagged.flag_row(row);
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    *reinterpret_cast<float2*>(slot + rows[h] * kBlockColumns + 8 * j + 2 * quad) =
                        make_float2(sums[4 * j + 2 * h], sums[4 * j + 2 * h + 1]);
                left[h] = false;
            }
#pragma unroll
            for (int i = 0; i < 32; ++i) sums[i] = 0.0f;
        }
    }
#endif
}

// B's columns -> B' = [lo | hi] (N x 2 padded_k, K-major), each column scaled by its own
// power of two (kept for the last kernel; kLeftToFallback where two fp16 parts cannot hold
// it or it holds NaN or Inf), B's value of physical_k(k) at place k of each K tile. A block
// a column: its range, then eight places a thread (a 16-byte store of each part). B is
// small, and the block's loads down its column wait on latency, not bandwidth: a thousand
// threads, each with its loads in flight together. Block 0 also zeroes what the GEMM and
// the last kernel count into (`zeroed`, `zeroed_count` ints), which saves a launch.
constexpr int kSplitColumnThreads = 1024, kLoadsInFlight = 4;

__global__ void __launch_bounds__(kSplitColumnThreads) split_columns_kernel(const float* b, int* column_exponents,
                                                                            __half* split, int k, int n, int padded_k,
                                                                            int* zeroed, int zeroed_count) {
    __shared__ int column_exponent;
    const int column = blockIdx.x;
    if (column == 0)
        for (int i = threadIdx.x; i < zeroed_count; i += kSplitColumnThreads) zeroed[i] = 0;
    const auto value = [&](int row) { return row < k ? b[static_cast<std::size_t>(row) * n + column] : 0.0f; };
    MagnitudeRange range;
    for (int first = threadIdx.x; first < k; first += kLoadsInFlight * kSplitColumnThreads) {
        float values[kLoadsInFlight];
#pragma unroll
        for (int i = 0; i < kLoadsInFlight; ++i) values[i] = value(first + i * kSplitColumnThreads);
#pragma unroll
        for (int i = 0; i < kLoadsInFlight; ++i) range.include(values[i]);
    }
    range = block_range<kSplitColumnThreads>(range);
    if (threadIdx.x == 0) {
        const bool splits = !range.non_finite && fits_two_f16_parts(range.largest, range.smallest);
        column_exponent = splits ? scaling_exponent(range.largest) : kLeftToFallback;
        column_exponents[column] = column_exponent;
    }
    __syncthreads();
    int exponents[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) exponents[i] = column_exponent;
    __half* const out = split + static_cast<std::size_t>(column) * 2 * padded_k;
    for (int place = 8 * threadIdx.x; place < padded_k; place += 8 * kSplitColumnThreads) {
        const int tile_start = place / kBlockK * kBlockK;
        float eight[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) eight[i] = value(tile_start + physical_k(place % kBlockK + i));
        const EightSplitValues parts = split_eight(eight, exponents);
        store_eight(out + place, parts.lo);
        store_eight(out + padded_k + place, parts.hi);
    }
}

// C = alpha 2^-(column exponent) (the pieces' sums, added in run order) + beta C, four
// columns a thread; alpha's term left out where the row or the column went to the
// fallback. The lists for it: the threads of row 0 list the flagged columns, those of
// column 0 the rows the GEMM kept (it lists those it flags). Where every row or every
// column is flagged, the lists alone: the fallback takes it all, from C0.
__global__ void finish_kernel(GemmProblem problem, const float* partials, SplitBlockRuns work,
                              const int* column_exponents, const int* row_flags, float* c, Flagged flagged) {
    const int m = problem.shape.m, n = problem.shape.n;
    __shared__ bool whole;
    if (threadIdx.x == 0) {  // C has at most kMaxColumns columns
        bool every_column_flagged = true;
        for (int j = 0; j < n && every_column_flagged; ++j)
            every_column_flagged = column_exponents[j] == kLeftToFallback;
        whole = flagged.counts[0] == m || every_column_flagged;
    }
    __syncthreads();
    const std::size_t count = static_cast<std::size_t>(m) * n / 4;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        const std::size_t first = 4 * i;
        const int row = static_cast<int>(first / n), column = static_cast<int>(first % n);
        const int4 exponents = *reinterpret_cast<const int4*>(column_exponents + column);
        if (row == 0) {
            const int column_exponent[4] = {exponents.x, exponents.y, exponents.z, exponents.w};
            for (int j = 0; j < 4; ++j)
                if (column_exponent[j] == kLeftToFallback) flagged.flag_column(column + j);
        }
        if (whole) continue;
        const int split_block = row / kBlockRows;
        const long long first_unit = static_cast<long long>(split_block) * work.k_tiles;
        const int first_run = work.run_of(first_unit), last_run = work.run_of(first_unit + work.k_tiles - 1);
        const std::size_t in_slot = static_cast<std::size_t>(row % kBlockRows) * kBlockColumns + column % kBlockColumns;
        float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int run = first_run; run <= last_run; ++run) {
            const std::size_t slot = work.slot(split_block, run, column / kBlockColumns);
            const float4 piece = load_float4(partials + slot * kBlockRows * kBlockColumns + in_slot);
            sum.x += piece.x, sum.y += piece.y, sum.z += piece.z, sum.w += piece.w;
        }
        const bool row_left = row_flags[row] != 0;
        const auto scaled = [&](float s, int exponent) {
            return row_left || exponent == kLeftToFallback ? 0.0f : ldexpf(s, -exponent);
        };
        const float acc[4] = {scaled(sum.x, exponents.x), scaled(sum.y, exponents.y), scaled(sum.z, exponents.z),
                              scaled(sum.w, exponents.w)};
        store_scaled_float4(c + first, acc, problem.alpha, problem.beta);
        if (column == 0 && !row_left) flagged.keep_row(row, m);
    }
}

}  // namespace

void launch_split_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

// Where A is the operand to split in registers (23_split_in_registers.cuh): C no wider than
// kMaxColumns and at least kMinRowsPerColumn times taller than wide, so that B is small
// beside A and the pre-pass's loads down its columns cost little. Measured in the same
// process on the H100 (docs/notes): ahead of stage 23's path on every shape tried with 16
// rows or more a column (16384 x 256 x 4096: 1.93x SGEMM against 1.33x), behind it at 4
// (512 x 128 x 4096) and 1 (256 x 256 x 65536: 0.49x against 1.04x).
constexpr int kMaxColumns = 256, kMinRowsPerColumn = 16;

bool splits_a_in_registers(const GemmShape& shape) {
    return shape.n <= kMaxColumns && static_cast<long long>(shape.n) * kMinRowsPerColumn <= shape.m &&
           shape.k % 4 == 0;
}

void launch_a_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream) {
    if (!splits_a_in_registers(problem.shape)) return launch_split_in_registers(problem, a, b, c, stream);
    const auto [m, n, k] = problem.shape;
    static const int sms = std::max(current_sm_count(), 1);
    const int padded_k = ceil_div(k, kBlockK) * kBlockK, k_tiles = padded_k / kBlockK;
    const int row_blocks = ceil_div(m, kBlockRows), column_blocks = ceil_div(n, kBlockColumns);
    const long long units = static_cast<long long>(row_blocks) * k_tiles;
    const int runs = static_cast<int>(std::min<long long>(std::max(sms / column_blocks, 1), units));
    const SplitBlockRuns work{k_tiles, column_blocks, units, runs};

    // B', the pieces' sums (a slot for each tile and CTA), then the ints: column exponents,
    // counts and row flags (which the pre-pass zeroes), the row order and the flagged columns.
    static GrowingWorkspace workspace("stage 24's split columns and partial sums");
    const std::size_t b_values = static_cast<std::size_t>(n) * 2 * padded_k;
    const std::size_t partial_values = static_cast<std::size_t>(work.slot(row_blocks, runs, 0)) * kBlockRows * kBlockColumns;
    const std::size_t ints = 2 * static_cast<std::size_t>(n) + 4 + 2 * static_cast<std::size_t>(m);
    auto* const b_split = static_cast<__half*>(workspace.at_least(b_values * 2 + partial_values * 4 + ints * 4));
    auto* const partials = reinterpret_cast<float*>(b_split + b_values);
    int* const column_exponents = reinterpret_cast<int*>(partials + partial_values);
    int* const counts = column_exponents + n;
    int* const row_flags = counts + 4;
    int* const row_order = row_flags + m;
    int* const flagged_columns = row_order + m;
    const Flagged flagged{row_order, flagged_columns, counts};

    split_columns_kernel<<<n, kSplitColumnThreads, 0, stream>>>(b, column_exponents, b_split, k, n, padded_k, counts,
                                                                4 + m);
    const CUtensorMap a_map = make_fp32_tensor_map(a, m, k, kBlockRows, kBoxK);
    const CUtensorMap b_map = make_f16_tensor_map(b_split, n, 2 * padded_k, kBlockColumns, kBlockK);
    cudaFuncSetAttribute(a_in_registers_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes);
    a_in_registers_kernel<<<runs * column_blocks, kThreads, kSharedBytes, stream>>>(
        a_map, b_map, partials, row_flags, problem.shape, padded_k, work, flagged);
    constexpr int kFinishThreads = 256;
    const int finish_blocks =
        static_cast<int>(std::min<std::size_t>(ceil_div(m * (n / 4), kFinishThreads), 8 * static_cast<std::size_t>(sms)));
    finish_kernel<<<finish_blocks, kFinishThreads, 0, stream>>>(problem, partials, work, column_exponents, row_flags, c,
                                                                 flagged);
    launch_fp32_fallback(problem, a, b, c, flagged, stream);
}

}  // namespace sgemm
