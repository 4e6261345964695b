// Stage 19 — a persistent kernel whose C stores overlap the next tile's loads.
//
// Builds on stage 18 (18_clusters.cu): diff the two files.
//
// The idea: stage 17 measured its C stores as the largest cost left. Each CTA computes
// one tile, stores 128 KB of FP32 from registers while its tensor cores wait, and
// leaves; and since all CTAs of a wave finish together, every SM stores at once. Two
// changes take most of that away.
//   - Persistent CTAs: the grid is as many clusters as the GPU holds at once (66 of two
//     CTAs on the H100), and cluster c takes stacks c, c + 66, ... in raster order. The
//     producer's loop runs over all of its tiles, so while the consumers store one tile
//     it is already filling the ring with the next one's first four K tiles, and the
//     barrier inits, tensor maps and launch are paid once per SM.
//   - C through shared memory and TMA (19_persistent_c_stores.cuh, which stages 20 and 22
//     reuse): each consumer writes its 64x256 tile in eight 64x32 chunks (8 KB, swizzled
//     like the operands) into two buffers of its own and has the copy engine store each
//     chunk; it waits only until the engine has read a buffer two chunks later, not until
//     C is in memory. alpha and beta are applied on the way, and TMA leaves out what lies
//     outside C. The ring keeps its four stages: 4 x 48 + 2 x 16 KB of buffers = 225 KB.
//   - C in bf16 where asked (sgemm --c-type bf16: what a transformer layer writes, and what
//     the public Hopper worklogs measure): a chunk's 128-byte rows hold 64 bf16 columns,
//     half the bytes out, against cuBLAS writing bf16 C.
//
// What changed since stage 18: the loops over the cluster's stacks, with the ring's
// position (`passed`) running on from one tile to the next; the C stores; raster groups of
// 8 stack rows.
//
// Prediction: most of the 10 % at 4096 and 5 % at 8192 that the stores cost: 103-105 % of
// cuBLAS.
//
// Measured by make results on the H100 80GB HBM3: 668.0 TFLOPS at N = 4096 (99.7 % of cuBLAS bf16),
// 718.5 at 8192 (102.4 %).
// Short of the prediction. The TMA stores bought 3.5 points at 4096 and 1.5 at 8192 over
// the same kernel storing from registers, about a third of what the stores cost: most
// likely the copy engine takes a chunk only as fast as it writes one out, so a consumer
// still waits for most of its tile's write (not measured). Also left at 4096: 256 stacks on
// 66 clusters make 3.88 rounds, and the last leaves 8 clusters idle. With bf16 C the ratios
// stayed (99.1 and 101.7 %); docs/notes/19_persistent.md has the other tries.
//
// Shapes: any M; K and N multiples of 8 (with FP32 C, others padded by the driver).
// Needs sm_90a.
#include "19_persistent.hpp"

#include <cuda.h>

#include <algorithm>
#include <cstdint>

#include "19_persistent_c_stores.cuh"
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
// clusters of two CTAs; two C chunk buffers per consumer.
constexpr int kBlockM = 128, kBlockN = 256, kStages = 4, kClusterM = 2, kCBuffers = 2;
using Tiles = HopperStageTiles<kBlockM, kBlockN>;
constexpr int kConsumers = 2, kThreads = 128 * (1 + kConsumers);
constexpr int kRowsPerConsumer = kBlockM / kConsumers, kMBlocks = kRowsPerConsumer / 64;
// Registers after setmaxnreg: the producer keeps few, the consumers hold the accumulators.
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
static_assert(128 * kProducerRegisters + 128 * kConsumers * kConsumerRegisters <= 65536, "the SM's registers");
// Shared memory: the ring, each consumer's C chunk buffers (1024-byte aligned for the TMA
// store's swizzle) and the ring's barriers: 4 x 48 + 2 x 16 KB and a little. full[s]:
// stage s holds its K tile (the copy engine's bytes have landed); empty[s]: every
// consumer of the cluster is done with stage s.
constexpr int kCBufferBytes = kCBuffers * kCChunkBytes;
struct SharedMemory {
    Tiles::Stage ring[kStages];
    alignas(1024) std::uint8_t c_buffers[kConsumers][kCBufferBytes];
    std::uint64_t full[kStages], empty[kStages];
};
constexpr int kSharedBytes = sizeof(SharedMemory);
static_assert(Tiles::kBSlabs % kClusterM == 0, "the cluster's CTAs load B's slabs in equal shares");
static_assert(kMBlocks == 1, "TMA stores: one m64 block per consumer");
static_assert(kSharedBytes <= 227 * 1024, "an H100 block has at most 227 KB of shared memory");

// COut: C's type, float or __nv_bfloat16.
template <class COut>
__global__ void __launch_bounds__(kThreads, 1)
    persistent_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                      const __grid_constant__ CUtensorMap c_map, COut* c, GemmProblem problem, int group_rows) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    SharedMemory& shared = shared_memory_as<SharedMemory>();
    Tiles::Stage* const ring = shared.ring;
    std::uint64_t* const full = shared.full;
    std::uint64_t* const empty = shared.empty;

    init_ring_barriers(full, empty, kStages, kConsumers * kClusterM);
    cluster_sync();  // the other CTA's barriers are initialized before anyone arrives on them

    // Stacks as in stage 18, but as many clusters as the GPU holds at once, each taking
    // stacks cluster, cluster + clusters, ... in turn.
    const unsigned rank = cluster_cta_rank();
    const int cluster = blockIdx.x / kClusterM, clusters = gridDim.x / kClusterM;
    const int stacks = ceil_div(problem.shape.m, kClusterM * kBlockM) * ceil_div(problem.shape.n, kBlockN);
    const auto tile_of = [&](int stack) {
        TileOrigin origin = rasterized_tile_origin<kClusterM * kBlockM, kBlockN>(stack, problem.shape.m,
                                                                                problem.shape.n, group_rows);
        origin.row += rank * kBlockM;
        return origin;
    };
    const int k_tiles = ceil_div(problem.shape.k, Tiles::kBlockK);
    const int warpgroup = threadIdx.x / 128;
    // The ring runs on over the tiles: `passed` counts the K tiles that have gone through
    // it so far, over all of this CTA's tiles; the next is in stage passed % kStages, in
    // that stage's phase passed / kStages.
    if (warpgroup == 0) {
        warpgroup_release_registers<kProducerRegisters>();
        if (threadIdx.x == 0) {
            int passed = 0;
            for (int stack = cluster; stack < stacks; stack += clusters) {
                const TileOrigin tile = tile_of(stack);
                for (int kt = 0; kt < k_tiles; ++kt, ++passed) {
                    const int stage = passed % kStages;
                    mbarrier_wait(&empty[stage], (passed / kStages % 2) ^ 1);  // parity 1 first: free
                    mbarrier_arrive_expect_tx(&full[stage], Tiles::kBytes);
                    tma_load_2d(Tiles::a_tile(ring, stage), &a_map, kt * Tiles::kBlockK, tile.row, &full[stage]);
                    for (int slab = rank; slab < Tiles::kBSlabs; slab += kClusterM)
                        tma_load_2d_multicast(Tiles::b_tile(ring, stage) + slab * Tiles::kBSlabBytes, &b_map,
                                              tile.col + slab * Tiles::kBSlabColumns, kt * Tiles::kBlockK,
                                              &full[stage], (1u << kClusterM) - 1);
                }
            }
        }
    } else {
        warpgroup_claim_registers<kConsumerRegisters>();
        const int first_row = (warpgroup - 1) * kRowsPerConsumer;
        const bool signals = threadIdx.x % 128 == 0;
        const auto release = [&](int stage) {
            if (signals)
                for (int cta = 0; cta < kClusterM; ++cta) mbarrier_arrive_in_cta(&empty[stage], cta);
        };
        WarpgroupAccumulators<kMBlocks, kBlockN> acc;
        int passed = 0, c_chunks = 0;
        for (int stack = cluster; stack < stacks; stack += clusters) {
            const TileOrigin tile = tile_of(stack);
            zero_accumulators<kMBlocks, kBlockN>(acc);
            for (int kt = 0; kt < k_tiles; ++kt, ++passed) {
                const int stage = passed % kStages;
                mbarrier_wait(&full[stage], passed / kStages % 2);
                warpgroup_multiply_k_tile<kMBlocks, kBlockN>(acc, Tiles::a_tile(ring, stage),
                                                             Tiles::b_tile(ring, stage), first_row);
                wgmma_wait_group<1>();
                if (kt > 0) release((passed - 1) % kStages);
            }
            warpgroup_finish<kMBlocks, kBlockN>(acc);
            release((passed - 1) % kStages);  // the producer is already loading the next tile
#pragma unroll
            for (int chunk = 0; chunk < kBlockN / kCChunkColumnsOf<COut>; ++chunk)
                store_c_chunk_through_tma<kCBuffers>(acc[0] + chunk * kCChunkValuesOf<COut>, problem, c, &c_map,
                                                     shared.c_buffers[warpgroup - 1], c_chunks++, tile.row + first_row,
                                                     tile.col + chunk * kCChunkColumnsOf<COut>, warpgroup);
        }
        // Shared memory must outlive the copy engine's reads of it.
        if (signals) tma_store_wait<0>();
    }
    // No CTA may leave while the other can still write to its shared memory.
    __syncwarp();
    cluster_sync();
#endif
}

template <class COut>
void launch_persistent_into(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, COut* c,
                            cudaStream_t stream) {
    const GemmShape& shape = problem.shape;
    const CUtensorMap a_map = make_bf16_tensor_map(a, shape.m, shape.k, kBlockM, Tiles::kBlockK);
    const CUtensorMap b_map = make_bf16_tensor_map(b, shape.k, shape.n, Tiles::kBlockK, Tiles::kBSlabColumns);
    const CUtensorMap c_map = make_c_tensor_map(c, shape.m, shape.n);
    const auto kernel = persistent_kernel<COut>;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes);
    const int stacks = ceil_div(shape.m, kClusterM * kBlockM) * ceil_div(shape.n, kBlockN);
    const int resident = max_active_clusters(kernel, kThreads, kClusterM, kSharedBytes);
    const int clusters = resident > 0 ? std::min(stacks, resident) : stacks;
    launch_with_cluster(kernel, clusters * kClusterM, kThreads, kClusterM, kSharedBytes, stream, a_map, b_map, c_map,
                        c, problem, 8);
}

}  // namespace

void launch_persistent(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream) {
    launch_persistent_into(problem, a, b, c, stream);
}

void launch_persistent_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                              __nv_bfloat16* c, cudaStream_t stream) {
    launch_persistent_into(problem, a, b, c, stream);
}

}  // namespace sgemm
