// Stage 20's kernel (read 20_hopper_tuned.cu first). It is stage 19's persistent kernel
// (19_persistent.cu; diff the two) with three changes: the tile, the ring's depth and the
// cluster are template parameters, which the launcher chooses by shape and the tuner
// (src/tools/tuning_candidates.cu) varies; each cluster takes pieces of stacks from the
// schedule (20_stream_k.cuh) where stage 19 took whole stacks, and hands the partial sums
// of the leftover stacks over (hand_over_piece, write_shares); and C leaves through
// write_c_part, after the kernel's Epilogue, which a later chapter may give it.
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstdint>

#include "19_persistent_c_stores.cuh"
#include "20_hopper_tuned.hpp"
#include "20_stream_k.cuh"
#include "common/cluster.cuh"
#include "common/gemm_problem.hpp"
#include "common/hopper_tiles.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/tma.cuh"
#include "common/wgmma.cuh"

namespace sgemm {

// A BlockM x BlockN block tile split between two consumer warpgroups, Stages K tiles in
// the ring, clusters of ClusterM CTAs whose tiles form a stack and share B's. The consumers
// take BlockM / 2 rows each; a tile of 64 rows (for a few tokens: 128 would leave half of
// each tile's rows empty) is one m64 block, and they take half its columns each instead.
template <int BlockM, int BlockN, int Stages, int ClusterM>
struct WarpSpecializedConfig {
    using Tiles = HopperStageTiles<BlockM, BlockN>;
    static constexpr int kBlockM = BlockM, kBlockN = BlockN, kStages = Stages, kClusterM = ClusterM;
    static constexpr int kConsumers = 2, kThreads = 128 * (1 + kConsumers);
    static constexpr int kCBuffers = 2;  // C chunk buffers per consumer (stage 19)
    static constexpr bool kSplitColumns = BlockM == 64;
    static constexpr int kRowsPerConsumer = kSplitColumns ? BlockM : BlockM / kConsumers;
    static constexpr int kColumnsPerConsumer = kSplitColumns ? BlockN / kConsumers : BlockN;
    static constexpr int kMBlocks = kRowsPerConsumer / 64;
    // Registers after setmaxnreg: the producer keeps few, the consumers hold the
    // accumulators (128 x 40 + 256 x 232 fits the SM's 65536).
    static constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
    // The ring, each consumer's C chunk buffers, and the ring's barriers (stage 19's).
    struct SharedMemory {
        typename Tiles::Stage ring[Stages];
        alignas(1024) std::uint8_t c_buffers[kConsumers][kCBuffers * kCChunkBytes];
        std::uint64_t full[Stages], empty[Stages];
    };
    static constexpr int kSharedBytes = sizeof(SharedMemory);

    // Where consumer `consumer`'s part of a tile starts, from the tile's corner.
    __device__ static TileOrigin consumer_part(int consumer) {
        return kSplitColumns ? TileOrigin{0, consumer * kColumnsPerConsumer} : TileOrigin{consumer * kRowsPerConsumer, 0};
    }

    static_assert(kRowsPerConsumer % 64 == 0, "each consumer takes whole m64 blocks");
    static_assert(kColumnsPerConsumer % Tiles::kBSlabColumns == 0, "each consumer takes whole B slabs");
    static_assert(BlockN <= 256, "one wgmma spans the tile's columns");
    static_assert(kMBlocks == 1, "TMA stores: one m64 block per consumer");
    static_assert(kSharedBytes <= 227 * 1024, "an H100 block has at most 227 KB of shared memory");
    static_assert(Tiles::kBSlabs % ClusterM == 0, "the cluster's CTAs load B's slabs in equal shares");
    static_assert(Stages * Tiles::kBytes >= BlockM * BlockN * 4, "stream-K adds up its share of a tile in the ring");
};

// A cluster of kCtas CTAs as stage 19 uses it, or with kCtas = 1 (the narrow tiles) a CTA
// on its own, which needs no cluster instructions.
template <int kCtas>
struct ClusterOf {
    __device__ static unsigned rank() {
        if constexpr (kCtas > 1) return cluster_cta_rank();
        return 0;
    }
    __device__ static void sync() {
        if constexpr (kCtas > 1) cluster_sync(); else __syncthreads();
    }
    // No CTA may leave while another of its cluster can still write to its shared memory.
    __device__ static void sync_before_leaving() {
        if constexpr (kCtas > 1) {
            __syncwarp();
            cluster_sync();
        }
    }
    // A slab of B into `slab` of every CTA of the cluster.
    __device__ static void load_b_slab(void* slab, const CUtensorMap* b_map, int column, int row, std::uint64_t* full) {
        if constexpr (kCtas > 1) tma_load_2d_multicast(slab, b_map, column, row, full, (1u << kCtas) - 1);
        else tma_load_2d(slab, b_map, column, row, full);
    }
    // Every consumer of the cluster is done with the stage whose empty barrier this is.
    __device__ static void release(std::uint64_t* empty) {
        if constexpr (kCtas > 1) {
            for (int cta = 0; cta < kCtas; ++cta) mbarrier_arrive_in_cta(empty, cta);
        } else {
            mbarrier_arrive(empty);
        }
    }
};

// What the kernel does to its sums on their way to C (its Epilogue): nothing, here. A
// later chapter's epilogue may change them (undo a scaling of the operands, say):
//   on_accumulators(acc, shape, first_row, first_column): a consumer's part of a tile, in
//     registers, before write_c_part stores it;
//   on_pair(pair, row, column): two values of C side by side, before a share of a stream-K
//     stack stores them (finish_shared_share, 20_stream_k.cuh).
struct PlainEpilogue {
    template <int kMBlocks, int kColumns>
    __device__ void on_accumulators(WarpgroupAccumulators<kMBlocks, kColumns>&, const GemmShape&, int, int) const {}
    __device__ void on_pair(float (&)[2], int, int) const {}
};

// A consumer's part of C leaves its registers: through the epilogue, then chunk by chunk
// through shared memory and TMA stores (stage 19). `part`: where the part starts in C;
// `c_chunks` counts the consumer's chunks.
template <class Config, class COut, class Epilogue>
__device__ __forceinline__ void write_c_part(WarpgroupAccumulators<Config::kMBlocks, Config::kColumnsPerConsumer>& acc,
                                             const GemmProblem& problem, COut* c, const CUtensorMap* c_map,
                                             std::uint8_t* c_buffers, int& c_chunks, TileOrigin part,
                                             const Epilogue& epilogue, int barrier_id) {
    constexpr int kColumns = Config::kColumnsPerConsumer;
    epilogue.template on_accumulators<Config::kMBlocks, kColumns>(acc, problem.shape, part.row, part.col);
#pragma unroll
    for (int chunk = 0; chunk < kColumns / kCChunkColumnsOf<COut>; ++chunk)
        store_c_chunk_through_tma<Config::kCBuffers>(acc[0] + chunk * kCChunkValuesOf<COut>, problem, c, c_map,
                                                     c_buffers, c_chunks++, part.row,
                                                     part.col + chunk * kCChunkColumnsOf<COut>, barrier_id);
}

// kShares (schedule.sliced): every sharer of a leftover stack writes a share of it. A kernel
// of its own, so that the last-sharer hand-over runs the code it ran before shares existed.
// COut: C's type, float or __nv_bfloat16.
template <class Config, bool kShares, class COut = float, class Epilogue = PlainEpilogue>
__global__ void __launch_bounds__(Config::kThreads, 1)
    hopper_tuned_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                        const __grid_constant__ CUtensorMap c_map, COut* c, GemmProblem problem, int group_rows,
                        const __grid_constant__ TileSchedule schedule, StreamKWorkspace workspace,
                        Epilogue epilogue) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using Tiles = typename Config::Tiles;
    using Cluster = ClusterOf<Config::kClusterM>;
    constexpr int kStages = Config::kStages, kClusterM = Config::kClusterM;
    auto& shared = shared_memory_as<typename Config::SharedMemory>();
    typename Tiles::Stage* const ring = shared.ring;
    // full[s]: stage s holds its K tile (the copy engine's bytes have landed).
    // empty[s]: every consumer of the cluster is done with stage s.
    std::uint64_t* const full = shared.full;
    std::uint64_t* const empty = shared.empty;

    init_ring_barriers(full, empty, kStages, Config::kConsumers * kClusterM);
    Cluster::sync();  // the other CTA's barriers are initialized before anyone arrives on them

    // Pieces of stacks from the schedule, where stage 19 took whole stacks in turn.
    const unsigned rank = Cluster::rank();
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
                    for (int slab = rank; slab < Tiles::kBSlabs; slab += kClusterM)
                        Cluster::load_b_slab(Tiles::b_tile(ring, stage) + slab * Tiles::kBSlabBytes, &b_map, tile.col + slab * Tiles::kBSlabColumns,
                                             kt * Tiles::kBlockK, &full[stage]);
                }
            }
        }
    } else {
        warpgroup_claim_registers<Config::kConsumerRegisters>();
        constexpr int kMBlocks = Config::kMBlocks, kColumns = Config::kColumnsPerConsumer;
        const TileOrigin part = Config::consumer_part(warpgroup - 1);
        const int first_slab = part.col / Tiles::kBSlabColumns;
        const bool signals = threadIdx.x % 128 == 0;
        const auto release = [&](int stage) {
            if (signals) Cluster::release(&empty[stage]);
        };
        // Named barriers: 1 and 2 each consumer's own (the C chunks), 3 both (the hand-over).
        const HandOverThreads consumers{static_cast<int>(threadIdx.x) - 128, Config::kConsumers * 128,
                                        1 + Config::kConsumers};
        WarpgroupAccumulators<kMBlocks, kColumns> acc;
        int passed = 0, c_chunks = 0;
        for (int index = 0; schedule.piece(cluster, index, piece); ++index) {
            const TileOrigin tile = tile_of(piece.stack);
            zero_accumulators<kMBlocks, kColumns>(acc);
            for (int kt = piece.k_begin; kt < piece.k_end; ++kt, ++passed) {
                const int stage = passed % kStages;
                mbarrier_wait(&full[stage], passed / kStages % 2);
                warpgroup_multiply_k_tile<kMBlocks, kColumns>(acc, Tiles::a_tile(ring, stage), Tiles::b_tile(ring, stage) + first_slab * Tiles::kBSlabBytes,
                                                              part.row);
                wgmma_wait_group<1>();
                if (kt > piece.k_begin) release((passed - 1) % kStages);
            }
            warpgroup_finish<kMBlocks, kColumns>(acc);
            release((passed - 1) % kStages);  // the producer is already loading the next tile
            // A piece of a leftover stack writes C only where it finishes the stack's sums.
            if (schedule.shared_piece(index) &&
                !hand_over_piece<Config, kShares>(acc, schedule, piece, index, cluster, rank, workspace, consumers))
                continue;
            write_c_part<Config>(acc, problem, c, &c_map, shared.c_buffers[warpgroup - 1], c_chunks,
                                 TileOrigin{tile.row + part.row, tile.col + part.col}, epilogue, warpgroup);
        }
        if constexpr (kShares)
            write_shares<Config>(schedule, cluster, rank, workspace, tile_of, reinterpret_cast<float4*>(ring),
                                 problem, c, epilogue, consumers);
        // Shared memory must outlive the copy engine's reads of it.
        if (signals) tma_store_wait<0>();
    }
    Cluster::sync_before_leaving();
#endif
}

// COut: C's type; Epilogue: see PlainEpilogue.
template <class Config, class COut = float, class Epilogue = PlainEpilogue>
void launch_hopper_tuned_kernel(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, COut* c,
                                int group_rows, cudaStream_t stream, const Epilogue& epilogue = {}) {
    using Tiles = typename Config::Tiles;
    const GemmShape& shape = problem.shape;
    const CUtensorMap a_map = make_bf16_tensor_map(a, shape.m, shape.k, Config::kBlockM, Tiles::kBlockK);
    const CUtensorMap b_map = make_bf16_tensor_map(b, shape.k, shape.n, Tiles::kBlockK, Tiles::kBSlabColumns);
    const CUtensorMap c_map = make_c_tensor_map(c, shape.m, shape.n);
    const auto kernel = hopper_tuned_kernel<Config, false, COut, Epilogue>;
    const auto shares_kernel = hopper_tuned_kernel<Config, true, COut, Epilogue>;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSharedBytes);
    cudaFuncSetAttribute(shares_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSharedBytes);
    const int stacks = ceil_div(shape.m, Config::kClusterM * Config::kBlockM) * ceil_div(shape.n, Config::kBlockN);
    const int resident = max_active_clusters(kernel, Config::kThreads, Config::kClusterM, Config::kSharedBytes);
    const TileSchedule schedule = make_grid_schedule(stacks, ceil_div(shape.k, Tiles::kBlockK), resident);
    const int clusters = schedule.clusters;
    StreamKWorkspace workspace;
    if (schedule.split_tail)
        workspace = stream_k_workspace(clusters * Config::kClusterM, Config::kBlockM * Config::kBlockN);
    launch_with_cluster(schedule.sliced ? shares_kernel : kernel, clusters * Config::kClusterM, Config::kThreads,
                        Config::kClusterM, Config::kSharedBytes, stream, a_map, b_map, c_map, c, problem, group_rows,
                        schedule, workspace, epilogue);
}

// Stage 20's tiles (20_hopper_tuned.cu): the tuner's winner on squares, and the smaller
// tiles it chooses by shape.
namespace tuned_tiles {
using Wide = WarpSpecializedConfig<128, 256, 4, 2>;
using Medium = WarpSpecializedConfig<128, 128, 5, 2>;
using MediumOneRow = WarpSpecializedConfig<128, 128, 5, 1>;
using Narrow = WarpSpecializedConfig<128, 64, 8, 1>;
using FewRows = WarpSpecializedConfig<64, 128, 8, 1>;
using FewRowsWide = WarpSpecializedConfig<64, 256, 4, 1>;
constexpr int kGroupRows = 8;
}  // namespace tuned_tiles

// Stage 20's tiles for a shape on a GPU of `sms` SMs (20_hopper_tuned.cu): 128x256 (the
// tuner's choice on squares), 128x128 (in clusters of two, or of one where C has a single
// row of tiles), 128x64, or for a few rows 64x128 or 64x256.
enum class TunedTiles { kWide, kMedium, kMediumOneRow, kNarrow, kFewRows, kFewRowsWide };
TunedTiles tuned_tiles_for(const GemmShape& shape, int sms);

// Stage 20's kernel in the tiles that tuned_tiles_for chooses, with an Epilogue (stage 20's
// launchers give it none: PlainEpilogue). K and N multiples of 8.
template <class COut, class Epilogue = PlainEpilogue>
void launch_in_tuned_tiles(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, COut* c,
                           cudaStream_t stream, const Epilogue& epilogue = {}) {
    namespace t = tuned_tiles;
    switch (tuned_tiles_for(problem.shape, current_sm_count())) {
        case TunedTiles::kFewRows:
            return launch_hopper_tuned_kernel<t::FewRows>(problem, a, b, c, t::kGroupRows, stream, epilogue);
        case TunedTiles::kFewRowsWide:
            return launch_hopper_tuned_kernel<t::FewRowsWide>(problem, a, b, c, t::kGroupRows, stream, epilogue);
        case TunedTiles::kWide:
            return launch_hopper_tuned_kernel<t::Wide>(problem, a, b, c, t::kGroupRows, stream, epilogue);
        case TunedTiles::kMedium:
            return launch_hopper_tuned_kernel<t::Medium>(problem, a, b, c, t::kGroupRows, stream, epilogue);
        case TunedTiles::kMediumOneRow:
            return launch_hopper_tuned_kernel<t::MediumOneRow>(problem, a, b, c, t::kGroupRows, stream, epilogue);
        case TunedTiles::kNarrow:
            return launch_hopper_tuned_kernel<t::Narrow>(problem, a, b, c, t::kGroupRows, stream, epilogue);
    }
}

}  // namespace sgemm
