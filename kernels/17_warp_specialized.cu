// Stage 17 — warp specialization: a producer warpgroup, two consumers, full and empty barriers.
//
// Builds on stage 16 (16_two_warpgroups.cu and 15_tma_wgmma.cuh): diff the kernels.
//
// The idea: in stage 16 the warps that multiply are also the warps that wait for copies
// and meet at a barrier every K tile. Here the roles are split. A producer warpgroup (one
// of its threads) only issues TMA copies; two consumer warpgroups only wait for data and
// multiply. They hand the ring's stages back and forth through two mbarriers a stage:
//   full[s]:  the copy engine's bytes for stage s have landed (expect_tx, as in stage 15);
//             the consumers wait on it.
//   empty[s]: both consumers are done with stage s (each arrives once its wgmmas that
//             read it have finished); the producer waits on it before refilling s.
// Nobody waits on a barrier of the whole block any more: a consumer that is ahead keeps
// multiplying, and the producer runs up to four K tiles ahead. setmaxnreg
// (common/wgmma.cuh) hands registers from the producer (down to 40) to the consumers (up
// to 232); the SASS shows both (USETMAXREG).
//
// What changed since stage 16: the kernel, below, now of 384 threads: the producer and two
// consumers, each consumer a 64x256 half of the same 128x256 tile; four 48 KB stages, one
// CTA per tile in raster order, C from registers as before.
//
// Prediction: the consumers' barrier wait and thread 0's copy issue were a few percent of
// each K tile; taking them off should bring 3-5 %.
//
// Measured by make results on the H100 80GB HBM3: 638.8 TFLOPS at N = 4096 (94.8 % of cuBLAS bf16),
// 699.3 at 8192 (100.9 %).
// No better than stage 16: the prediction missed. What stops the tensor cores is not in the
// K loop: the same kernel with its C stores left out (timing only) ran at 106.9 % of cuBLAS
// at 4096. Writing the 128 KB FP32 tile from registers costs about 10 % at 4096, while
// every SM stores at once and its tensor cores wait. Stage 19 takes that on.
//
// Shapes: any M; K and N multiples of 8. Needs sm_90a.
#include "17_warp_specialized.hpp"

#include <cuda.h>

#include <cstdint>

#include "common/gemm_problem.hpp"
#include "common/hopper_tiles.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/tma.cuh"
#include "common/wgmma.cuh"

namespace sgemm {
namespace {

// 128x256 tiles, two consumer warpgroups of 64x256 each, four K tiles in the ring.
constexpr int kBlockM = 128, kBlockN = 256, kStages = 4;
using Tiles = HopperStageTiles<kBlockM, kBlockN>;
constexpr int kConsumers = 2, kThreads = 128 * (1 + kConsumers);
constexpr int kRowsPerConsumer = kBlockM / kConsumers, kMBlocks = kRowsPerConsumer / 64;
static_assert(kMBlocks * 64 == kRowsPerConsumer, "each consumer takes whole m64 blocks");
// Registers after setmaxnreg: the producer keeps few, the consumers hold the accumulators.
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
static_assert(128 * kProducerRegisters + 128 * kConsumers * kConsumerRegisters <= 65536, "the SM's registers");
// Shared memory: the ring and its barriers. full[s]: stage s holds its K tile (the copy
// engine's bytes have landed); empty[s]: both consumers are done with stage s.
struct SharedMemory {
    Tiles::Stage ring[kStages];
    std::uint64_t full[kStages], empty[kStages];
};
constexpr int kSharedBytes = sizeof(SharedMemory);

__global__ void __launch_bounds__(kThreads, 1)
    warp_specialized_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                            float* c, GemmProblem problem, int group_rows) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    SharedMemory& shared = shared_memory_as<SharedMemory>();
    Tiles::Stage* const ring = shared.ring;
    std::uint64_t* const full = shared.full;
    std::uint64_t* const empty = shared.empty;

    init_ring_barriers(full, empty, kStages, kConsumers);
    __syncthreads();

    const TileOrigin tile = rasterized_tile_origin<kBlockM, kBlockN>(problem.shape.m, problem.shape.n, group_rows);
    const int k_tiles = ceil_div(problem.shape.k, Tiles::kBlockK);
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        // The producer: one thread waits for a free stage, then asks the copy engine for
        // the K tile's A box and B slabs, counted against the stage's full barrier.
        warpgroup_release_registers<kProducerRegisters>();
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int stage = kt % kStages;
                mbarrier_wait(&empty[stage], (kt / kStages % 2) ^ 1);  // parity 1 first: free
                mbarrier_arrive_expect_tx(&full[stage], Tiles::kBytes);
                tma_load_2d(Tiles::a_tile(ring, stage), &a_map, kt * Tiles::kBlockK, tile.row, &full[stage]);
                for (int slab = 0; slab < Tiles::kBSlabs; ++slab)
                    tma_load_2d(Tiles::b_tile(ring, stage) + slab * Tiles::kBSlabBytes, &b_map,
                                tile.col + slab * Tiles::kBSlabColumns, kt * Tiles::kBlockK, &full[stage]);
            }
        }
    } else {
        // A consumer: waits for each K tile, multiplies it, and hands back the stage of the
        // previous one once its wgmmas are done.
        warpgroup_claim_registers<kConsumerRegisters>();
        const int first_row = (warpgroup - 1) * kRowsPerConsumer;
        const bool signals = threadIdx.x % 128 == 0;
        WarpgroupAccumulators<kMBlocks, kBlockN> acc;
        zero_accumulators<kMBlocks, kBlockN>(acc);
        for (int kt = 0; kt < k_tiles; ++kt) {
            const int stage = kt % kStages;
            mbarrier_wait(&full[stage], kt / kStages % 2);
            warpgroup_multiply_k_tile<kMBlocks, kBlockN>(acc, Tiles::a_tile(ring, stage), Tiles::b_tile(ring, stage),
                                                         first_row);
            wgmma_wait_group<1>();
            if (kt > 0 && signals) mbarrier_arrive(&empty[(kt - 1) % kStages]);
        }
        warpgroup_finish<kMBlocks, kBlockN>(acc);
        store_warpgroup_tile<kMBlocks, kBlockN>(acc, problem, c, tile.row + first_row, tile.col);
    }
#endif
}

}  // namespace

void launch_warp_specialized(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                             cudaStream_t stream) {
    const GemmShape& shape = problem.shape;
    const CUtensorMap a_map = make_bf16_tensor_map(a, shape.m, shape.k, kBlockM, Tiles::kBlockK);
    const CUtensorMap b_map = make_bf16_tensor_map(b, shape.k, shape.n, Tiles::kBlockK, Tiles::kBSlabColumns);
    cudaFuncSetAttribute(warp_specialized_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes);
    const int tiles = ceil_div(shape.m, kBlockM) * ceil_div(shape.n, kBlockN);
    warp_specialized_kernel<<<tiles, kThreads, kSharedBytes, stream>>>(a_map, b_map, c, problem, 16);
}

}  // namespace sgemm
