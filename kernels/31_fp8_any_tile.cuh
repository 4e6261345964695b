// Stage 31's parts (read 31_fp8_any_tile.cu first): stage 30's kernel (any_tile_kernel) on
// e4m3 operands. What it takes from stage 30 as it is: the kernel, the ring's configuration
// (AnyTileConfig: a K block of 128 e4m3 values is 128 bytes a row, as bf16's K tile of 64),
// the producer (produce_k_tiles), the scheduler (schedule_for, stream-K's hand-over,
// ClusterSplit), the epilogues (TmaChunkStores, DirectStores, the split's sums) with D as
// bf16 C, and the list of compiled tiles (TileList). What it defines: the operands' tiles and
// orientations in e4m3 (both K-major: FP8's wgmma reads no other), the scales of a K block
// (PromotionScales) and the mainloop that promotes each K block's sums into FP32 with them
// (multiply_piece_promoted, stage 27's promotion, stage 28's scales), given to the kernel as
// Fp8Mainloop.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>

#include "28_fp8_block_scaled.cuh"
#include "30_any_tile.cuh"
#include "common/fp8_problem.hpp"
#include "common/wgmma_fp8.cuh"

namespace sgemm {
namespace fp8_any_tile {

// ---- Operands: an e4m3 operand's K block (128 values of K, 128 bytes a row) in a ring
// stage. The rows, swizzle and wgmma descriptors are stage 30's KMajorTile's (a k32 step of
// e4m3 is 32 bytes, as a k16 step of bf16); the tensor map and the K coordinate are bytes.
template <int Rows, int Parts = 1>
struct Fp8KMajorTile : any_tile::KMajorTile<Rows, Parts> {
    using Base = any_tile::KMajorTile<Rows, Parts>;
    static CUtensorMap map(const std::uint8_t* matrix, int rows, int k) {
        return make_tensor_map(CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, matrix, rows, k, Base::kBoxRows, kFp8ScaleBlock);
    }
    template <class Copy>
    __device__ static void load_part(std::uint8_t* tile, int first, int kb, int part, Copy copy) {
        copy(tile + part * Base::kBoxRows * 128, kb * kFp8ScaleBlock, first + part * Base::kBoxRows);
    }
};

// The FP8 problem is D = A B^T with B stored N x K (common/fp8_problem.hpp): both operands
// are K-major. Tokens as rows: A's rows are wgmma's M, B's its N (stage 29's way round).
template <int Rows, int Columns, int ClusterM>
struct Fp8TokensAsRows {
    using RowTile = Fp8KMajorTile<Rows>;
    using ColumnTile = Fp8KMajorTile<Columns, ClusterM>;
    static constexpr bool kSwapped = false;
    static CUtensorMap row_map(const GemmShape& s, const Fp8Operands& o) { return RowTile::map(o.a, s.m, s.k); }
    static CUtensorMap column_map(const GemmShape& s, const Fp8Operands& o) { return ColumnTile::map(o.b, s.n, s.k); }
    __host__ __device__ static int rows(const GemmShape& s) { return s.m; }
    __host__ __device__ static int columns(const GemmShape& s) { return s.n; }
};

// Weights as rows: D^T = B A^T, B's rows wgmma's M, the tokens its N (any multiple of 16).
template <int Rows, int Columns, int ClusterM>
struct Fp8WeightsAsRows {
    using RowTile = Fp8KMajorTile<Rows>;
    using ColumnTile = Fp8KMajorTile<Columns, ClusterM>;
    static constexpr bool kSwapped = true;
    static CUtensorMap row_map(const GemmShape& s, const Fp8Operands& o) { return RowTile::map(o.b, s.n, s.k); }
    static CUtensorMap column_map(const GemmShape& s, const Fp8Operands& o) { return ColumnTile::map(o.a, s.m, s.k); }
    __host__ __device__ static int rows(const GemmShape& s) { return s.n; }
    __host__ __device__ static int columns(const GemmShape& s) { return s.m; }
};

// ---- The configuration: stage 30's (AnyTileConfig), with the producer's registers of stage
// 26's (40): a consumer holds three tiles of values here, and 8 registers more a thread
// keep the 128-wide tiles from spilling. A stage holds, beside the operands, a K block's
// scales of the tokens' side of the tile (A's 1 x 128: wgmma's rows, or its columns swapped),
// and with WeightScales those of the weights' side too (B's 1 x 128), after them at the next
// 128 bytes (where TMA writes to shared memory).
template <int Tokens, int Weights, bool WeightScales>
inline constexpr int kFp8StageScaleBytes = WeightScales ? (4 * Tokens + 127) / 128 * 128 + 4 * Weights : 4 * Tokens;
template <template <int, int, int> class Orientation_, int Consumers, int MBlocks, int Columns, int ClusterM,
          bool WeightScales = false, bool Swapped = Orientation_<64 * MBlocks * Consumers, Columns, ClusterM>::kSwapped>
struct Fp8AnyTileConfig
    : any_tile::AnyTileConfig<Orientation_, Consumers, MBlocks, Columns, ClusterM,
                              kFp8StageScaleBytes<Swapped ? Columns : 64 * MBlocks * Consumers,
                                                  Swapped ? 64 * MBlocks * Consumers : Columns, WeightScales>> {
    using Base = any_tile::AnyTileConfig<Orientation_, Consumers, MBlocks, Columns, ClusterM,
                                         kFp8StageScaleBytes<Swapped ? Columns : 64 * MBlocks * Consumers,
                                                             Swapped ? 64 * MBlocks * Consumers : Columns,
                                                             WeightScales>>;
    // The same tile with room in a stage for B's 1 x 128 scales (rows_and_rows).
    using WithWeightScales = Fp8AnyTileConfig<Orientation_, Consumers, MBlocks, Columns, ClusterM, true>;
    static constexpr int kProducerRegisters = 40;
    static constexpr int kConsumerRegisters =
        std::min(232, (Base::kLaunchRegisters * (1 + Consumers) - kProducerRegisters) / Consumers / 8 * 8);
    // K blocks a consumer keeps on the tensor cores (the mainloop's): two where the sums and
    // two blocks fit its registers; else one, and the other consumers' blocks keep the tensor
    // cores busy while it adds its own in (DeepGEMM's way: its 128 x 160 and wider tiles).
    static constexpr int kValues = MBlocks * Columns / 2;
    static constexpr int kBlocksInFlight = 3 * kValues + 24 <= kConsumerRegisters ? 2 : 1;
    static_assert(2 * kValues + 24 <= kConsumerRegisters, "the sums and a K block fit a consumer's registers");
};

// ---- The scales of a K block, as a consumer's thread applies them when it promotes (the
// layouts: common/fp8_problem.hpp). A side of the tile (wgmma's rows or its columns) is the
// tokens' (A's scales) or the weights' (B's), each scaled
//   - once a tensor (tensor): applied to the sums once, after the last K block;
//   - a row per 128 of K (A, but for tensor): the producer loads the K block's scales of the
//     tile's tokens into the stage beside A and B (stage 28's tensor map of them; past A's
//     end, zeros), and the consumer reads them there;
//   - a 128 x 128 block (B in the recipe): at [row / 128][kb] in global memory. An m64 block
//     of rows lies in one block of B, a tile's columns in at most two (128 at most).
// With B's 1 x 128 (rows_and_rows) both sides are a row per 128 of K, both in the stage (the
// weights' after the tokens': Config::WithWeightScales). A thread's sums are two
// rows an m64 block (i, half) by two adjacent columns of every 8 (j, p). Its rows' scales,
// and the one or two blocks of its columns, are read as it issues the K block and used once
// its wgmmas are done; its columns' scales of the stage (swapped: up to 64 values a thread)
// are read as it promotes, while its next K block is on the tensor cores: registers for them
// would not leave room for two blocks of sums.
template <class Config, Fp8Scaling kScaling>
struct PromotionScales {
    enum class Kind { tensor, rows, blocks };
    static constexpr Kind kTokens = kScaling == Fp8Scaling::tensor ? Kind::tensor : Kind::rows;
    static constexpr Kind kWeights = kScaling == Fp8Scaling::tensor          ? Kind::tensor
                                     : kScaling == Fp8Scaling::rows_and_rows ? Kind::rows
                                                                             : Kind::blocks;
    static constexpr bool kSwapped = Config::Orientation::kSwapped;
    static constexpr Kind kRowKind = kSwapped ? kWeights : kTokens, kColumnKind = kSwapped ? kTokens : kWeights;
    static constexpr int kMBlocks = Config::kMBlocks, kColumns = Config::kColumns;
    // Tiles start at multiples of their width, so 128 - gcd(width, 128) into a block at most.
    static_assert(kColumnKind != Kind::blocks || kFp8ScaleBlock - std::gcd(kColumns, kFp8ScaleBlock) + kColumns <=
                                                     2 * kFp8ScaleBlock,
                  "a tile's columns lie in two blocks of B");
    // The scales a stage holds (their count): the tokens' (0 for tensor), then the weights'
    // (rows_and_rows); the wgmma rows' and columns' among them.
    static constexpr int kTokenScales = kTokens == Kind::rows ? (kSwapped ? Config::kColumns : Config::kRows) : 0;
    static constexpr int kWeightScales = kWeights == Kind::rows ? (kSwapped ? Config::kRows : Config::kColumns) : 0;
    // The weights' first, in floats: the tokens' rounded up to 128 bytes (TMA's destination).
    static constexpr int kWeightsInStage = kWeightScales > 0 ? (kTokenScales + 31) / 32 * 32 : 0;
    static constexpr int kRowsInStage = kSwapped ? kWeightsInStage : 0;
    static constexpr int kColumnsInStage = kSwapped ? 0 : kWeightsInStage;
    static_assert(4 * (kWeightsInStage + kWeightScales) <= Config::kStageExtraBytes,
                  "a stage holds the scales (WithWeightScales)");

    const float* weight_blocks;  // B's 128 x 128 scales (blocks)
    int weight_block_rows_end, weight_blocks_stride;  // B's last block row; the padded K blocks of one
    float tensor_scale;  // A's times B's, where both are one a tensor

    __device__ PromotionScales(const Fp8Operands& operands, const GemmShape& shape)
        : weight_blocks(operands.b_scales),
          weight_block_rows_end((shape.n - 1) / kFp8ScaleBlock),
          weight_blocks_stride(ceil_div(ceil_div(shape.k, kFp8ScaleBlock), 4) * 4),
          tensor_scale(kScaling == Fp8Scaling::tensor ? operands.a_scales[0] * operands.b_scales[0] : 1.0f) {}

    // Where this thread's scales of a tile lie, worked out once a tile (stage 28's Factors):
    // worked out every K block, they took about 90 integer instructions a two K blocks that
    // stage 29's loop has not.
    struct OfTile {
        int row_in_stage[kMBlocks];  // rows: the thread's first row of m64 block i among the stage's scales
        const float* row_block[kMBlocks];  // blocks: B's block of m64 block i's rows, at K block 0
        const float* column_block;  // blocks: B's first block the tile's columns lie in, at K block 0
        int second_block;  // blocks: the second's place from the first (0 past B's last block)
        int first_in_second;  // blocks: the tile's first column in the second of them, from its corner
        int column_in_stage;  // rows: the thread's first column among the stage's scales
    };
    __device__ OfTile of_tile(TileOrigin tile, int first_row) const {
        OfTile t{};
        const int thread = threadIdx.x % 128;
#pragma unroll
        for (int i = 0; i < kMBlocks; ++i) {
            const int block_row = first_row + 64 * i;
            if constexpr (kRowKind == Kind::rows)
                t.row_in_stage[i] = kRowsInStage + block_row + wgmma_accumulator_position(thread, 0, 0).row;
            if constexpr (kRowKind == Kind::blocks)
                t.row_block[i] = weight_block((tile.row + block_row) / kFp8ScaleBlock);
        }
        if constexpr (kColumnKind == Kind::blocks) {
            const int first = tile.col / kFp8ScaleBlock;
            t.column_block = weight_block(first);
            t.second_block = static_cast<int>(weight_block(first + 1) - t.column_block);
            t.first_in_second = kFp8ScaleBlock - tile.col % kFp8ScaleBlock;
        }
        if constexpr (kColumnKind == Kind::rows)
            t.column_in_stage = kColumnsInStage + wgmma_accumulator_position(thread, 0, 0).column;
        return t;
    }

    struct OfBlock {
        float row[kMBlocks][2];
        float column_block[2];  // the blocks of B the tile's columns lie in (blocks)
    };
    // K block kb's scales of this thread's rows (and columns' blocks) in the tile `t` says;
    // `stage_scales`: the stage's tokens'. (A thread's second row of an m64 block is 8 below
    // its first: wgmma's layout.)
    __device__ static OfBlock load(int kb, const OfTile& t, const float* stage_scales) {
        OfBlock f;
#pragma unroll
        for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                if constexpr (kRowKind == Kind::tensor) {
                    f.row[i][half] = 1.0f;
                } else if constexpr (kRowKind == Kind::rows) {
                    f.row[i][half] = stage_scales[t.row_in_stage[i] + 8 * half];
                } else {
                    f.row[i][half] = __ldg(t.row_block[i] + kb);
                }
            }
        if constexpr (kColumnKind == Kind::blocks) {
            f.column_block[0] = __ldg(t.column_block + kb);
            f.column_block[1] = __ldg(t.column_block + t.second_block + kb);
        }
        return f;
    }
    // sums += block x its scales.
    __device__ static void promote(WarpgroupAccumulators<kMBlocks, kColumns>& sums,
                                   const WarpgroupAccumulators<kMBlocks, kColumns>& block, const OfBlock& f,
                                   const OfTile& t, const float* stage_scales) {
        if constexpr (kColumnKind == Kind::rows) {
            // The columns' scales, pair j's of every 8 columns from the stage.
            const float2* const pairs = reinterpret_cast<const float2*>(stage_scales + t.column_in_stage);
            promote_with(sums, block, f, [&](int j) { return pairs[4 * j]; });
        } else if constexpr (kColumnKind == Kind::blocks) {
            // Each 8-column group lies in the first or the second block: the four products of
            // the thread's two rows' and the two blocks' scales once, then one FFMA a value
            // (stage 28's). Selects, not an array indexed by the block: that went to local
            // memory there.
            float first[kMBlocks][2], second[kMBlocks][2];
#pragma unroll
            for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    first[i][half] = f.row[i][half] * f.column_block[0];
                    second[i][half] = f.row[i][half] * f.column_block[1];
                }
#pragma unroll
            for (int j = 0; j < kColumns / 8; ++j) {
                const bool in_second = 8 * j >= t.first_in_second;
#pragma unroll
                for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
                    for (int half = 0; half < 2; ++half) {
                        const float factor = in_second ? second[i][half] : first[i][half];
#pragma unroll
                        for (int p = 0; p < 2; ++p) {
                            float& sum = sums[i][4 * j + 2 * half + p];
                            sum = fmaf(block[i][4 * j + 2 * half + p], factor, sum);
                        }
                    }
            }
        } else {
            promote_with(sums, block, f, [](int) { return make_float2(1.0f, 1.0f); });
        }
    }
    // After the last K block: the tensors' scales.
    __device__ void finish(WarpgroupAccumulators<kMBlocks, kColumns>& sums) const {
        if constexpr (kScaling == Fp8Scaling::tensor)
#pragma unroll
            for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
                for (int j = 0; j < kColumns / 2; ++j) sums[i][j] *= tensor_scale;
    }

private:
    // sums += block x its rows' scales x column_pair(j)'s, pair j's of every 8 columns.
    template <class ColumnPair>
    __device__ static void promote_with(WarpgroupAccumulators<kMBlocks, kColumns>& sums,
                                        const WarpgroupAccumulators<kMBlocks, kColumns>& block, const OfBlock& f,
                                        ColumnPair column_pair) {
#pragma unroll
        for (int j = 0; j < kColumns / 8; ++j) {
            const float2 scale = column_pair(j);
#pragma unroll
            for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    float& even = sums[i][4 * j + 2 * half];
                    float& odd = sums[i][4 * j + 2 * half + 1];
                    even = fmaf(block[i][4 * j + 2 * half], f.row[i][half] * scale.x, even);
                    odd = fmaf(block[i][4 * j + 2 * half + 1], f.row[i][half] * scale.y, odd);
                }
        }
    }
    // Block `block` of B's rows (the last where past the end), at K block 0.
    __device__ const float* weight_block(int block) const {
        return weight_blocks + static_cast<std::size_t>(min(block, weight_block_rows_end)) * weight_blocks_stride;
    }
};

// ---- The mainloop: a consumer's K blocks of one piece. Each K block's four k32 wgmmas sum
// from zero in a block of accumulators (the MMA's keeps about 14 bits: wgmma_fp8.cuh); once
// they are done the stage goes back to the producer and the block is added into `sums`, in
// FP32, times its scales. Two blocks take turns (even and odd K blocks, stage 27's), so that
// the next K block is on the tensor cores while the last is added in: a thread holds three
// tiles of values. Where three do not fit (Config::kBlocksInFlight 1), a consumer waits for
// each block before it issues the next, and its tile's other consumers keep the tensor cores
// busy meanwhile.
template <class Config, Fp8Scaling kScaling>
__device__ __forceinline__ void multiply_piece_promoted(WarpgroupAccumulators<Config::kMBlocks, Config::kColumns>& sums,
                                                        const PromotionScales<Config, kScaling>& scales,
                                                        const WorkPiece& piece, TileOrigin tile, int consumer_row,
                                                        std::uint8_t* ring, const std::uint8_t* extras,
                                                        std::uint64_t* full, std::uint64_t* empty, int& passed,
                                                        bool signals) {
    using RowTile = typename Config::RowTile;
    using ColumnTile = typename Config::ColumnTile;
    using Accumulators = WarpgroupAccumulators<Config::kMBlocks, Config::kColumns>;
    using OfBlock = typename PromotionScales<Config, kScaling>::OfBlock;
    using OfTile = typename PromotionScales<Config, kScaling>::OfTile;
    constexpr int kStages = Config::kStages, kMBlocks = Config::kMBlocks, kColumns = Config::kColumns;
    // The consumer's first row through a shuffle, so that ptxas knows it warp-uniform (stage
    // 26's): the wgmma descriptors that follow from it can live in uniform registers.
    const int first_row = __shfl_sync(0xffffffff, consumer_row, 0);
    // K block kb onto the tensor cores, into `block`; its scales and its stage to `factors`
    // and `stage`. The ring's place is stepped (stage 26's RingSlot), not divided out of
    // `passed` every K block (kStages is rarely a power of two).
    const OfTile of_tile = scales.of_tile(tile, first_row);
    RingSlot<kStages> slot{passed % kStages, static_cast<unsigned>(passed / kStages % 2)};
    const auto stage_scales = [&](int stage) {
        return reinterpret_cast<const float*>(Config::stage_extras(extras, stage));
    };
    const auto issue = [&](Accumulators& block, int kb, OfBlock& factors, int& stage) {
        stage = slot.stage;
        mbarrier_wait(&full[stage], slot.phase);
        slot = slot.next();
        ++passed;
        factors = scales.load(kb, of_tile, stage_scales(stage));
        // A k32 step starts 32 bytes further into the rows: 2 in the descriptors' address
        // field, added to the K block's first descriptors (stage 26's) rather than each made
        // again (the shifts and masks took about 40 uniform instructions a two K blocks).
        const std::uint8_t* rows = Config::row_tile(ring, stage);
        std::uint64_t row_descriptors[kMBlocks];
#pragma unroll
        for (int i = 0; i < kMBlocks; ++i) row_descriptors[i] = RowTile::descriptor(rows, first_row + 64 * i, 0);
        const std::uint64_t column_descriptor = ColumnTile::descriptor(Config::column_tile(ring, stage), 0, 0);
        wgmma_fence();
#pragma unroll
        for (int step = 0; step < kFp8ScaleBlock / 32; ++step)
#pragma unroll
            for (int i = 0; i < kMBlocks; ++i)
                wgmma_m64k32_e4m3<kColumns>(block[i], row_descriptors[i] + 2 * step, column_descriptor + 2 * step,
                                            step > 0);
        wgmma_commit_group();
    };
    // Its sums, once wgmma_wait_group has seen them done: its stage is free, and they go into
    // the sums. Where the columns' scales are read from the stage as they do, the stage is
    // freed as the next block is added (freed right after, the reads waited for the arrive,
    // and the swapped tiles of 64 columns and more spilled): three stages are held then.
    constexpr bool kPromotesFromStage = PromotionScales<Config, kScaling>::kColumnKind ==
                                        PromotionScales<Config, kScaling>::Kind::rows;
    static_assert(!kPromotesFromStage || kStages >= 3, "two blocks in flight and one to free");
    int unreleased = -1;
    const auto release = [&](int stage) {
        // Where the warps read the stage as they promote, each warp's first lane frees it for
        // its warp (Fp8Mainloop::kReleasingWarps), a block later, once the warp has used what it
        // read there (DeepGEMM's arrival by warp). The warpgroup's first thread alone freed it
        // while another warp, a block behind, had still to read its columns' scales there: under
        // compute-sanitizer the producer's next K block overwrote them. (A __syncwarp before
        // the arrival spilled four more tiles.)
        if (signals) {
            if constexpr (Config::kClusterM > 1) {
                for (int cta = 0; cta < Config::kClusterM; ++cta) mbarrier_arrive_in_cta(&empty[stage], cta);
            } else {
                mbarrier_arrive(&empty[stage]);
            }
        }
    };
    const auto add = [&](Accumulators& block, const OfBlock& factors, int stage) {
#pragma unroll
        for (int i = 0; i < kMBlocks; ++i) wgmma_fence_accumulators(block[i]);
        if constexpr (kPromotesFromStage) {
            if (unreleased >= 0) release(unreleased);
            unreleased = stage;
        } else {
            release(stage);
        }
        scales.promote(sums, block, factors, of_tile, stage_scales(stage));
    };
    zero_accumulators<kMBlocks, kColumns>(sums);
    if constexpr (Config::kBlocksInFlight == 1) {
        Accumulators block;
        OfBlock factors;
        int stage = 0;
        for (int kb = piece.k_begin; kb < piece.k_end; ++kb) {
            issue(block, kb, factors, stage);
            wgmma_wait_group<0>();
            add(block, factors, stage);
        }
        if (kPromotesFromStage && unreleased >= 0) release(unreleased);
    } else if (piece.k_end > piece.k_begin) {
        // Every wait leaves the block just issued running (stage 27's shape: ptxas keeps the
        // wgmmas asynchronous in it).
        Accumulators even, odd;
        OfBlock factors_even, factors_odd;
        int stage_even = 0, stage_odd = 0;
        int kb = piece.k_begin;
        issue(even, kb, factors_even, stage_even);
        for (; kb + 2 < piece.k_end; kb += 2) {
            issue(odd, kb + 1, factors_odd, stage_odd);
            wgmma_wait_group<1>();
            add(even, factors_even, stage_even);
            issue(even, kb + 2, factors_even, stage_even);
            wgmma_wait_group<1>();
            add(odd, factors_odd, stage_odd);
        }
        if (kb + 1 < piece.k_end) {
            issue(odd, kb + 1, factors_odd, stage_odd);
            wgmma_wait_group<1>();
            add(even, factors_even, stage_even);
            wgmma_wait_group<0>();
            add(odd, factors_odd, stage_odd);
        } else {
            wgmma_wait_group<0>();
            add(even, factors_even, stage_even);
        }
        if (kPromotesFromStage && unreleased >= 0) release(unreleased);
    }
    scales.finish(sums);
}

// ---- D at N off 8, unswapped (D's rows not 16-byte aligned, which TMA cannot write; stage
// 30's kernel takes these stores as Mainloop::AnyNStores): stage 19's chunks of 32 columns in
// the consumer's C buffer, in FP32, then out of it a row a warp at a time, a value a lane (a
// warp's stores one run of the row), alpha and beta applied as each leaves (store_sum).
struct ChunkStoresAnyN {
    template <int kMBlocks, int kColumns, class COut>
    __device__ static void store(const WarpgroupAccumulators<kMBlocks, kColumns>& acc, const GemmProblem& problem,
                                 COut* c, std::uint8_t* buffer, int first_row, int first_column, int barrier_id) {
        static_assert(kColumns % kCChunkColumns == 0, "whole chunks of C");
        const int thread = threadIdx.x % 128, warp = thread / 32, lane = thread % 32;
#pragma unroll
        for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
            for (int chunk = 0; chunk < kColumns / kCChunkColumns; ++chunk) {
                const float* const values = acc[i] + chunk * kCChunkValues;
                named_barrier_sync(barrier_id, 128);  // the chunk before is out of the buffer
#pragma unroll
                for (int block = 0; block < kCChunkColumns / 8; ++block)
#pragma unroll
                    for (int half = 0; half < 2; ++half) {
                        const auto [row, column] = wgmma_accumulator_position(thread, block, half);
                        const int unit = (column / 4) ^ (row % 8);  // 16-byte units of 4 values
                        *reinterpret_cast<float2*>(buffer + row * 128 + unit * 16 + column % 4 * 4) =
                            make_float2(values[4 * block + 2 * half], values[4 * block + 2 * half + 1]);
                    }
                named_barrier_sync(barrier_id, 128);  // the chunk is in the buffer
                const int unit_in_row = lane / 4, byte_in_unit = lane % 4 * 4;
#pragma unroll 4
                for (int row = warp; row < kCChunkRows; row += 4) {
                    const float sum =
                        *reinterpret_cast<const float*>(buffer + row * 128 + (unit_in_row ^ (row % 8)) * 16 + byte_in_unit);
                    any_tile::store_sum<false>(problem, c, first_row + 64 * i + row,
                                     first_column + chunk * kCChunkColumns + lane, sum);
                }
            }
    }
};

// ---- The mainloop as stage 30's kernel takes it (any_tile::Bf16Mainloop says what that is):
// K blocks of 128 e4m3 values, the scales of kScaling, the operands (their scales) as its
// arguments; beside each K block the producer loads the tokens' scales of it (and, in
// rows_and_rows, the weights'; stage 28's map:
// a K block's scales of the tile's tokens are one box row; read as they were from global
// memory, by the consumer as it issued the block, the scales took 1.4 times the time at 8192).
template <Fp8Scaling kScaling>
struct Fp8Mainloop {
    static constexpr int kValuesPerKTile = kFp8ScaleBlock;
    static constexpr bool kTakesNOff8 = true;  // A and B both K-major: N counts B's rows
    using AnyNStores = ChunkStoresAnyN;
    // Each warp frees a stage where it reads the columns' scales there as it promotes
    // (multiply_piece_promoted).
    template <class Config>
    static constexpr int kReleasingWarps =
        PromotionScales<Config, kScaling>::kColumnKind == PromotionScales<Config, kScaling>::Kind::rows ? 4 : 1;
    using Arguments = Fp8Operands;
    struct StageMaps {
        CUtensorMap tokens_scales;   // A's 1 x 128 (unused for tensor)
        CUtensorMap weights_scales;  // B's 1 x 128 (rows_and_rows only)
    };
    template <class Config>
    struct StageLoads {
        static constexpr int kTokenScales = PromotionScales<Config, kScaling>::kTokenScales;
        static constexpr int kWeightScales = PromotionScales<Config, kScaling>::kWeightScales;
        static constexpr int kWeightsInStage = PromotionScales<Config, kScaling>::kWeightsInStage;
        static constexpr int kBytes = 4 * (kTokenScales + kWeightScales);
        static constexpr bool kSwapped = Config::Orientation::kSwapped;
        const StageMaps* maps;
        __device__ explicit StageLoads(const StageMaps* stage_maps) : maps(stage_maps) {}
        __device__ void load(std::uint8_t* to, TileOrigin tile, int kb, std::uint64_t* full) const {
            if constexpr (kTokenScales > 0)
                tma_load_2d(to, &maps->tokens_scales, kSwapped ? tile.col : tile.row, kb, full);
            if constexpr (kWeightScales > 0)
                tma_load_2d(to + 4 * kWeightsInStage, &maps->weights_scales, kSwapped ? tile.row : tile.col, kb, full);
        }
        // The maps launch_config makes of A's scales (and B's).
        static StageMaps make(const GemmShape& shape, const Fp8Operands& operands) {
            StageMaps stage_maps{};
            if constexpr (kTokenScales > 0)
                stage_maps.tokens_scales = row_scales_map<kTokenScales>(operands.a_scales, shape.k, shape.m);
            if constexpr (kWeightScales > 0)
                stage_maps.weights_scales = row_scales_map<kWeightScales>(operands.b_scales, shape.k, shape.n);
            return stage_maps;
        }
    };
    template <class Config>
    struct Consumer {
        PromotionScales<Config, kScaling> scales;
        __device__ Consumer(const Fp8Operands& operands, const GemmProblem& problem)
            : scales(operands, problem.shape) {}
        __device__ __forceinline__ void run(WarpgroupAccumulators<Config::kMBlocks, Config::kColumns>& acc,
                                            const WorkPiece& piece, TileOrigin tile, int first_row, std::uint8_t* ring,
                                            const std::uint8_t* extras, std::uint64_t* full, std::uint64_t* empty,
                                            int& passed, bool signals) const {
            multiply_piece_promoted<Config, kScaling>(acc, scales, piece, tile, first_row, ring, extras, full, empty,
                                                      passed, signals);
        }
    };
};

// Config's kernel (stage 30's, with this mainloop) on a plan in scaling kScaling, D in bf16:
// K a multiple of 16 and N of 8 (TMA's rows start 16-byte aligned).
template <class Config, Fp8Scaling kScaling>
void launch_config(const AnyTilePlan& plan, const GemmProblem& problem, const Fp8Operands& operands,
                   __nv_bfloat16* d, cudaStream_t stream) {
    using Orientation = typename Config::Orientation;
    using Mainloop = Fp8Mainloop<kScaling>;
    any_tile::launch_plan<Config, Mainloop>(plan, problem, Orientation::row_map(problem.shape, operands),
                                            Orientation::column_map(problem.shape, operands), d, operands,
                                            Mainloop::template StageLoads<Config>::make(problem.shape, operands),
                                            stream);
}

}  // namespace fp8_any_tile
}  // namespace sgemm
