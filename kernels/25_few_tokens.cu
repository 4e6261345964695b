// Stage 25 — few tokens: A and B swapped, K split over a cluster.
//
// Builds on stage 17 (17_warp_specialized.cu): diff the two files.
//
// The idea: at a few tokens (M <= 64, a decoder's batch) the weights B are the problem's
// bytes and the time is reading them once: 4096 x 4096 bf16 is 32 MB, 12 us at the DRAM
// bandwidth whatever M is. Stage 20 puts the tokens in wgmma's M, which is 64 or 128
// rows: at 6 tokens most of each A tile is zeros, and a 4096-wide C has 32 tiles of 128
// columns for 132 SMs, so stage 20 shares each tile out by K over four clusters and adds
// 64 x 128 FP32 partial sums through global memory. Three changes:
//   - Swap the operands: C^T = B^T A^T. wgmma's M (the 64 rows of an m64 block) is now
//     64 columns of C, read from B's slabs as MN-major (tA = 1: wgmma transposes 16-bit
//     operands as it reads them), and wgmma's N, any multiple of 8 from 8 to 256, holds
//     the tokens: a 6-token C computes 8 columns, not 64 rows. A's box is 8-128 rows of 64
//     values of K, K-major, as B's was in the other order. The accumulators hold a block
//     of C^T, so the epilogue stores each value at C[token][column].
//   - Rows TMA cannot read (K or N off a multiple of 8: rows that start off 16 bytes) are
//     copied by the producer warpgroup's cp.async, as they lie, into staging rows up to
//     eight stages ahead, then shifted into the same swizzled tiles
//     (common/swizzled_rows.cuh), so that no shape needs zero-padded copies.
//   - Split K over the CTAs of a cluster (up to 8): the CTAs of a cluster compute the same
//     tile of C over consecutive ranges of K, leave their sums in their own shared memory,
//     and after a cluster barrier each adds up a share of the tile from all of them
//     (distributed shared memory: ld.shared::cluster), in the same order every time, so
//     every run gives the same bits; no global workspace, no flags, one launch.
// The launcher's plan (few_tokens_plan) takes the smallest token tile that holds M (up
// to 128; more tokens take several tiles), and of 64- and 128-column tiles and 1-8
// splits the one that fills the most SMs with the most even ranges of K.
//
// What changed since stage 17: the operands' roles and the tiles (a tile is 64 or 128
// columns of C by 8-128 tokens, each consumer warpgroup one m64 block of columns); the
// ring as deep as 200 KB holds; rows off 16 bytes loaded by hand; the split of K and its
// sums in the cluster; C stored from registers, one value at a time.
//
// Prediction: on the layer GEMMs of M <= 64, from stage 20's 70 % to 85 % or more of the
// DRAM bound where the weights are 16 MB or more; where they are a few MB (a launch of a
// few us), from a third of cuBLAS's speed to about cuBLAS's. Rows by hand: with several
// stages of copies in flight, near stage 14's kernel, which loads any shape itself.
//
// Measured by make results on the H100 80GB HBM3: 379.1 TFLOPS at N = 4096 (52.4 % of cuBLAS bf16),
// 305.9 at 8192 (41.2 %).
// Squares are not what it is for. At M <= 64 the prediction held: stage 20 at 66.7 % of
// cuBLAS, stage 25 at 90.1 % over the draw of seed 5; on seed 7's layer GEMMs of 16 MB of
// weights and more, a median 91.5 % of the DRAM bound by graphs (cuBLAS 92.5 %). Rows by
// hand missed it: 60.9 % against stage 14's 69.9 % on seed 5's 75 problems off the multiples
// (49.6 % one stage a thread), behind at a long K: the copies and shifts are instructions.
// The runs and fits: docs/notes/25_few_tokens.md, results/h100-80gb-hbm3/experiments/.
//
// Shapes: any, as they are; built for M <= 128, where wgmma's N holds the tokens. C in FP32,
// or in bf16 where K and N are multiples of 8. sm_90a.
#include "25_few_tokens.hpp"

#include <cuda.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common/cluster.cuh"
#include "common/gemm_problem.hpp"
#include "common/hopper_tiles.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/swizzled_rows.cuh"
#include "common/sync.cuh"
#include "common/tma.cuh"
#include "common/wgmma.cuh"

namespace sgemm {
// Named, not anonymous: a build for an older GPU compiles the kernel's body out, and would
// warn of every helper it leaves unused.
namespace few_tokens {

// A CTA's tile: Columns columns of C (one m64 block of wgmma's M for each consumer
// warpgroup) by Tokens rows of C (wgmma's N), over a range of K tiles of 64.
template <int Columns, int Tokens>
struct FewTokensConfig {
    static constexpr int kColumns = Columns, kTokens = Tokens, kBlockK = 64;
    static constexpr int kConsumers = Columns / 64, kThreads = 128 * (1 + kConsumers);
    // B's slabs (64 values of K by 64 columns, as stage 17 loads them) and A's box.
    static constexpr int kWeightBytes = kConsumers * kBSlabBytes, kTokenBytes = Tokens * kBlockK * 2;
    static constexpr int kStageBytes = kWeightBytes + kTokenBytes;
    // As deep as 200 KB holds, at most 16: a CTA's whole range of K is often in flight.
    static constexpr int kStages = std::min(16, 200 * 1024 / kStageBytes);
    struct alignas(1024) Stage {
        std::uint8_t weights[kWeightBytes];
        std::uint8_t tokens[kTokenBytes];  // 1024-byte multiples: the swizzle's alignment holds
    };
    // Stage `stage`'s tiles, as byte offsets (hopper_tiles.cuh says why).
    __device__ static std::uint8_t* weights(Stage* ring, int stage) {
        return reinterpret_cast<std::uint8_t*>(ring) + stage * kStageBytes;
    }
    __device__ static std::uint8_t* tokens(Stage* ring, int stage) { return weights(ring, stage) + kWeightBytes; }
    // Where the producer loads an operand itself (swizzled_rows.cuh), the ring holds
    // kHandStages stages of tiles and, after them, kStagedStages stages of rows as they lie
    // in memory (both operands' rows, 144 bytes each): the copies in flight.
    static constexpr int kHandStages = 2;
    static constexpr int kStagedBytes = (kConsumers * kBlockK + Tokens) * kStagedRowBytes;
    static constexpr int kStagedStages = std::min(8, (kStages - kHandStages) * kStageBytes / kStagedBytes);
    __device__ static std::uint8_t* staged_weights(Stage* ring, int slot) {
        return weights(ring, kHandStages) + slot * kStagedBytes;
    }
    __device__ static std::uint8_t* staged_tokens(Stage* ring, int slot) {
        return staged_weights(ring, slot) + kConsumers * kBlockK * kStagedRowBytes;
    }
    // The ring, then reused for the split's partial sums: [consumer][register][thread].
    static constexpr int kPartialValues = kConsumers * (Tokens / 2) * 128;
    struct SharedMemory {
        Stage ring[kStages];
        std::uint64_t full[kStages], empty[kStages];
    };
    static constexpr int kSharedBytes = sizeof(SharedMemory);
    static_assert(Columns % 64 == 0 && Tokens % 8 == 0 && Tokens <= 256, "m64 blocks; wgmma's N");
    static_assert(sizeof(Stage) == kStageBytes, "a stage is its tiles");
    static_assert(kPartialValues * 4 <= kStages * kStageBytes, "the partial sums fit in the ring");
    static_assert(kStagedStages >= 2, "rows loaded by hand: a stage's copies in flight while one is swizzled");
    static_assert(kSharedBytes <= 227 * 1024, "an H100 block has at most 227 KB of shared memory");
    static_assert(kSharedBytes > 227 * 1024 / 2, "one CTA an SM, whatever the tile (few_tokens_resident_ctas)");
};

// C[token][column] = alpha * sum + beta * C (C not read where beta = 0).
template <class COut>
__device__ __forceinline__ void store_value(const GemmProblem& problem, COut* c, int token, int column, float sum) {
    if (token >= problem.shape.m || column >= problem.shape.n) return;
    COut* const out = c + static_cast<std::size_t>(token) * problem.shape.n + column;
    float value = problem.alpha * sum;
    if constexpr (std::is_same_v<COut, float>) {
        if (problem.beta != 0.0f) value += problem.beta * *out;
        *out = value;
    } else {
        if (problem.beta != 0.0f) value += problem.beta * __bfloat162float(*out);
        *out = __float2bfloat16_rn(value);
    }
}

// Where register `index` of consumer thread `thread` lies in the CTA's tile: its column
// of C (wgmma's row) and token (wgmma's column).
struct SwappedPosition {
    int column, token;
};
__device__ __forceinline__ SwappedPosition swapped_position(int thread, int index) {
    const AccumulatorPosition at = wgmma_accumulator_position(thread, index / 4, index / 2 % 2);
    return SwappedPosition{at.row, at.column + index % 2};
}

// Which operands TMA loads: those whose rows start 16-byte aligned (K, N multiples of 8).
// The producer warpgroup loads the others itself (swizzled_rows.cuh).
struct OperandLoads {
    bool tokens_by_tma;
    bool weights_by_tma;
};

template <class Config, class COut>
__global__ void __launch_bounds__(Config::kThreads, 1)
    few_tokens_kernel(const __grid_constant__ CUtensorMap tokens_map, const __grid_constant__ CUtensorMap weights_map,
                      const __nv_bfloat16* a, const __nv_bfloat16* b, COut* c, GemmProblem problem, int splits,
                      OperandLoads loads) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr int kStages = Config::kStages, kTokens = Config::kTokens, kConsumers = Config::kConsumers;
    auto& shared = shared_memory_as<typename Config::SharedMemory>();
    typename Config::Stage* const ring = shared.ring;
    std::uint64_t* const full = shared.full;
    std::uint64_t* const empty = shared.empty;
    // A stage is full once the copy engine's bytes have landed and, where the producer
    // loads an operand itself, its threads are done: two arrivals then, and a shallower
    // ring of tiles, the rest of it holding the copies in flight.
    const bool by_hand = !loads.tokens_by_tma || !loads.weights_by_tma;
    const int stages = by_hand ? Config::kHandStages : kStages;
    if (threadIdx.x == 0) {
        for (int stage = 0; stage < stages; ++stage) {
            mbarrier_init(&full[stage], by_hand ? 2 : 1);
            mbarrier_init(&empty[stage], kConsumers);
        }
        fence_mbarrier_init();
    }
    __syncthreads();

    // A cluster's CTAs (consecutive blocks) share a tile; each takes an even range of its K.
    const int split = static_cast<int>(blockIdx.x) % splits, tile = static_cast<int>(blockIdx.x) / splits;
    const int column_tiles = ceil_div(problem.shape.n, Config::kColumns);
    const int first_column = tile % column_tiles * Config::kColumns, first_token = tile / column_tiles * kTokens;
    const int k_tiles = ceil_div(problem.shape.k, Config::kBlockK);
    const int k_begin = split * k_tiles / splits, k_end = (split + 1) * k_tiles / splits;
    const int warpgroup = threadIdx.x / 128;
    WarpgroupAccumulators<1, kTokens> acc;
    if (warpgroup == 0) {
        const GemmShape& shape = problem.shape;
        const unsigned tma_bytes = (loads.weights_by_tma ? Config::kWeightBytes : 0) +
                                   (loads.tokens_by_tma ? Config::kTokenBytes : 0);
        // Rows by hand, step 1 (swizzled_rows.cuh): K tile kt's copies into its staging slot,
        // a group of every thread's copies (an empty one past the range, so that the count
        // of groups in flight stays the same).
        const auto stage_k_tile = [&](int kt) {
            if (kt < k_end) {
                const int slot = (kt - k_begin) % Config::kStagedStages;
                if (!loads.weights_by_tma)
                    for (int slab = 0; slab < kConsumers; ++slab)
                        stage_rows<Config::kBlockK>(Config::staged_weights(ring, slot) + slab * 64 * kStagedRowBytes,
                                                    b, shape.k, shape.n, kt * Config::kBlockK,
                                                    first_column + 64 * slab, threadIdx.x);
                if (!loads.tokens_by_tma)
                    stage_rows<kTokens>(Config::staged_tokens(ring, slot), a, shape.m, shape.k, first_token,
                                        kt * Config::kBlockK, threadIdx.x);
            }
            cp_async_commit();
        };
        if (by_hand)
            for (int ahead = 0; ahead < Config::kStagedStages - 1; ++ahead) stage_k_tile(k_begin + ahead);
        if (by_hand || threadIdx.x == 0) {
            for (int kt = k_begin; kt < k_end; ++kt) {
                const int passed = kt - k_begin, stage = passed % stages;
                if (by_hand) stage_k_tile(kt + Config::kStagedStages - 1);
                mbarrier_wait(&empty[stage], (passed / stages % 2) ^ 1);  // parity 1 first: free
                if (threadIdx.x == 0) {
                    if (tma_bytes == 0) mbarrier_arrive(&full[stage]);
                    else mbarrier_arrive_expect_tx(&full[stage], tma_bytes);
                    if (loads.weights_by_tma)
                        for (int slab = 0; slab < kConsumers; ++slab)
                            tma_load_2d(Config::weights(ring, stage) + slab * kBSlabBytes, &weights_map,
                                        first_column + 64 * slab, kt * Config::kBlockK, &full[stage]);
                    if (loads.tokens_by_tma)
                        tma_load_2d(Config::tokens(ring, stage), &tokens_map, kt * Config::kBlockK, first_token,
                                    &full[stage]);
                }
                if (by_hand) {
                    // Step 2, once every thread's copies of K tile kt have landed; then the
                    // tiles are handed to wgmma (fence.proxy.async, a barrier, an arrival).
                    cp_async_wait<Config::kStagedStages - 1>();
                    named_barrier_sync(2, 128);
                    const int slot = passed % Config::kStagedStages;
                    if (!loads.weights_by_tma)
                        for (int slab = 0; slab < kConsumers; ++slab)
                            swizzle_staged_rows<Config::kBlockK>(
                                Config::weights(ring, stage) + slab * kBSlabBytes,
                                Config::staged_weights(ring, slot) + slab * 64 * kStagedRowBytes, shape.n,
                                kt * Config::kBlockK, first_column + 64 * slab, threadIdx.x);
                    if (!loads.tokens_by_tma)
                        swizzle_staged_rows<kTokens>(Config::tokens(ring, stage), Config::staged_tokens(ring, slot),
                                                     shape.k, first_token, kt * Config::kBlockK, threadIdx.x);
                    fence_shared_for_wgmma();
                    named_barrier_sync(2, 128);
                    if (threadIdx.x == 0) mbarrier_arrive(&full[stage]);
                }
            }
        }
        __syncwarp();
    } else {
        // Consumer `consumer` multiplies its slab of B (wgmma's A, MN-major) by A's box
        // (wgmma's B, K-major) into a 64-column by kTokens-token block of C^T.
        const int consumer = warpgroup - 1;
        const bool signals = threadIdx.x % 128 == 0;
        for (int kt = k_begin; kt < k_end; ++kt) {
            const int passed = kt - k_begin, stage = passed % stages;
            mbarrier_wait(&full[stage], passed / stages % 2);
            wgmma_fence();
#pragma unroll
            for (int step = 0; step < 4; ++step)
                wgmma_m64k16<kTokens, false, __nv_bfloat16, true>(
                    acc[0], b_step_descriptor(Config::weights(ring, stage) + consumer * kBSlabBytes, step),
                    a_step_descriptor(Config::tokens(ring, stage), 0, step), kt > k_begin || step > 0);
            wgmma_commit_group();
            wgmma_wait_group<1>();
            if (kt > k_begin && signals) mbarrier_arrive(&empty[(passed - 1) % stages]);
        }
        warpgroup_finish<1, kTokens>(acc);
    }
    const int thread = threadIdx.x % 128, consumer = warpgroup - 1;
    if (splits == 1) {
        if (warpgroup > 0)
#pragma unroll
            for (int index = 0; index < kTokens / 2; ++index) {
                const SwappedPosition at = swapped_position(thread, index);
                store_value(problem, c, first_token + at.token, first_column + 64 * consumer + at.column,
                            acc[0][index]);
            }
        return;
    }
    // The split's sums: every consumer's into the ring once no wgmma reads it any more,
    // then each CTA adds up its share of the tile from every CTA of the cluster, in rank
    // order, four values at a time.
    float* const partial = reinterpret_cast<float*>(ring);
    if (warpgroup > 0) {
        named_barrier_sync(1, 128 * kConsumers);
#pragma unroll
        for (int index = 0; index < kTokens / 2; ++index)
            partial[(consumer * (kTokens / 2) + index) * 128 + thread] = acc[0][index];
    }
    cluster_sync();
    if (warpgroup > 0) {
        constexpr int kQuads = Config::kPartialValues / 4, kQuadsPerConsumer = kTokens / 2 * 32;
        const int quad_end = (split + 1) * kQuads / splits;
        for (int quad = split * kQuads / splits + static_cast<int>(threadIdx.x) - 128; quad < quad_end;
             quad += 128 * kConsumers) {
            float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            for (int rank = 0; rank < splits; ++rank) {
                const float4 part = load_float4_from_cluster(cluster_shared_address(partial + 4 * quad, rank));
                sum.x += part.x;
                sum.y += part.y;
                sum.z += part.z;
                sum.w += part.w;
            }
            const int owner = quad / kQuadsPerConsumer, index = quad % kQuadsPerConsumer / 32;
            const int first_thread = quad % 32 * 4;
            const float sums[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const SwappedPosition at = swapped_position(first_thread + i, index);
                store_value(problem, c, first_token + at.token, first_column + 64 * owner + at.column, sums[i]);
            }
        }
    }
    cluster_sync();  // no CTA leaves while another may still read its shared memory
#endif
}

template <int Columns, int Tokens, class COut>
void launch_planned(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, COut* c, int splits,
                    cudaStream_t stream) {
    using Config = FewTokensConfig<Columns, Tokens>;
    const GemmShape& shape = problem.shape;
    // TMA takes the operands whose rows start 16-byte aligned; the kernel loads the others.
    const OperandLoads loads{shape.k % 8 == 0, shape.n % 8 == 0};
    const CUtensorMap tokens_map =
        loads.tokens_by_tma ? make_bf16_tensor_map(a, shape.m, shape.k, Tokens, Config::kBlockK) : CUtensorMap{};
    const CUtensorMap weights_map =
        loads.weights_by_tma ? make_bf16_tensor_map(b, shape.k, shape.n, Config::kBlockK, 64) : CUtensorMap{};
    const auto kernel = few_tokens_kernel<Config, COut>;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSharedBytes);
    const int tiles = ceil_div(shape.m, Tokens) * ceil_div(shape.n, Columns);
    launch_with_cluster(kernel, tiles * splits, Config::kThreads, splits, Config::kSharedBytes, stream, tokens_map,
                        weights_map, a, b, c, problem, splits, loads);
}

// Stage 25's kernel for a token tile, planned for the shape and launched.
template <int Tokens, class COut>
void launch_with_tokens(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, COut* c,
                        cudaStream_t stream) {
    const FewTokensPlan plan = few_tokens_plan(problem.shape, few_tokens_resident_ctas());
    if (plan.columns == 64) return launch_planned<64, Tokens>(problem, a, b, c, plan.splits, stream);
    launch_planned<128, Tokens>(problem, a, b, c, plan.splits, stream);
}

// Stage 25's kernel for the token tile the shape takes.
template <class COut>
void launch_few_tokens_into(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, COut* c,
                            cudaStream_t stream) {
    switch (few_tokens_tile_tokens(problem.shape.m)) {
        case 8:
            return launch_with_tokens<8>(problem, a, b, c, stream);
        case 16:
            return launch_with_tokens<16>(problem, a, b, c, stream);
        case 32:
            return launch_with_tokens<32>(problem, a, b, c, stream);
        case 64:
            return launch_with_tokens<64>(problem, a, b, c, stream);
        default:
            return launch_with_tokens<128>(problem, a, b, c, stream);
    }
}

}  // namespace few_tokens

// Every configuration holds one CTA an SM (FewTokensConfig), so one kernel's answer is
// every one's: asked once a process, of the occupancy calculator, for clusters of 1-8
// (a cluster must fit in one GPC).
const ResidentCtas& few_tokens_resident_ctas() {
    static const ResidentCtas resident = [] {
        using Config = few_tokens::FewTokensConfig<128, 8>;
        const auto kernel = few_tokens::few_tokens_kernel<Config, float>;
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSharedBytes);
        ResidentCtas ctas{};
        for (int splits = 1; splits <= kMaxFewTokensSplits; ++splits)
            ctas[splits] = splits * max_active_clusters(kernel, Config::kThreads, splits, Config::kSharedBytes);
        return ctas;
    }();
    return resident;
}

int few_tokens_tile_tokens(int m) {
    for (const int tokens : {8, 16, 32, 64})
        if (m <= tokens) return tokens;
    return 128;
}

// Of 128- and 64-column tiles and 1 to 8 splits (never more than K has tiles), the plan
// whose grid leaves the fewest SM-K-tiles idle: the work, tiles x K tiles, against its
// span, the waves x the SMs x the longest range of K; on a tie the larger tile, then the
// fewer splits. A split must fit its grid in one wave.
FewTokensPlan few_tokens_plan(const GemmShape& shape, const ResidentCtas& resident) {
    const int tokens = few_tokens_tile_tokens(shape.m);
    const int token_tiles = ceil_div(shape.m, tokens), k_tiles = ceil_div(shape.k, 64);
    FewTokensPlan best{tokens, 128, 1};
    double best_busy = -1.0;
    for (const int columns : {128, 64}) {
        const int sms = std::max(resident[1], 1);
        const int tiles = token_tiles * ceil_div(shape.n, columns);
        for (int splits = 1; splits <= std::min(kMaxFewTokensSplits, k_tiles); ++splits) {
            if (splits > 1 && tiles * splits > resident[splits]) continue;
            const double work = static_cast<double>(tiles) * k_tiles;
            const double span = static_cast<double>(ceil_div(tiles * splits, sms)) * sms * ceil_div(k_tiles, splits);
            if (work / span > best_busy + 1e-9) {
                best_busy = work / span;
                best = FewTokensPlan{tokens, columns, splits};
            }
        }
    }
    return best;
}

void launch_few_tokens(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream) {
    few_tokens::launch_few_tokens_into(problem, a, b, c, stream);
}

void launch_few_tokens_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                              __nv_bfloat16* c, cudaStream_t stream) {
    few_tokens::launch_few_tokens_into(problem, a, b, c, stream);
}

}  // namespace sgemm
