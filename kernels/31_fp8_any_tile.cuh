// Stage 31's kernel (read 31_fp8_any_tile.cu first): stage 30's parts on e4m3 operands. What
// it takes from stage 30 as it is: the ring's configuration (AnyTileConfig: a K block of 128
// e4m3 values is 128 bytes a row, as bf16's K tile of 64), the producer (produce_k_tiles), the
// scheduler (schedule_for, stream-K's hand-over, ClusterSplit) and the epilogues
// (TmaChunkStores, DirectStores, the split's sums), with D as bf16 C. What it defines: the
// operands' tiles and orientations in e4m3 (both K-major: FP8's wgmma reads no other), the
// scales of a K block (PromotionScales) and the mainloop that promotes each K block's sums
// into FP32 with them (multiply_piece_promoted, stage 27's promotion, stage 28's scales).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "26_fp8_tensor_scale.cuh"
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
// keep the 128-wide tiles from spilling.
template <template <int, int, int> class Orientation_, int Consumers, int MBlocks, int Columns, int ClusterM>
struct Fp8AnyTileConfig : any_tile::AnyTileConfig<Orientation_, Consumers, MBlocks, Columns, ClusterM> {
    using Base = any_tile::AnyTileConfig<Orientation_, Consumers, MBlocks, Columns, ClusterM>;
    static constexpr int kProducerRegisters = 40;
    static constexpr int kConsumerRegisters =
        std::min(232, (Base::kLaunchRegisters * (1 + Consumers) - kProducerRegisters) / Consumers / 8 * 8);
};

// ---- The scales of a K block, as a consumer's thread applies them when it promotes (the
// layouts: common/fp8_problem.hpp). A side of the tile (wgmma's rows or its columns) is the
// tokens' (A's scales) or the weights' (B's), each scaled
//   - once a tensor (tensor): applied to the sums once, after the last K block;
//   - a row per 128 of K (A always but for tensor; B in rows_and_rows): at [kb][row];
//   - a 128 x 128 block (B in rows_and_blocks, the recipe): at [row / 128][kb]. An m64 block
//     of rows lies in one block of B, a tile's columns in at most two (128 at most).
// A thread's sums are two rows an m64 block (i, half) by two adjacent columns of every 8
// (j, p). Its rows' scales, and the one or two blocks of its columns, are loaded as it issues
// the K block and arrive under its wgmmas (stage 28 measured a scale read at promotion
// stalling it); its columns' scales a row (up to 64 values a thread) are read as it promotes,
// from L1, while its next K block is on the tensor cores: registers for them would not leave
// room for two blocks of sums. Rows and columns past A's or B's ends read the last one's
// (their sums are never stored).
template <class Config, Fp8Scaling kScaling>
struct PromotionScales {
    enum class Kind { tensor, rows, blocks };
    static constexpr Kind kTokens = kScaling == Fp8Scaling::tensor ? Kind::tensor : Kind::rows;
    static constexpr Kind kWeights = kScaling == Fp8Scaling::tensor        ? Kind::tensor
                                     : kScaling == Fp8Scaling::rows_and_rows ? Kind::rows
                                                                             : Kind::blocks;
    static constexpr bool kSwapped = Config::Orientation::kSwapped;
    static constexpr Kind kRowKind = kSwapped ? kWeights : kTokens, kColumnKind = kSwapped ? kTokens : kWeights;
    static constexpr int kMBlocks = Config::kMBlocks, kColumns = Config::kColumns;
    static_assert(kColumnKind != Kind::blocks || kColumns <= kFp8ScaleBlock, "a tile's columns lie in two blocks of B");

    // One side's scales: rows of the side end at `extent`; `stride` is the padded rows of a
    // K block (rows) or the padded K blocks of a block row (blocks).
    struct Side {
        const float* scales;
        int extent, stride;
    };
    Side row_side, column_side;
    float tensor_scale;  // A's times B's, where both are one a tensor

    __device__ PromotionScales(const Fp8Operands& operands, const GemmShape& shape) {
        const int k_blocks = ceil_div(shape.k, kFp8ScaleBlock);
        const Side tokens{operands.a_scales, shape.m, ceil_div(shape.m, 4) * 4};
        const Side weights{operands.b_scales, shape.n,
                           kWeights == Kind::blocks ? ceil_div(k_blocks, 4) * 4 : ceil_div(shape.n, 4) * 4};
        row_side = kSwapped ? weights : tokens;
        column_side = kSwapped ? tokens : weights;
        tensor_scale = kScaling == Fp8Scaling::tensor ? operands.a_scales[0] * operands.b_scales[0] : 1.0f;
    }

    struct OfBlock {
        float row[kMBlocks][2];
        float column_block[2];  // the blocks of B the tile's columns lie in (blocks)
        int kb;
    };
    // K block kb's scales of this thread's rows (and columns' blocks) in the tile at `tile`,
    // from the consumer's first row `first_row` of it.
    __device__ OfBlock load(int kb, TileOrigin tile, int first_row) const {
        OfBlock f;
        f.kb = kb;
        const int thread = threadIdx.x % 128;
#pragma unroll
        for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int block_start = tile.row + first_row + 64 * i;
                const int row = block_start + wgmma_accumulator_position(thread, 0, half).row;
                if constexpr (kRowKind == Kind::tensor) {
                    f.row[i][half] = 1.0f;
                } else if constexpr (kRowKind == Kind::rows) {
                    f.row[i][half] = __ldg(row_side.scales + static_cast<std::size_t>(kb) * row_side.stride +
                                           min(row, row_side.extent - 1));
                } else {
                    f.row[i][half] = block_scale(row_side, kb, block_start / kFp8ScaleBlock);
                }
            }
        if constexpr (kColumnKind == Kind::blocks) {
            const int first = tile.col / kFp8ScaleBlock;
            f.column_block[0] = block_scale(column_side, kb, first);
            f.column_block[1] = block_scale(column_side, kb, first + 1);
        }
        return f;
    }
    // sums += block x its scales.
    __device__ void promote(WarpgroupAccumulators<kMBlocks, kColumns>& sums,
                            const WarpgroupAccumulators<kMBlocks, kColumns>& block, const OfBlock& f,
                            TileOrigin tile) const {
        if constexpr (kColumnKind == Kind::rows) {
            // The columns' scales a row: one base address and immediate offsets where the
            // tile's columns lie inside the padded row of scales (a clamped address a pair
            // took two registers each, and spilled the 128-wide tiles), clamped in the last
            // tile of a row only.
            const int first_column = tile.col + wgmma_accumulator_position(threadIdx.x % 128, 0, 0).column;
            const float* const row = column_side.scales + static_cast<std::size_t>(f.kb) * column_side.stride;
            if (tile.col + kColumns <= column_side.stride) {
                const float2* const pairs = reinterpret_cast<const float2*>(row + first_column);
                promote_with(sums, block, f, [&](int j) { return __ldg(pairs + 4 * j); });
            } else {
                promote_with(sums, block, f, [&](int j) {
                    return __ldg(reinterpret_cast<const float2*>(row + min(first_column + 8 * j, column_side.stride - 2)));
                });
            }
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
            const int into_block = tile.col % kFp8ScaleBlock;
#pragma unroll
            for (int j = 0; j < kColumns / 8; ++j) {
                const bool in_second = into_block + 8 * j >= kFp8ScaleBlock;
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
    // Block `block` of B's rows (the last where past the end) for K block kb.
    __device__ static float block_scale(const Side& side, int kb, int block) {
        block = min(block, (side.extent - 1) / kFp8ScaleBlock);
        return __ldg(side.scales + static_cast<std::size_t>(block) * side.stride + kb);
    }
};

// ---- The mainloop: a consumer's K blocks of one piece. Each K block's four k32 wgmmas sum
// from zero in a block of accumulators (the MMA's keeps about 14 bits: wgmma_fp8.cuh); once
// they are done the stage goes back to the producer and the block is added into `sums`, in
// FP32, times its scales. Two blocks take turns (even and odd K blocks, stage 27's), so that
// the next K block is on the tensor cores while the last is added in: a thread holds three
// tiles of values.
template <class Config, Fp8Scaling kScaling>
__device__ __forceinline__ void multiply_piece_promoted(WarpgroupAccumulators<Config::kMBlocks, Config::kColumns>& sums,
                                                        const PromotionScales<Config, kScaling>& scales,
                                                        const WorkPiece& piece, TileOrigin tile, int first_row,
                                                        std::uint8_t* ring, std::uint64_t* full, std::uint64_t* empty,
                                                        int& passed, bool signals) {
    using RowTile = typename Config::RowTile;
    using ColumnTile = typename Config::ColumnTile;
    using Accumulators = WarpgroupAccumulators<Config::kMBlocks, Config::kColumns>;
    using OfBlock = typename PromotionScales<Config, kScaling>::OfBlock;
    constexpr int kStages = Config::kStages, kMBlocks = Config::kMBlocks, kColumns = Config::kColumns;
    static_assert(Config::kConsumerRegisters >= 3 * kMBlocks * kColumns / 2 + 24,
                  "the sums and two K blocks' fit in a consumer's registers");
    // K block kb onto the tensor cores, into `block`; its scales and its stage to `factors`
    // and `stage`. The ring's place is stepped (stage 26's RingSlot), not divided out of
    // `passed` every K block (kStages is rarely a power of two).
    RingSlot<kStages> slot{passed % kStages, static_cast<unsigned>(passed / kStages % 2)};
    const auto issue = [&](Accumulators& block, int kb, OfBlock& factors, int& stage) {
        stage = slot.stage;
        mbarrier_wait(&full[stage], slot.phase);
        slot = slot.next();
        ++passed;
        factors = scales.load(kb, tile, first_row);
        const std::uint8_t* rows = Config::row_tile(ring, stage);
        const std::uint8_t* columns = Config::column_tile(ring, stage);
        wgmma_fence();
#pragma unroll
        for (int step = 0; step < kFp8ScaleBlock / 32; ++step)
#pragma unroll
            for (int i = 0; i < kMBlocks; ++i)
                wgmma_m64k32_e4m3<kColumns>(block[i], RowTile::descriptor(rows, first_row + 64 * i, step),
                                            ColumnTile::descriptor(columns, 0, step), step > 0);
        wgmma_commit_group();
    };
    // Its sums, once wgmma_wait_group has seen them done: its stage is free, and they go into
    // the sums.
    const auto add = [&](Accumulators& block, const OfBlock& factors, int stage) {
#pragma unroll
        for (int i = 0; i < kMBlocks; ++i) wgmma_fence_accumulators(block[i]);
        if (signals) {
            if constexpr (Config::kClusterM > 1) {
                for (int cta = 0; cta < Config::kClusterM; ++cta) mbarrier_arrive_in_cta(&empty[stage], cta);
            } else {
                mbarrier_arrive(&empty[stage]);
            }
        }
        scales.promote(sums, block, factors, tile);
    };
    zero_accumulators<kMBlocks, kColumns>(sums);
    // Every wait leaves the block just issued running (stage 27's shape: ptxas keeps the
    // wgmmas asynchronous in it).
    if (piece.k_end > piece.k_begin) {
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
    }
    scales.finish(sums);
}

// ---- The kernel: stage 30's composition (any_tile_kernel) with this mainloop, D in bf16.
template <class Config, Fp8Scaling kScaling>
__global__ void __launch_bounds__(Config::kThreads, 1)
    fp8_any_tile_kernel(const __grid_constant__ CUtensorMap row_map, const __grid_constant__ CUtensorMap column_map,
                        const __grid_constant__ CUtensorMap d_map, __nv_bfloat16* d, GemmProblem problem,
                        Fp8Operands operands, int group_rows, const __grid_constant__ TileSchedule schedule,
                        StreamKWorkspace workspace, int splits) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using Orientation = typename Config::Orientation;
    using Cluster = ClusterOf<Config::kClusterM>;
    constexpr int kClusterM = Config::kClusterM;
    if (threadIdx.x == 0) {
        prefetch_tensor_map(&row_map);
        prefetch_tensor_map(&column_map);
        if constexpr (Config::kTmaStores) prefetch_tensor_map(&d_map);
    }
    auto& shared = shared_memory_as<typename Config::SharedMemory>();
    std::uint8_t* const ring = &shared.ring[0][0];
    init_ring_barriers(shared.full, shared.empty, Config::kStages, Config::kConsumers * kClusterM);
    Cluster::sync();  // the other CTAs' barriers are initialized before anyone arrives on them

    const unsigned rank = Cluster::rank();
    const int cluster = blockIdx.x / kClusterM;
    const int rows = Orientation::rows(problem.shape), columns = Orientation::columns(problem.shape);
    const auto tile_of = [&](int stack) {
        TileOrigin origin =
            rasterized_tile_origin<kClusterM * Config::kRows, Config::kColumns>(stack, rows, columns, group_rows);
        origin.row += rank * Config::kRows;
        return origin;
    };
    const auto pieces = [&](int index, WorkPiece& piece) {
        if constexpr (Config::kSplitsK) {
            if (splits > 1) {
                piece = any_tile::ClusterSplit<Config>::piece(blockIdx.x / splits, blockIdx.x % splits, splits,
                                                              schedule.k_tiles);
                return index == 0;
            }
        }
        return schedule.piece(cluster, index, piece);
    };
    float* const partial = reinterpret_cast<float*>(ring);
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        if constexpr (Config::kConsumers > 1) warpgroup_release_registers<Config::kProducerRegisters>();
        if (threadIdx.x == 0)
            any_tile::produce_k_tiles<Config>(pieces, rank, tile_of, ring, shared.full, shared.empty, &row_map,
                                              &column_map);
    } else {
        if constexpr (Config::kConsumers > 1) warpgroup_claim_registers<Config::kConsumerRegisters>();
        const int first_row = (warpgroup - 1) * 64 * Config::kMBlocks;
        const bool signals = threadIdx.x % 128 == 0;
        const HandOverThreads consumers{static_cast<int>(threadIdx.x) - 128, Config::kConsumers * 128, 1};
        const PromotionScales<Config, kScaling> scales(operands, problem.shape);
        WarpgroupAccumulators<Config::kMBlocks, Config::kColumns> acc;
        WorkPiece piece{};
        int passed = 0, chunks = 0;
        for (int index = 0; pieces(index, piece); ++index) {
            const TileOrigin tile = tile_of(piece.stack);
            multiply_piece_promoted<Config, kScaling>(acc, scales, piece, tile, first_row, ring, shared.full,
                                                      shared.empty, passed, signals);
            if constexpr (Config::kSplitsK) {
                if (splits > 1) {
                    named_barrier_sync(1, Config::kConsumers * 128);
                    any_tile::ClusterSplit<Config>::write_sums(acc, partial, first_row);
                    continue;
                }
            }
            if (schedule.shared_piece(index) &&
                !hand_over_piece<Config, false>(acc, schedule, piece, index, cluster, rank, workspace, consumers))
                continue;
            if constexpr (Config::kTmaStores)
                any_tile::TmaChunkStores::store<Config::kMBlocks, Config::kColumns>(
                    acc, problem, d, &d_map, shared.c_buffers[warpgroup - 1], chunks, tile.row + first_row, tile.col,
                    1 + warpgroup);
            else
                any_tile::DirectStores::store<Config::kMBlocks, Config::kColumns>(acc, problem, d,
                                                                                  tile.row + first_row, tile.col);
        }
        if (Config::kTmaStores && signals) tma_store_wait<0>();
    }
    if constexpr (Config::kSplitsK) {
        if (splits > 1) {
            __syncwarp();
            cluster_sync();  // every CTA's sums are in its ring
            if (warpgroup > 0)
                any_tile::ClusterSplit<Config>::add_and_store(partial, splits, cluster_cta_rank(), problem, d,
                                                              tile_of(blockIdx.x / splits));
            __syncwarp();
            cluster_sync();  // no CTA leaves while another may still read its ring
        }
    }
    Cluster::sync_before_leaving();
#endif
}

// The shape stage 30's schedule and plans count in: one of its K tiles (64 values) a K block
// of 128 here, which moves the same bytes and takes the same tensor-core time.
inline GemmShape in_k_blocks(const GemmShape& shape) { return GemmShape{shape.m, shape.n, 64 * ceil_div(shape.k, kFp8ScaleBlock)}; }

// Config's kernel on a plan (30_any_tile.hpp) in scaling kScaling: K a multiple of 16 and N
// of 8 (TMA's rows start 16-byte aligned).
template <class Config, Fp8Scaling kScaling>
void launch_config(const AnyTilePlan& plan, const GemmProblem& problem, const Fp8Operands& operands,
                   __nv_bfloat16* d, cudaStream_t stream) {
    using Orientation = typename Config::Orientation;
    const CUtensorMap row_map = Orientation::row_map(problem.shape, operands);
    const CUtensorMap column_map = Orientation::column_map(problem.shape, operands);
    const CUtensorMap d_map = Config::kTmaStores ? make_c_tensor_map(d, problem.shape.m, problem.shape.n) : CUtensorMap{};
    const auto kernel = fp8_any_tile_kernel<Config, kScaling>;
    static const cudaError_t more_shared_memory =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSharedBytes);
    (void)more_shared_memory;  // a failure shows as the launch's error
    const GemmShape blocks_shape = in_k_blocks(problem.shape);
    if (plan.splits > 1) {
        const int stacks = ceil_div(Orientation::rows(problem.shape), Config::kRows) *
                           ceil_div(Orientation::columns(problem.shape), Config::kColumns);
        const int k_blocks = ceil_div(problem.shape.k, kFp8ScaleBlock);
        if (!Config::kSplitsK || plan.splits > kMaxClusterSplits || plan.splits > k_blocks)
            throw std::invalid_argument("stage 31: this tile cannot split K " + std::to_string(plan.splits) + " ways");
        const TileSchedule schedule{stacks, k_blocks, stacks, 1, false, false};
        launch_with_cluster(kernel, stacks * plan.splits, Config::kThreads, plan.splits, Config::kSharedBytes, stream,
                            row_map, column_map, d_map, d, problem, operands, plan.group_rows, schedule,
                            StreamKWorkspace{}, plan.splits);
        return;
    }
    const TileSchedule schedule = any_tile::schedule_for<Config>(blocks_shape, plan);
    StreamKWorkspace workspace;
    if (schedule.split_tail)
        workspace = stream_k_workspace(schedule.clusters * Config::kClusterM, Config::kRows * Config::kColumns);
    launch_with_cluster(kernel, schedule.clusters * Config::kClusterM, Config::kThreads, Config::kClusterM,
                        Config::kSharedBytes, stream, row_map, column_map, d_map, d, problem, operands,
                        plan.group_rows, schedule, workspace, 1);
}

// What the occupancy calculator says of Config's kernel in clusters of `cluster_size`.
template <class Config>
int resident_ctas(int cluster_size) {
    const auto kernel = fp8_any_tile_kernel<Config, Fp8Scaling::rows_and_blocks>;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSharedBytes);
    return cluster_size * max_active_clusters(kernel, Config::kThreads, cluster_size, Config::kSharedBytes);
}

}  // namespace fp8_any_tile
}  // namespace sgemm
