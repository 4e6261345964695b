// Stage 18 — clusters: two CTAs share B's tile through TMA multicast.
//
// Builds on stage 17 (17_warp_specialized.cu): diff the two files.
//
// The idea: vertically adjacent tiles need the same 64x256 slice of B for every K tile,
// and each CTA of stage 17 fetches it from L2 on its own. A thread-block cluster
// (common/cluster.cuh) launches two CTAs together on neighbouring SMs, which can write
// each other's shared memory: each CTA's producer loads half of B's slabs with
// multicast (common/tma.cuh), and the copy engine writes them into both CTAs' rings. L2
// serves 32 KB per CTA and K tile instead of 48.
//
// What changed since stage 17: the cluster takes a "stack", two vertically adjacent tiles,
// one per CTA; the producers' B loads are multicast; a stage is free only when the
// consumers of both CTAs are done with it, so each consumer arrives on the empty barrier
// of every CTA of the cluster (mapa + a remote mbarrier arrive); the barrier inits are
// fenced for the cluster, and the CTAs meet (barrier.cluster) before they start and
// before they leave, so that neither writes into a CTA that has gone.
//
// Prediction: if L2 still limits, 3-5 % over stage 17.
//
// Measured by make results on the H100 80GB HBM3: 622.7 TFLOPS at N = 4096 (91.5 % of cuBLAS bf16),
// 663.5 at 8192 (97.5 %).
// 3-4 points of cuBLAS below stage 17, not above it. The same cluster with each CTA loading
// all of B itself measured the same: L2 is not what limits this kernel. What the cluster
// costs is, most likely, that its two CTAs start, share stages and end together, so the
// slower sets the pace of both (not measured). It pays off with stage 19, whose CTAs stay
// on their SMs. docs/notes/18_clusters.md has the tries, among them a remote arrive that
// halved the speed.
//
// Shapes: any M; K and N multiples of 8. Needs sm_90a.
#include "18_clusters.hpp"

#include <cuda.h>

#include <cstdint>

#include "common/cluster.cuh"
#include "common/gemm_problem.hpp"
#include "common/hopper_tiles.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/tma.cuh"
#include "common/wgmma.cuh"

namespace sgemm {
namespace {

// 128x256 tiles, two consumer warpgroups of 64x256 each, four K tiles in the ring;
// clusters of two CTAs.
constexpr int kBlockM = 128, kBlockN = 256, kStages = 4, kClusterM = 2;
using Tiles = HopperStageTiles<kBlockM, kBlockN>;
constexpr int kConsumers = 2, kThreads = 128 * (1 + kConsumers);
constexpr int kRowsPerConsumer = kBlockM / kConsumers, kMBlocks = kRowsPerConsumer / 64;
static_assert(kMBlocks * 64 == kRowsPerConsumer, "each consumer takes whole m64 blocks");
// Registers after setmaxnreg: the producer keeps few, the consumers hold the accumulators.
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
static_assert(128 * kProducerRegisters + 128 * kConsumers * kConsumerRegisters <= 65536, "the SM's registers");
// Shared memory: the ring and its barriers. full[s]: stage s holds its K tile (the copy
// engine's bytes have landed); empty[s]: every consumer of the cluster is done with stage s.
struct SharedMemory {
    Tiles::Stage ring[kStages];
    std::uint64_t full[kStages], empty[kStages];
};
constexpr int kSharedBytes = sizeof(SharedMemory);
static_assert(Tiles::kBSlabs % kClusterM == 0, "the cluster's CTAs load B's slabs in equal shares");

__global__ void __launch_bounds__(kThreads, 1)
    clusters_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map, float* c,
                    GemmProblem problem, int group_rows) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    SharedMemory& shared = shared_memory_as<SharedMemory>();
    Tiles::Stage* const ring = shared.ring;
    std::uint64_t* const full = shared.full;
    std::uint64_t* const empty = shared.empty;

    init_ring_barriers(full, empty, kStages, kConsumers * kClusterM);
    cluster_sync();  // the other CTA's barriers are initialized before anyone arrives on them

    // A "stack": the kClusterM vertically adjacent tiles that one cluster computes, which
    // share B's tile. The clusters take the stacks in raster order, and CTA `rank` of a
    // cluster takes the rank-th tile of its stack.
    const unsigned rank = cluster_cta_rank();
    const int stack = blockIdx.x / kClusterM;
    TileOrigin tile = rasterized_tile_origin<kClusterM * kBlockM, kBlockN>(stack, problem.shape.m, problem.shape.n,
                                                                          group_rows);
    tile.row += rank * kBlockM;
    const int k_tiles = ceil_div(problem.shape.k, Tiles::kBlockK);
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        // The producer: one thread waits for a free stage, then asks the copy engine for
        // the K tile's A box and its share of B's slabs, which land in every CTA of the
        // cluster, each counting them against its own full barrier.
        warpgroup_release_registers<kProducerRegisters>();
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int stage = kt % kStages;
                mbarrier_wait(&empty[stage], (kt / kStages % 2) ^ 1);  // parity 1 first: free
                mbarrier_arrive_expect_tx(&full[stage], Tiles::kBytes);
                tma_load_2d(Tiles::a_tile(ring, stage), &a_map, kt * Tiles::kBlockK, tile.row, &full[stage]);
                for (int slab = rank; slab < Tiles::kBSlabs; slab += kClusterM)
                    tma_load_2d_multicast(Tiles::b_tile(ring, stage) + slab * Tiles::kBSlabBytes, &b_map,
                                          tile.col + slab * Tiles::kBSlabColumns, kt * Tiles::kBlockK, &full[stage],
                                          (1u << kClusterM) - 1);
            }
        }
    } else {
        // A consumer: waits for each K tile, multiplies it, and hands back the stage of the
        // previous one once its wgmmas are done, to every CTA of the cluster, whose
        // producers all write into it.
        warpgroup_claim_registers<kConsumerRegisters>();
        const int first_row = (warpgroup - 1) * kRowsPerConsumer;
        const bool signals = threadIdx.x % 128 == 0;
        const auto release = [&](int stage) {
            if (signals)
                for (int cta = 0; cta < kClusterM; ++cta) mbarrier_arrive_in_cta(&empty[stage], cta);
        };
        WarpgroupAccumulators<kMBlocks, kBlockN> acc;
        zero_accumulators<kMBlocks, kBlockN>(acc);
        for (int kt = 0; kt < k_tiles; ++kt) {
            const int stage = kt % kStages;
            mbarrier_wait(&full[stage], kt / kStages % 2);
            warpgroup_multiply_k_tile<kMBlocks, kBlockN>(acc, Tiles::a_tile(ring, stage), Tiles::b_tile(ring, stage),
                                                         first_row);
            wgmma_wait_group<1>();
            if (kt > 0) release((kt - 1) % kStages);
        }
        warpgroup_finish<kMBlocks, kBlockN>(acc);
        store_warpgroup_tile<kMBlocks, kBlockN>(acc, problem, c, tile.row + first_row, tile.col);
    }
    // No CTA may leave while the other can still write to its shared memory.
    __syncwarp();
    cluster_sync();
#endif
}

}  // namespace

void launch_clusters(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                     cudaStream_t stream) {
    const GemmShape& shape = problem.shape;
    const CUtensorMap a_map = make_bf16_tensor_map(a, shape.m, shape.k, kBlockM, Tiles::kBlockK);
    const CUtensorMap b_map = make_bf16_tensor_map(b, shape.k, shape.n, Tiles::kBlockK, Tiles::kBSlabColumns);
    cudaFuncSetAttribute(clusters_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes);
    const int stacks = ceil_div(shape.m, kClusterM * kBlockM) * ceil_div(shape.n, kBlockN);
    launch_with_cluster(clusters_kernel, stacks * kClusterM, kThreads, kClusterM, kSharedBytes, stream, a_map, b_map,
                        c, problem, 16);
}

}  // namespace sgemm
