// Stage 20's kernel (read 20_hopper_tuned.cu first): stage 19's, persistent, with what the
// tuner (src/tools/tuning_candidates.cu) varies as template parameters: the tile, the ring's
// depth, the cluster, how C is written, and whether the leftover stacks are shared out by K
// (20_stream_k.cuh). It also undoes the operand scaling of stage 21, which runs it.
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstdint>

#include "19_persistent_c_stores.cuh"
#include "20_stream_k.cuh"
#include "common/cluster.cuh"
#include "common/gemm_problem.hpp"
#include "common/hopper_tiles.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/operand_scaling.cuh"
#include "common/tma.cuh"
#include "common/wgmma.cuh"

namespace sgemm {

// How the consumers write C: straight from registers (stages 17 and 18), or through shared
// memory and TMA stores (stage 19), which leaves them free for the next tile sooner.
enum class CStores { kFromRegisters, kThroughTma };

// A BlockM x BlockN block tile split between two consumer warpgroups, Stages K tiles in
// the ring, clusters of ClusterM CTAs whose tiles form a stack and share B's, the way C is
// written, and the schedule. The consumers take BlockM / 2 rows each; a tile of 64 rows
// (for a few tokens: 128 would leave half of each tile's rows empty) is one m64 block, and
// they take half its columns each instead.
template <int BlockM, int BlockN, int Stages, int ClusterM, CStores Stores, Schedule Scheduling>
struct WarpSpecializedConfig {
    static constexpr Schedule kSchedule = Scheduling;
    static constexpr int kCBuffers = 2;  // C chunk buffers per consumer (kThroughTma)
    using Tiles = HopperStageTiles<BlockM, BlockN>;
    static constexpr int kBlockM = BlockM, kBlockN = BlockN, kStages = Stages, kClusterM = ClusterM;
    static constexpr CStores kStores = Stores;
    static constexpr int kConsumers = 2;
    static constexpr int kThreads = 128 * (1 + kConsumers);
    static constexpr bool kSplitColumns = BlockM == 64;
    static constexpr int kRowsPerConsumer = kSplitColumns ? BlockM : BlockM / kConsumers;
    static constexpr int kColumnsPerConsumer = kSplitColumns ? BlockN / kConsumers : BlockN;
    static constexpr int kMBlocks = kRowsPerConsumer / 64;
    // Registers after setmaxnreg: the producer keeps few, the consumers hold the
    // accumulators (128 x 40 + 256 x 232 fits the SM's 65536).
    static constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
    // The ring; two C chunk buffers per consumer (kThroughTma); the barriers; alignment.
    static constexpr int kCBufferBytes = Stores == CStores::kThroughTma ? kCBuffers * kCChunkBytes : 0;
    static constexpr int kSharedBytes =
        Stages * Tiles::kBytes + kConsumers * kCBufferBytes + 2 * Stages * 8 + Tiles::kSwizzleBytes;
    static_assert(kRowsPerConsumer % 64 == 0, "each consumer takes whole m64 blocks");
    static_assert(kColumnsPerConsumer % Tiles::kBSlabColumns == 0, "each consumer takes whole B slabs");
    static_assert(BlockN <= 256, "one wgmma spans the tile's columns");
    static_assert(Stores == CStores::kFromRegisters || kMBlocks == 1, "TMA stores: one m64 block per consumer");
    static_assert(kSharedBytes <= 227 * 1024, "an H100 block has at most 227 KB of shared memory");
    static_assert(Tiles::kBSlabs % ClusterM == 0, "the cluster's CTAs load B's slabs in equal shares");
    static_assert(Stages * Tiles::kBytes >= BlockM * BlockN * 4, "stream-K adds up its share of a tile in the ring");
};

// kShares (schedule.sliced): every sharer of a leftover stack writes a share of it. A kernel
// of its own, so that the last-sharer hand-over runs the code it ran before shares existed.
template <class Config, bool kShares>
__global__ void __launch_bounds__(Config::kThreads, 1)
    hopper_tuned_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                        const __grid_constant__ CUtensorMap c_map, float* c, GemmProblem problem, int group_rows,
                        const __grid_constant__ TileSchedule schedule, float* partial_sums, int* slot_ready,
                        int* stack_arrivals, OperandScaling scaling) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using Tiles = typename Config::Tiles;
    constexpr int kStages = Config::kStages, kClusterM = Config::kClusterM;
    extern __shared__ std::uint8_t shared_bytes[];
    std::uint8_t* const ring = Tiles::ring_start(shared_bytes);
    // full[s]: stage s holds its K tile (the copy engine's bytes have landed).
    // empty[s]: every consumer of the cluster is done with stage s.
    std::uint8_t* const c_buffers = ring + kStages * Tiles::kBytes;
    std::uint64_t* const full = reinterpret_cast<std::uint64_t*>(c_buffers + Config::kConsumers * Config::kCBufferBytes);
    std::uint64_t* const empty = full + kStages;

    init_ring_barriers(full, empty, kStages, Config::kConsumers * kClusterM);
    if constexpr (kClusterM > 1) cluster_sync(); else __syncthreads();

    const unsigned rank = kClusterM > 1 ? cluster_cta_rank() : 0;
    const int cluster = blockIdx.x / kClusterM;
    const auto tile_of = [&](int stack) {
        TileOrigin origin = rasterized_tile_origin<kClusterM * Config::kBlockM, Config::kBlockN>(
            stack, problem.shape.m, problem.shape.n, group_rows);
        origin.row += rank * Config::kBlockM;
        return origin;
    };
    WorkPiece piece{};

    const int warpgroup = threadIdx.x / 128;
    // `passed`: the K tiles that have gone through the ring so far (stage 19).
    if (warpgroup == 0) {
        warpgroup_release_registers<Config::kProducerRegisters>();
        if (threadIdx.x == 0) {
            int passed = 0;
            for (int index = 0; schedule.piece(cluster, index, piece); ++index) {
                const TileOrigin tile = tile_of(piece.stack);
                for (int kt = piece.k_begin; kt < piece.k_end; ++kt, ++passed) {
                    const int stage = passed % kStages;
                    mbarrier_wait(&empty[stage], (passed / kStages % 2) ^ 1);  // parity 1 first: free
                    mbarrier_arrive_expect_tx(&full[stage], Tiles::kBytes);
                    tma_load_2d(Tiles::a_tile(ring, stage), &a_map, kt * Tiles::kBlockK, tile.row, &full[stage]);
                    for (int slab = rank; slab < Tiles::kBSlabs; slab += kClusterM) {
                        std::uint8_t* const slab_tile = Tiles::b_tile(ring, stage) + slab * Tiles::kBSlabBytes;
                        const int column = tile.col + slab * Tiles::kBSlabColumns, row = kt * Tiles::kBlockK;
                        if constexpr (kClusterM > 1)
                            tma_load_2d_multicast(slab_tile, &b_map, column, row, &full[stage], (1u << kClusterM) - 1);
                        else
                            tma_load_2d(slab_tile, &b_map, column, row, &full[stage]);
                    }
                }
            }
        }
    } else {
        warpgroup_claim_registers<Config::kConsumerRegisters>();
        constexpr int kMBlocks = Config::kMBlocks, kColumns = Config::kColumnsPerConsumer;
        const int first_row = Config::kSplitColumns ? 0 : (warpgroup - 1) * Config::kRowsPerConsumer;
        const int first_column = Config::kSplitColumns ? (warpgroup - 1) * kColumns : 0;
        const int first_slab = first_column / Tiles::kBSlabColumns;
        const bool signals = threadIdx.x % 128 == 0;
        const auto release = [&](int stage) {
            if (!signals) return;
            if constexpr (kClusterM > 1) {
                for (int cta = 0; cta < kClusterM; ++cta) mbarrier_arrive_in_cta(&empty[stage], cta);
            } else {
                mbarrier_arrive(&empty[stage]);
            }
        };
        WarpgroupAccumulators<kMBlocks, kColumns> acc;
        int passed = 0, c_chunks = 0;
        const int consumer_thread = threadIdx.x - 128, consumer_threads = Config::kConsumers * 128;
        // Named barriers: 1 and 2 each consumer's own (the C chunks), 3 both (stream-K).
        constexpr int kConsumersBarrier = 1 + Config::kConsumers;
        constexpr int kTileValues = Config::kBlockM * Config::kBlockN;
        for (int index = 0; schedule.piece(cluster, index, piece); ++index) {
            const TileOrigin tile = tile_of(piece.stack);
            zero_accumulators<kMBlocks, kColumns>(acc);
            for (int kt = piece.k_begin; kt < piece.k_end; ++kt, ++passed) {
                const int stage = passed % kStages;
                mbarrier_wait(&full[stage], passed / kStages % 2);
                warpgroup_multiply_k_tile<kMBlocks, kColumns>(
                    acc, Tiles::a_tile(ring, stage), Tiles::b_tile(ring, stage) + first_slab * Tiles::kBSlabBytes,
                    first_row);
                wgmma_wait_group<1>();
                if (kt > piece.k_begin) release((passed - 1) % kStages);
            }
            warpgroup_finish<kMBlocks, kColumns>(acc);
            release((passed - 1) % kStages);
            if (schedule.shared_piece(index)) {  // part of a leftover stack
                const int tail_stack = piece.stack - schedule.tail_first_stack();
                if constexpr (kShares) {  // C is written by shares, below
                    publish_partial_sums<kMBlocks, kColumns>(
                        acc, partial_sums + (2 * static_cast<std::size_t>(blockIdx.x) + index - schedule.whole_rounds) * kTileValues,
                        &stack_arrivals[tail_stack * kClusterM + rank], consumer_thread, consumer_threads,
                        kConsumersBarrier);
                    continue;
                } else {
                    // A piece that leaves its stack unfinished: its first in the tail, so one slot a CTA.
                    if (piece.k_end < schedule.k_tiles) {
                        publish_partial_sums<kMBlocks, kColumns>(
                            acc, partial_sums + static_cast<std::size_t>(blockIdx.x) * kTileValues,
                            &slot_ready[blockIdx.x], consumer_thread, consumer_threads, kConsumersBarrier);
                        continue;
                    }
                    // The last of a few sharers adds the others' slots, the latest run first.
                    const long long tile_start = static_cast<long long>(tail_stack) * schedule.k_tiles;
                    for (int earlier = cluster - 1; earlier >= 0 && schedule.run_begin(earlier + 1) > tile_start;
                         --earlier) {
                        const int slot = earlier * kClusterM + rank;
                        add_partial_sums<kMBlocks, kColumns>(
                            acc, partial_sums + static_cast<std::size_t>(slot) * kTileValues, &slot_ready[slot],
                            consumer_thread, consumer_threads, kConsumersBarrier);
                    }
                }
            }
            if (scaling.row_exponents != nullptr)
                unscale_accumulators<kMBlocks, kColumns>(acc, scaling, problem.shape, tile.row + first_row,
                                                         tile.col + first_column);
            if constexpr (Config::kStores == CStores::kThroughTma) {
#pragma unroll
                for (int chunk = 0; chunk < kColumns / kCChunkColumns; ++chunk)
                    store_c_chunk_through_tma<Config::kCBuffers>(
                        acc[0] + chunk * kCChunkValues, problem, c, &c_map,
                        c_buffers + (warpgroup - 1) * Config::kCBufferBytes, c_chunks++, tile.row + first_row,
                        tile.col + first_column + chunk * kCChunkColumns, warpgroup);
            } else {
                store_warpgroup_tile<kMBlocks, kColumns>(acc, problem, c, tile.row + first_row,
                                                         tile.col + first_column);
            }
        }
        if constexpr (kShares) {
            const long long begin = schedule.run_begin(cluster), end = schedule.run_begin(cluster + 1);
            for (int tail_stack = begin / schedule.k_tiles; begin < end && tail_stack <= (end - 1) / schedule.k_tiles;
                 ++tail_stack) {
                const int first = schedule.first_sharer(tail_stack), sharers = schedule.sharers(tail_stack);
                // The last sharer's piece here is its second where its run goes on into the next stack.
                const int last_piece = schedule.shared_piece_in(first + sharers - 1, tail_stack);
                const auto slot_of = [&](int sharer) {
                    const std::size_t cta = static_cast<std::size_t>(first + sharer) * kClusterM + rank;
                    return partial_sums + (2 * cta + (sharer == sharers - 1 ? last_piece : 0)) * kTileValues;
                };
                const TileOrigin tile = tile_of(schedule.tail_first_stack() + tail_stack);
                finish_shared_share<kMBlocks, kColumns, Config::kSplitColumns>(
                    slot_of, sharers, cluster - first, &stack_arrivals[tail_stack * kClusterM + rank],
                    reinterpret_cast<float4*>(ring), problem, c, scaling, tile.row, tile.col, consumer_thread,
                    consumer_threads, kConsumersBarrier);
            }
        }
        // Shared memory must outlive the copy engine's reads of it.
        if (Config::kStores == CStores::kThroughTma && signals) tma_store_wait<0>();
    }
    // No CTA may leave while another of its cluster can still write to its shared memory.
    if constexpr (kClusterM > 1) {
        __syncwarp();
        cluster_sync();
    }
#endif
}

// scaling: how stage 21 scaled A and B, undone before C is written.
template <class Config>
void launch_hopper_tuned_kernel(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                                int group_rows, cudaStream_t stream, OperandScaling scaling = {}) {
    using Tiles = typename Config::Tiles;
    const GemmShape& shape = problem.shape;
    const CUtensorMap a_map = make_bf16_tensor_map(a, shape.m, shape.k, Config::kBlockM, Tiles::kBlockK);
    const CUtensorMap b_map = make_bf16_tensor_map(b, shape.k, shape.n, Tiles::kBlockK, Tiles::kBSlabColumns);
    const CUtensorMap c_map = make_fp32_tensor_map(c, shape.m, shape.n, kCChunkRows, kCChunkColumns);
    const auto kernel = hopper_tuned_kernel<Config, false>;
    const auto shares_kernel = hopper_tuned_kernel<Config, true>;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSharedBytes);
    cudaFuncSetAttribute(shares_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSharedBytes);
    const int stacks = ceil_div(shape.m, Config::kClusterM * Config::kBlockM) * ceil_div(shape.n, Config::kBlockN);
    const int resident = max_active_clusters(kernel, Config::kThreads, Config::kClusterM, Config::kSharedBytes);
    const TileSchedule schedule =
        make_grid_schedule(Config::kSchedule, stacks, ceil_div(shape.k, Tiles::kBlockK), resident);
    const int clusters = schedule.clusters;
    StreamKWorkspace workspace;
    if (schedule.split_tail)
        workspace = stream_k_workspace(clusters * Config::kClusterM, Config::kBlockM * Config::kBlockN);
    launch_with_cluster(schedule.sliced ? shares_kernel : kernel, clusters * Config::kClusterM, Config::kThreads,
                        Config::kClusterM, Config::kSharedBytes, stream, a_map, b_map, c_map, c, problem, group_rows,
                        schedule, workspace.partial_sums, workspace.slot_ready, workspace.stack_arrivals, scaling);
}

// Stage 20's tiles for a shape on a GPU of `sms` SMs (20_hopper_tuned.cu): 128x256 (the
// tuner's choice on squares), 128x128, 128x64, or for a few rows 64x128 or 64x256.
enum class TunedTiles { kWide, kMedium, kNarrow, kFewRows, kFewRowsWide };
TunedTiles tuned_tiles_for(const GemmShape& shape, int sms);

// Stage 21 runs the tuned kernel on operands it has scaled by powers of two (20_hopper_tuned.cu).
void launch_hopper_tuned(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                         cudaStream_t stream, const OperandScaling& scaling);

}  // namespace sgemm
