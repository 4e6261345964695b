// The kernel of stages 15 and 16 as a template over its tile and its warpgroups: TMA
// fills a ring of shared-memory stages, wgmma multiplies them. Read 15_tma_wgmma.cu first.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "common/gemm_problem.hpp"
#include "common/hopper_tiles.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/tma.cuh"

namespace sgemm {

// A BlockM x BlockN block tile, Stages K tiles in shared memory, Warpgroups warpgroups
// that split the tile's rows (each BlockM / Warpgroups rows, whole m64 blocks).
template <int BlockM, int BlockN, int Stages, int Warpgroups>
struct TmaWgmmaConfig {
    using Tiles = HopperStageTiles<BlockM, BlockN>;
    static constexpr int kBlockM = BlockM, kBlockN = BlockN, kStages = Stages;
    static constexpr int kThreads = 128 * Warpgroups;
    static constexpr int kRowsPerWarpgroup = BlockM / Warpgroups;
    static constexpr int kMBlocks = kRowsPerWarpgroup / 64;
    // Shared memory: the ring and its barriers. full[s]: stage s holds its K tile (the copy
    // engine's bytes have landed).
    struct SharedMemory {
        typename Tiles::Stage ring[Stages];
        std::uint64_t full[Stages];
    };
    static constexpr int kSharedBytes = sizeof(SharedMemory);
    static_assert(kRowsPerWarpgroup % 64 == 0, "each warpgroup takes whole m64 blocks");
    static_assert(BlockN <= 256, "one wgmma spans the tile's columns");
};

template <class Config>
__global__ void __launch_bounds__(Config::kThreads, 1)
    tma_wgmma_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                     float* c, GemmProblem problem, int group_rows) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using Tiles = typename Config::Tiles;
    constexpr int kStages = Config::kStages;
    typename Config::SharedMemory& shared = shared_memory_as<typename Config::SharedMemory>();
    typename Tiles::Stage* const ring = shared.ring;
    std::uint64_t* const full = shared.full;

    const TileOrigin tile = rasterized_tile_origin<Config::kBlockM, Config::kBlockN>(problem.shape.m, problem.shape.n, group_rows);
    const int k_tiles = ceil_div(problem.shape.k, Tiles::kBlockK);
    const bool issues_copies = threadIdx.x == 0;

    // One thread asks the copy engine for K tile kt: A's box and B's slabs, all counted
    // against the stage's barrier. What lies outside the matrices arrives as zeros.
    const auto load_k_tile = [&](int kt) {
        const int stage = kt % kStages;
        mbarrier_arrive_expect_tx(&full[stage], Tiles::kBytes);
        tma_load_2d(Tiles::a_tile(ring, stage), &a_map, kt * Tiles::kBlockK, tile.row, &full[stage]);
#pragma unroll
        for (int slab = 0; slab < Tiles::kBSlabs; ++slab)
            tma_load_2d(Tiles::b_tile(ring, stage) + slab * Tiles::kBSlabBytes, &b_map,
                        tile.col + slab * Tiles::kBSlabColumns, kt * Tiles::kBlockK, &full[stage]);
    };

    if (issues_copies) {
        for (int stage = 0; stage < kStages; ++stage) mbarrier_init(&full[stage], 1);
        fence_mbarrier_init();
        for (int kt = 0; kt < min(kStages, k_tiles); ++kt) load_k_tile(kt);
    }
    __syncthreads();

    WarpgroupAccumulators<Config::kMBlocks, Config::kBlockN> acc;
    zero_accumulators<Config::kMBlocks, Config::kBlockN>(acc);
    const int first_row = threadIdx.x / 128 * Config::kRowsPerWarpgroup;
    for (int kt = 0; kt < k_tiles; ++kt) {
        const int stage = kt % kStages;
        mbarrier_wait(&full[stage], kt / kStages % 2);
        warpgroup_multiply_k_tile<Config::kMBlocks, Config::kBlockN>(acc, Tiles::a_tile(ring, stage),
                                                                     Tiles::b_tile(ring, stage), first_row);
        // Keep this tile's wgmmas running, wait for the previous tile's; once every
        // warpgroup is past that, the previous tile's stage is free for the copy engine.
        wgmma_wait_group<1>();
        __syncthreads();
        if (issues_copies && kt >= 1 && kt - 1 + kStages < k_tiles) load_k_tile(kt - 1 + kStages);
    }
    warpgroup_finish<Config::kMBlocks, Config::kBlockN>(acc);
    store_warpgroup_tile<Config::kMBlocks, Config::kBlockN>(acc, problem, c, tile.row + first_row, tile.col);
#endif
}

template <class Config>
void launch_tma_wgmma_kernel(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                             int group_rows, cudaStream_t stream) {
    using Tiles = typename Config::Tiles;
    const GemmShape& shape = problem.shape;
    const CUtensorMap a_map = make_bf16_tensor_map(a, shape.m, shape.k, Config::kBlockM, Tiles::kBlockK);
    const CUtensorMap b_map = make_bf16_tensor_map(b, shape.k, shape.n, Tiles::kBlockK, Tiles::kBSlabColumns);
    cudaFuncSetAttribute(tma_wgmma_kernel<Config>, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSharedBytes);
    const int tiles = ceil_div(shape.m, Config::kBlockM) * ceil_div(shape.n, Config::kBlockN);
    tma_wgmma_kernel<Config><<<tiles, Config::kThreads, Config::kSharedBytes, stream>>>(a_map, b_map, c, problem,
                                                                                         group_rows);
}

}  // namespace sgemm
