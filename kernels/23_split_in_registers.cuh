// Stage 23's kernel, which stage 24 reuses (read 23_split_in_registers.cu first): one
// operand read as FP32 and split in registers, the other's fp16 parts from a pre-pass, the
// split blocks' K tiles shared out in runs, each piece's sums in a partial slot, and what
// the last kernels share. Stage 23 splits B (as B^T, wgmma's A), stage 24 A; the little
// that differs (how the split operand's tile is loaded and laid out, a fragment read from
// it, a piece written) is the kernel's SplitOperand, which each chapter defines.
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "22_fp32_fallback.cuh"
#include "23_split_fragment.cuh"
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

// Stream-K over split blocks: kSplitBlock lines (columns of B in stage 23, rows of A in
// stage 24) of the operand that is split in registers, a consumer's m64 block each. The
// split blocks' K tiles in a row (a block's K tiles, then the next block's) are cut into
// equal runs; each run goes to side_blocks CTAs side by side in the grid, one for each
// block of kSideBlock lines of the other operand (the wgmma's N), which read the same
// tiles of the split operand at the same time (once from DRAM). A CTA's sums for each split
// block its run touches go to partial slot (split block + run) side_blocks + side block, a
// tile of C: the runs and the split blocks interleave, so no two pieces share a slot.
struct SplitBlockRuns {
    static constexpr int kSplitBlock = 128, kSideBlock = 64;

    int k_tiles;      // of each split block
    int side_blocks;  // of kSideBlock in the other operand
    long long units;  // split blocks x k_tiles
    int runs;

    // Run r takes the units from run_start(r) up to run_start(r + 1); the run that holds
    // unit u is the last that starts at or before it.
    __host__ __device__ long long run_start(int run) const { return units * run / runs; }
    __host__ __device__ int run_of(long long unit) const { return static_cast<int>(((unit + 1) * runs - 1) / units); }
    __host__ __device__ long long slot(int split_block, int run, int side_block) const {
        return (static_cast<long long>(split_block) + run) * side_blocks + side_block;
    }
};

constexpr int kBlockK = 64;
constexpr int kConsumers = 2, kThreads = 128 * (1 + kConsumers);
constexpr int kSplitBlock = SplitBlockRuns::kSplitBlock;  // lines of the split operand: an m64 block a consumer
constexpr int kSideBlock = SplitBlockRuns::kSideBlock;    // lines of the other operand: the wgmma's N
static_assert(kSplitBlock == 64 * kConsumers, "one m64 block a consumer");
constexpr int kSlotValues = kSplitBlock * kSideBlock;  // a piece: a tile of C
constexpr int kStages = 4;
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;  // after setmaxnreg
static_assert(128 * kProducerRegisters + 128 * kConsumers * kConsumerRegisters <= 65536, "the SM's registers");

// One stage of the ring: the split operand's K tile in FP32 (its chapter's SplitOperand
// lays out the boxes), then the other operand's parts, kSideBlock lines by 64 values of K
// in fp16, lo then hi, each one 128-byte-swizzled box. full[s]: stage s holds its K tile;
// empty[s]: both consumers are done with it.
struct alignas(1024) SplitStage {
    std::uint8_t split[kSplitBlock * kBlockK * 4];
    std::uint8_t side_lo[kSideBlock * kBlockK * 2];
    std::uint8_t side_hi[kSideBlock * kBlockK * 2];
};
struct SplitSharedMemory {
    SplitStage ring[kStages];
    std::uint64_t full[kStages], empty[kStages];
};
constexpr int kStageBytes = sizeof(SplitStage), kSharedBytes = sizeof(SplitSharedMemory);
static_assert(kStageBytes == sizeof(SplitStage::split) + 2 * sizeof(SplitStage::side_lo), "a stage is its tiles");
static_assert(kSharedBytes <= 227 * 1024, "an H100 block has at most 227 KB of shared memory");

// SplitOperand, what a chapter gives the kernel:
//   static load_tile(tile, map, first_line, k0, full): TMA loads of the split operand's K
//     tile k0 of the lines from first_line on, into SplitStage::split;
//   SplitOperand(lines, quad), then load_fragment(tile, values): the thread's TileFragment
//     (23_split_fragment.cuh) of its lines of the split block, from a tile in shared memory;
//   static write_piece(slot, sums, h, line): the sums of line h (line `line` of the split
//     block) into a partial slot, a tile of C;
//   static line_count(shape), flag(flagged, line): the split operand's lines, and the list
//     (Flagged) that takes one the check left to the fallback;
//   static skips(shape, flagged): nothing to do (the fallback takes it all).
//
// Per unit of a CTA's run, a split block's K tile: each consumer loads its fragment, finds
// its rows' scaling and splits it into fp16 parts (a unit ahead, while the tensor cores
// multiply the one before), and runs three wgmmas a k16 step, hi.hi in one partial and the
// two lo products in another, which are added to its FP32 sums with the scaling undone.
// Where a split block's piece ends, the sums go to its slot, and the lines whose check
// failed are listed.
template <class SplitOperand>
__global__ void __launch_bounds__(kThreads, 1)
    split_in_registers_kernel(const __grid_constant__ CUtensorMap split_map, const __grid_constant__ CUtensorMap side_map,
                              float* partials, int* line_flags, GemmShape shape, int padded_k, SplitBlockRuns work,
                              Flagged flagged) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    if (SplitOperand::skips(shape, flagged)) return;
    SplitSharedMemory& shared = shared_memory_as<SplitSharedMemory>();
    SplitStage* const ring = shared.ring;
    std::uint64_t* const full = shared.full;
    std::uint64_t* const empty = shared.empty;

    init_ring_barriers(full, empty, kStages, kConsumers);
    __syncthreads();

    const int run = blockIdx.x / work.side_blocks, side_block = blockIdx.x % work.side_blocks;
    const long long begin = work.run_start(run), end = work.run_start(run + 1);
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        warpgroup_release_registers<kProducerRegisters>();
        if (threadIdx.x == 0)
#pragma unroll 1
            for (long long unit = begin; unit < end; ++unit) {
                const int passed = static_cast<int>(unit - begin), stage = passed % kStages;
                const int first_line = static_cast<int>(unit / work.k_tiles) * kSplitBlock;
                const int k0 = static_cast<int>(unit % work.k_tiles) * kBlockK;
                mbarrier_wait(&empty[stage], (passed / kStages % 2) ^ 1);  // parity 1 first: free
                mbarrier_arrive_expect_tx(&full[stage], kStageBytes);
                SplitOperand::load_tile(ring[stage].split, &split_map, first_line, k0, &full[stage]);
                tma_load_2d(ring[stage].side_lo, &side_map, k0, side_block * kSideBlock, &full[stage]);
                tma_load_2d(ring[stage].side_hi, &side_map, padded_k + k0, side_block * kSideBlock, &full[stage]);
            }
        return;
    }
    warpgroup_claim_registers<kConsumerRegisters>();
    const int consumer = warpgroup - 1, quad = threadIdx.x % 4;
    // The thread's lines of the split block: the rows h = 0, 1 of its accumulators.
    int lines[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) lines[h] = 64 * consumer + wgmma_accumulator_position(threadIdx.x % 128, 0, h).row;
    const SplitOperand operand(lines, quad);
    // Unit `passed` of the run: its fragment loaded, scaled and split.
    const auto prepare = [&](int passed, RowScaling& scaling, SplitFragment& parts) {
        const int stage = passed % kStages;
        mbarrier_wait(&full[stage], passed / kStages % 2);
        TileFragment values;
        operand.load_fragment(shared_address(ring[stage].split), values);
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
            const std::uint64_t side_hi = a_step_descriptor(ring[stage].side_hi, 0, step);
            const std::uint64_t side_lo = a_step_descriptor(ring[stage].side_lo, 0, step);
            wgmma_m64n64k16_f16_a_in_registers(hi_products, parts.hi[step], side_hi, step > 0);
            wgmma_m64n64k16_f16_a_in_registers(lo_products, parts.hi[step], side_lo, step > 0);
            wgmma_m64n64k16_f16_a_in_registers(lo_products, parts.lo[step], side_hi, true);
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

        if (unit + 1 == end || (unit + 1) % work.k_tiles == 0) {  // the split block's piece
            const int split_block = static_cast<int>(unit / work.k_tiles);
            float* const slot = partials + static_cast<std::size_t>(work.slot(split_block, run, side_block)) * kSlotValues;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int line = split_block * kSplitBlock + lines[h];
                if (left[h] && quad == 0 && line < SplitOperand::line_count(shape) && atomicExch(&line_flags[line], 1) == 0)
                    SplitOperand::flag(flagged, line);
                SplitOperand::write_piece(slot, sums, h, lines[h]);
                left[h] = false;
            }
#pragma unroll
            for (int i = 0; i < 32; ++i) sums[i] = 0.0f;
        }
    }
#endif
}

// The last kernels' share: the four values of C at `in_slot` of the slots of a split block
// and a side block, each value's pieces added in run order.
__device__ __forceinline__ float4 sum_pieces(const float* partials, const SplitBlockRuns& work, int split_block,
                                             int side_block, std::size_t in_slot) {
    const long long first_unit = static_cast<long long>(split_block) * work.k_tiles;
    const int first_run = work.run_of(first_unit), last_run = work.run_of(first_unit + work.k_tiles - 1);
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int run = first_run; run <= last_run; ++run) {
        const std::size_t slot = work.slot(split_block, run, side_block);
        const float4 piece = load_float4(partials + slot * kSlotValues + in_slot);
        sum.x += piece.x, sum.y += piece.y, sum.z += piece.z, sum.w += piece.w;
    }
    return sum;
}

// A launch of stage 23's or 24's kernels: K padded to whole K tiles, the runs (one an SM
// for each side block, over the split blocks of `split_lines` lines), and the workspace:
// the other operand's parts (side_lines x 2 padded_k), the pieces' sums (a slot for each
// tile and CTA), then the ints: a column's, Flagged's counts, a row's, the row order and
// the flagged columns, one after the other (a pre-pass zeroes a column's and the counts,
// or the counts and a row's, at once).
struct SplitLaunch {
    int sms, padded_k, side_lines;
    SplitBlockRuns work;
    __half* side_parts;
    float* partials;
    int* per_column;  // n: stage 23's column flags, stage 24's column exponents
    int* counts;      // 4
    int* per_row;     // m: stage 23's row exponents, stage 24's row flags
    Flagged flagged;
};

inline SplitLaunch plan_split_launch(const GemmShape& shape, int split_lines, int side_lines,
                                     GrowingWorkspace& workspace) {
    const auto [m, n, k] = shape;
    static const int sms = std::max(current_sm_count(), 1);
    SplitLaunch launch{sms, ceil_div(k, kBlockK) * kBlockK, side_lines};
    const int k_tiles = launch.padded_k / kBlockK;
    const int split_blocks = ceil_div(split_lines, kSplitBlock), side_blocks = ceil_div(side_lines, kSideBlock);
    const long long units = static_cast<long long>(split_blocks) * k_tiles;
    const int runs = static_cast<int>(std::min<long long>(std::max(sms / side_blocks, 1), units));
    launch.work = SplitBlockRuns{k_tiles, side_blocks, units, runs};

    WorkspaceLayout layout;
    const auto side_parts = layout.add<__half>(static_cast<std::size_t>(side_lines) * 2 * launch.padded_k);
    const auto partials = layout.add<float>(static_cast<std::size_t>(launch.work.slot(split_blocks, runs, 0)) * kSlotValues);
    const auto ints = layout.add<int>(2 * static_cast<std::size_t>(n) + 4 + 2 * static_cast<std::size_t>(m));
    void* const base = workspace.at_least(layout.bytes());
    launch.side_parts = side_parts.in(base);
    launch.partials = partials.in(base);
    launch.per_column = ints.in(base);
    launch.counts = launch.per_column + n;
    launch.per_row = launch.counts + 4;
    launch.flagged = Flagged{launch.per_row + m, launch.per_row + 2 * m, launch.counts};
    return launch;
}

// The GEMM kernel, a CTA for each run and side block, once the pre-pass has written the
// other operand's parts.
template <class SplitOperand>
void launch_split_in_registers_kernel(const SplitLaunch& launch, const CUtensorMap& split_map, int* line_flags,
                                      const GemmShape& shape, cudaStream_t stream) {
    const CUtensorMap side_map =
        make_f16_tensor_map(launch.side_parts, launch.side_lines, 2 * launch.padded_k, kSideBlock, kBlockK);
    const auto kernel = split_in_registers_kernel<SplitOperand>;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes);
    kernel<<<launch.work.runs * launch.work.side_blocks, kThreads, kSharedBytes, stream>>>(
        split_map, side_map, launch.partials, line_flags, shape, launch.padded_k, launch.work, launch.flagged);
}

// The last kernel's grid: four values of C a thread, at most eight blocks an SM.
constexpr int kFinishThreads = 256;

inline int finish_blocks(const GemmShape& shape, int sms) {
    return static_cast<int>(
        std::min<std::size_t>(ceil_div(shape.m * (shape.n / 4), kFinishThreads), 8 * static_cast<std::size_t>(sms)));
}

}  // namespace sgemm
