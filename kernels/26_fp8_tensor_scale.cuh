// Stage 26's kernel (read 26_fp8_tensor_scale.cu first): stage 20's persistent,
// warp-specialized kernel on e4m3 operands. A producer warpgroup fills a ring of K blocks
// (128 values of K: 128 bytes, one swizzled row) by TMA; two consumer warpgroups take 64
// rows of the tile each and multiply with wgmma k32; D leaves as bf16 through stage 19's
// chunked TMA stores. What a K block does to the sums (accumulate them in the MMA and
// scale once, or promote them into FP32 with their scales) is the kernel's KLoop: this
// chapter's is MmaAccumulation; stages 27 and 28 define theirs.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "19_persistent_c_stores.cuh"
#include "20_hopper_tuned.cuh"
#include "common/fp8_problem.hpp"
#include "common/hopper_tiles.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/tma.cuh"
#include "common/wgmma_fp8.cuh"

namespace sgemm {

// How a consumer's part of D leaves its registers (the kernel's DStore): through shared
// memory and TMA stores in 64-column chunks, stage 19's way, in kBuffers buffers a consumer
// (one lets a stage more into 227 KB: stage 29). Stage 29 defines another DStore.
template <int kBuffers = 2>
struct ChunkedDStores {
    static constexpr int kCBuffers = kBuffers;
    static constexpr int kBufferBytes = kCBuffers * kCChunkBytes;
    template <int kColumns>
    static constexpr bool kTakes = kColumns % kCChunkColumnsOf<__nv_bfloat16> == 0;
    // The consumer's kColumns of D from `values`, its part of the tile starting at `origin` in D;
    // `buffer` is its own, `chunks` counts its chunks, `barrier_id` is its named barrier.
    template <int kColumns>
    __device__ static void store(const float* values, const GemmProblem& problem, __nv_bfloat16* d,
                                 const CUtensorMap* d_map, std::uint8_t* buffer, int& chunks, TileOrigin origin,
                                 int barrier_id) {
        constexpr int kChunkColumns = kCChunkColumnsOf<__nv_bfloat16>;
#pragma unroll
        for (int chunk = 0; chunk < kColumns / kChunkColumns; ++chunk)
            store_c_chunk_through_tma<kCBuffers>(values + chunk * kCChunkValuesOf<__nv_bfloat16>, problem, d, d_map,
                                                 buffer, chunks++, origin.row, origin.col + chunk * kChunkColumns,
                                                 barrier_id);
    }
    __device__ static void finish() {
        if (threadIdx.x % 128 == 0) tma_store_wait<0>();  // shared memory outlives the stores' reads
    }
};

// BlockM x BlockN tiles (BlockM 128: the consumers take 64 rows each; 64: they take half the
// columns each), Stages K blocks in the ring, clusters of ClusterM CTAs stacked along M that
// share B's block (each loads BlockN / ClusterM of its rows for all of them). A stage also
// holds ScaleBytes of the K block's scales where the KLoop asks for them (stage 28), in a slot
// of whole 128 bytes (where TMA writes). DStore: how D leaves.
template <int BlockN, int Stages, int ClusterM, int ScaleBytes = 0, int BlockM = 128, class DStore = ChunkedDStores<>>
struct Fp8Config {
    static constexpr int kBlockM = BlockM, kBlockN = BlockN, kBlockK = kFp8ScaleBlock;
    static constexpr int kStages = Stages, kClusterM = ClusterM;
    static constexpr int kConsumers = 2, kThreads = 128 * (1 + kConsumers);
    static constexpr bool kSplitColumns = BlockM == 64;
    static constexpr int kColumnsPerConsumer = kSplitColumns ? BlockN / kConsumers : BlockN;
    static constexpr int kABytes = kBlockM * kBlockK, kBBytes = kBlockN * kBlockK;
    static constexpr int kStageBytes = kABytes + kBBytes;
    static constexpr int kBRowsPerCta = kBlockN / kClusterM;
    static constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
    static constexpr int kScaleBytes = ScaleBytes, kScaleSlotBytes = (ScaleBytes + 127) / 128 * 128;
    using Store = DStore;
    struct SharedMemory {
        alignas(1024) std::uint8_t ring[Stages][kStageBytes];
        alignas(1024) std::uint8_t d_buffers[kConsumers][DStore::kBufferBytes > 0 ? DStore::kBufferBytes : 16];
        alignas(128) std::uint8_t scales[Stages][kScaleSlotBytes > 0 ? kScaleSlotBytes : 16];
        std::uint64_t full[Stages], empty[Stages];
    };
    static constexpr int kSharedBytes = sizeof(SharedMemory);

    // Where consumer `consumer`'s part of a tile starts, from the tile's corner.
    __device__ static TileOrigin consumer_part(int consumer) {
        return kSplitColumns ? TileOrigin{0, consumer * kColumnsPerConsumer} : TileOrigin{consumer * 64, 0};
    }

    static_assert(BlockM == 64 || BlockM == 128, "64 rows a consumer, or the columns split between them");
    static_assert(kBRowsPerCta % 8 == 0 && kColumnsPerConsumer % 8 == 0,
                  "B's shares and each consumer's rows of it are whole 1024-byte swizzle patterns");
    static_assert(DStore::template kTakes<kColumnsPerConsumer>, "the D stores take the consumer's columns");
    static_assert(kSharedBytes <= 227 * 1024, "an H100 block has at most 227 KB of shared memory");
};

// A place in the ring: its stage, and the parity of that stage's barriers' phase this time
// round. Stepped on, not computed from a count of K blocks: a count's "% 6" and "/ 6" cost
// a dozen instructions each K block, on the path from one block's wgmmas to the next.
template <int kStages>
struct RingSlot {
    int stage = 0;
    unsigned phase = 0;
    __device__ RingSlot next() const { return stage + 1 == kStages ? RingSlot{0, phase ^ 1u} : RingSlot{stage + 1, phase}; }
};

// The ring as a consumer sees it.
template <class Config>
struct Fp8Ring {
    using Slot = RingSlot<Config::kStages>;
    std::uint8_t (*stages)[Config::kStageBytes];
    std::uint8_t (*stage_scales)[Config::kScaleSlotBytes > 0 ? Config::kScaleSlotBytes : 16];
    std::uint64_t* full;
    std::uint64_t* empty;
    bool signals;  // a thread that releases stages: the warpgroup's first (or each warp's: kReleasingWarps)

    __device__ const std::uint8_t* a(Slot slot) const { return stages[slot.stage]; }
    __device__ const std::uint8_t* b(Slot slot) const { return a(slot) + Config::kABytes; }
    __device__ const float* scales(Slot slot) const { return reinterpret_cast<const float*>(stage_scales[slot.stage]); }
    __device__ void wait(Slot slot) const { mbarrier_wait(&full[slot.stage], slot.phase); }
    // Every consumer of the cluster arrives on the stage's empty barrier in each of its CTAs
    // (the stage holds B's rows from all of them), by its first thread, or by each warp's
    // first where the KLoop's warps read the stage themselves once its wgmmas are done.
    __device__ void release(Slot slot) const {
#pragma unroll
        for (int cta = 0; cta < Config::kClusterM; ++cta) mbarrier_arrive_in_cta_if(&empty[slot.stage], cta, signals);
    }
};

// One K block's wgmmas for a consumer: four m64nNk32 steps on its 64 rows of A and kColumns
// rows of B (the part of the tile from `part`), as one group. `fresh`: the first overwrites d.
// A step starts 32 bytes further into the rows: 2 in the descriptors' address field.
template <int kColumns>
__device__ __forceinline__ void multiply_fp8_k_block(float (&d)[kColumns / 2], const std::uint8_t* a_tile,
                                                     const std::uint8_t* b_tile, TileOrigin part, bool fresh) {
    const std::uint64_t a = a_step_descriptor(a_tile, part.row, 0), b = a_step_descriptor(b_tile, part.col, 0);
    wgmma_fence();
#pragma unroll
    for (int step = 0; step < kFp8ScaleBlock / 32; ++step)
        wgmma_m64k32_e4m3<kColumns>(d, a + 2 * step, b + 2 * step, !(fresh && step == 0));
    wgmma_commit_group();
}

// The tensor maps of the scales a KLoop has TMA load into each stage beside A's and B's
// blocks (stage 28): unused where it loads none.
struct Fp8ScaleMaps {
    CUtensorMap a, b;
};

// What the producer loads into each stage beside A's and B's blocks: the tensor maps it
// loads from (made on the host), the bytes a stage receives, and the loads of K block kb for
// the tile at `tile`; and how many of a consumer's warps free a stage (kReleasingWarps): its
// wgmmas' reads are the warpgroup's, so its first thread does, unless a KLoop's threads read
// the stage after them (stage 28). Nothing, for one scale a tensor.
struct NoStageScales {
    static constexpr int kReleasingWarps = 1;
    template <class Config>
    static Fp8ScaleMaps scale_maps(const GemmShape&, const Fp8Operands&) { return {}; }
    template <class Config>
    static constexpr int kStageScaleBytes = 0;
    template <class Config>
    __device__ static void load_stage_scales(void*, const Fp8ScaleMaps&, TileOrigin, int, std::uint64_t*) {}
};

// Stage 26's KLoop: the K blocks accumulate in the MMA's registers, as stage 20's K tiles
// do, and the tensor scales multiply the sums once at the end. A KLoop's Consumer runs a
// tile's K blocks through the ring and leaves the tile's scaled sums in sums().
struct MmaAccumulation : NoStageScales {
    template <class Config>
    struct Consumer {
        static constexpr int kColumns = Config::kColumnsPerConsumer;
        float acc[kColumns / 2];
        float scale;

        __device__ Consumer(const Fp8Operands& operands, const GemmShape&)
            : scale(*operands.a_scales * *operands.b_scales) {}

        // The consumer's part of the tile at `tile` starts at `part` from its corner; its K
        // blocks start at `slot` in the ring, which it leaves past them.
        template <class Ring>
        __device__ void run_tile(const Ring& ring, typename Ring::Slot& slot, int k_blocks, TileOrigin,
                                 TileOrigin part) {
            typename Ring::Slot previous = slot;
            for (int kb = 0; kb < k_blocks; ++kb) {
                ring.wait(slot);
                multiply_fp8_k_block<kColumns>(acc, ring.a(slot), ring.b(slot), part, kb == 0);
                wgmma_wait_group<1>();  // the previous block's wgmmas are done with its stage
                if (kb > 0) ring.release(previous);
                previous = slot;
                slot = slot.next();
            }
            wgmma_wait_group<0>();
            wgmma_fence_accumulators(acc);
            if (k_blocks > 0) ring.release(previous);
#pragma unroll
            for (int i = 0; i < kColumns / 2; ++i) acc[i] = k_blocks > 0 ? acc[i] * scale : 0.0f;
        }
        __device__ float* sums() { return acc; }
    };
};

template <class Config, class KLoop>
__global__ void __launch_bounds__(Config::kThreads, 1)
    fp8_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
               const __grid_constant__ CUtensorMap d_map, const __grid_constant__ Fp8ScaleMaps scale_maps,
               __nv_bfloat16* d, GemmProblem problem, Fp8Operands operands, int group_rows) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using Cluster = ClusterOf<Config::kClusterM>;
    constexpr int kStages = Config::kStages, kClusterM = Config::kClusterM;
    auto& shared = shared_memory_as<typename Config::SharedMemory>();
    init_ring_barriers(shared.full, shared.empty, kStages, Config::kConsumers * kClusterM * KLoop::kReleasingWarps);
    Cluster::sync();  // the other CTAs' barriers are initialized before anyone arrives on them

    // Stacks of kClusterM tiles, one a CTA, dealt to the clusters in turn (stage 19).
    const GemmShape& shape = problem.shape;
    const unsigned rank = Cluster::rank();
    const int cluster = blockIdx.x / kClusterM, clusters = gridDim.x / kClusterM;
    const int stacks = ceil_div(shape.m, kClusterM * Config::kBlockM) * ceil_div(shape.n, Config::kBlockN);
    const int k_blocks = ceil_div(shape.k, Config::kBlockK);
    const auto tile_of = [&](int stack) {
        TileOrigin origin =
            rasterized_tile_origin<kClusterM * Config::kBlockM, Config::kBlockN>(stack, shape.m, shape.n, group_rows);
        origin.row += rank * Config::kBlockM;
        return origin;
    };
    // Through a shuffle, so that ptxas knows it warp-uniform: what follows from it (a consumer's
    // rows, its descriptors) can live in uniform registers.
    const int warpgroup = __shfl_sync(0xffffffff, threadIdx.x / 128, 0);
    if (warpgroup == 0) {
        warpgroup_release_registers<Config::kProducerRegisters>();
        if (threadIdx.x == 0) {
            RingSlot<kStages> slot;
            for (int stack = cluster; stack < stacks; stack += clusters) {
                const TileOrigin tile = tile_of(stack);
                for (int kb = 0; kb < k_blocks; ++kb, slot = slot.next()) {
                    const int stage = slot.stage;
                    mbarrier_wait(&shared.empty[stage], slot.phase ^ 1);  // parity 1 first: free
                    mbarrier_arrive_expect_tx(&shared.full[stage],
                                              Config::kStageBytes + KLoop::template kStageScaleBytes<Config>);
                    KLoop::template load_stage_scales<Config>(shared.scales[stage], scale_maps, tile, kb,
                                                              &shared.full[stage]);
                    tma_load_2d(shared.ring[stage], &a_map, kb * Config::kBlockK, tile.row, &shared.full[stage]);
                    Cluster::load_b_slab(shared.ring[stage] + Config::kABytes + rank * Config::kBRowsPerCta * Config::kBlockK,
                                         &b_map, kb * Config::kBlockK, tile.col + rank * Config::kBRowsPerCta,
                                         &shared.full[stage]);
                }
            }
        }
    } else {
        warpgroup_claim_registers<Config::kConsumerRegisters>();
        const int consumer = warpgroup - 1;
        const TileOrigin part = Config::consumer_part(consumer);
        const Fp8Ring<Config> ring{shared.ring, shared.scales, shared.full, shared.empty,
                                   threadIdx.x % (128 / KLoop::kReleasingWarps) == 0};
        typename KLoop::template Consumer<Config> k_loop(operands, shape);
        RingSlot<kStages> slot;
        int d_chunks = 0;
        for (int stack = cluster; stack < stacks; stack += clusters) {
            const TileOrigin tile = tile_of(stack);
            k_loop.run_tile(ring, slot, k_blocks, tile, part);
            Config::Store::template store<Config::kColumnsPerConsumer>(
                k_loop.sums(), problem, d, &d_map, shared.d_buffers[consumer], d_chunks,
                TileOrigin{tile.row + part.row, tile.col + part.col}, warpgroup);
        }
        Config::Store::finish();
    }
    Cluster::sync_before_leaving();
#endif
}

// Launches fp8_kernel persistent: as many clusters as the GPU holds, or one a stack.
// K a multiple of 16 and N of 8 (TMA's rows start 16-byte aligned).
template <class Config, class KLoop>
void launch_fp8_kernel(const GemmProblem& problem, const Fp8Operands& operands, __nv_bfloat16* d, int group_rows,
                       cudaStream_t stream) {
    const GemmShape& shape = problem.shape;
    const CUtensorMap a_map = make_tensor_map(CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, operands.a, shape.m, shape.k,
                                              Config::kBlockM, Config::kBlockK);
    const CUtensorMap b_map = make_tensor_map(CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, operands.b, shape.n, shape.k,
                                              Config::kBRowsPerCta, Config::kBlockK);
    const CUtensorMap d_map = make_c_tensor_map(d, shape.m, shape.n);
    const Fp8ScaleMaps scale_maps = KLoop::template scale_maps<Config>(shape, operands);
    const auto kernel = fp8_kernel<Config, KLoop>;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSharedBytes);
    const int stacks = ceil_div(shape.m, Config::kClusterM * Config::kBlockM) * ceil_div(shape.n, Config::kBlockN);
    const int resident = max_active_clusters(kernel, Config::kThreads, Config::kClusterM, Config::kSharedBytes);
    const int clusters = std::max(1, std::min(stacks, resident));
    launch_with_cluster(kernel, clusters * Config::kClusterM, Config::kThreads, Config::kClusterM,
                        Config::kSharedBytes, stream, a_map, b_map, d_map, scale_maps, d, problem, operands,
                        group_rows);
}

}  // namespace sgemm
