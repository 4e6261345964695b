// Stage 22 — FP32 at tensor-core speed, accurately: two fp16 parts, sums in registers,
// and a check that sends what the parts cannot hold to FP32.
//
// Builds on stage 19's kernel (19_persistent.cu) and stage 21's split (21_split_bf16.cu).
//
// The idea: stage 21 lost to SGEMM in accuracy not through its split but through the
// tensor cores' adds, which truncate against the running sum. So the sums leave them:
// every two K tiles the wgmmas start a fresh partial tile, which the consumer adds to its
// FP32 sums in registers, rounding to nearest; the truncation acts on a partial of 128
// products, not on the whole sum. The kernel below is stage 19's with that K loop and a
// scaling epilogue. The price: 128x128 tiles (partial and sums take 128 registers a
// thread) and a drain of each consumer's wgmmas every two K tiles, which the other
// consumer's wgmmas cover.
//
// Fewer products: fp16 has 11 significant bits to bf16's 8, so two parts carry 22 bits,
// x = hi + 2^-11 lo + r with |r| <= 2^-22 |x| (lo scaled up by 2^11 so that it stays a
// normal fp16 as long as hi does; common/fp32_split.cuh). Three products are kept, as one
// fp16 GEMM with K three times as long: A' = [lo | hi], B' = [hi; lo], and a third
// segment hi.hi for which the producer re-reads both hi parts; the partials of the first
// two segments are weighted by 2^-11. The dropped terms (lo.lo, the remainders) are
// each at most 2^-22 of |A_ik B_kj|, random in sign: they do not grow with the sum.
//
// Range, and the check: fp16 spans 2^-24 .. 65504. A pre-pass (22_split_fp16_operands.cuh)
// scales each row of A and column of B by the power of two that brings its largest
// magnitude into [2^14, 2^15), undone on C. Then every value down to 2^-28 of its row's
// largest keeps its 22 bits. The pre-pass checks exactly that for each row and column as
// it scales it (its smallest nonzero magnitude against its largest, and whether it holds
// NaN or Inf). Where it fails, the row (column) is zeros in A' (B') and listed, and the
// FP32 fallback (22_fp32_fallback.cuh, which stages 23 and 24 share) computes those rows
// and columns of C after the GEMM with stage 10's tiles, gathered through the lists; where
// every row or every column fails, the GEMM does not run and the whole problem is stage
// 10's kernel's. So every product the tensor cores take is held to 2^-21 of itself, the rest is
// SGEMM's own arithmetic, and NaN and Inf come out where IEEE puts them.
//
// What the split cannot match: sums that cancel. A product keeps up to 3 2^-22 of itself
// in error where SGEMM's products are exact, and where they cancel, SGEMM's running sum
// and roundings stay small: on the cancelling kind the split's errors are 2.5-2.8x
// SGEMM's (docs/notes/22_split_fp16.md has the bound); on every other kind at most SGEMM's.
//
// Prediction: a third of stage 21's tensor work, at 85 % of its rate on the smaller
// tiles, plus a heavier pre-pass: 3.5x SGEMM at 4096; normwise error about 2e-7. The
// check adds a pass over N values and fallback launches that find no work: under 1 %.
//
// Measured by make results on the H100 80GB HBM3: 150.6 TFLOPS at N = 4096 (2.94x cuBLAS SGEMM),
// 171.2 at 8192 (3.45x).
// Slower than predicted: ncu put the GEMM at 62 % of the tensor
// cores' peak (stage 21's: 96 %; the 128x128 tiles load 1.5x its bytes a product) and the
// pre-pass at 16 % of the time. Normwise error 2.2e-7 at 4096 against SGEMM's 1.15e-6.
// The fallback's launches that find nothing cost 0.5 % at 4096. All of it falling back
// (graded data): 0.87x SGEMM at 2048, 0.91x at 4096, 0.93x at 8192, with SGEMM's own error.
//
// Where the split cannot pay: the pre-pass reads and writes (M + N) K values for M N K
// products. Below 192 products a value (M N / (M + N): under about 190 tokens, or a C 64
// wide) the suite (make shapes) found stage 10's kernel ahead on every shape, with its K in
// short parts where it splits K (cuBLAS splits K there too, in longer parts: parts of 256
// gave 0.6-0.8x its error at 128 x 6144 x 4096 and 4096 x 64 x 4096, for 3-4 % of stage
// 10's speed). The fp32-tc track (dispatch/fp32_tc.cpp) runs each so.
//
// Shapes: any M and K; N a multiple of 8 (TMA writes C's rows), other N on zero-padded
// copies. Needs sm_90a.
#include "22_split_fp16.hpp"

#include <cuda.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "19_persistent_c_stores.cuh"
#include "22_fp32_fallback.cuh"
#include "22_split_fp16_operands.cuh"
#include "common/cluster.cuh"
#include "common/fp32_split.cuh"
#include "common/gemm_problem.hpp"
#include "common/hopper_tiles.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/operand_scaling.cuh"
#include "common/tma.cuh"
#include "common/wgmma.cuh"
#include "common/workspace.cuh"

namespace sgemm {
namespace {

// A (M x K) -> A' = [lo | hi] (M x 2 padded_k), one warp a row: the row's range first
// (record_row), then the row scaled and split, eight values a lane; nothing where every
// column of B is flagged (the fallback takes it all, whatever A holds).
__global__ void split_a_kernel(const float* a, int* row_exponents, __half* split, int m, int k, int n, int padded_k,
                               Flagged flagged) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= m || flagged.counts[2] == n) return;
    const float* const values = a + static_cast<std::size_t>(row) * k;
    const MagnitudeRange range = warp_row_range(values, k, lane);
    int exponent = 0;
    if (lane == 0) exponent = record_row(range, row, m, row_exponents, flagged);
    exponent = __shfl_sync(0xffffffffu, exponent, 0);
    split_row(values, k, padded_k, exponent, split + static_cast<std::size_t>(row) * 2 * padded_k, 8 * lane, 8 * 32);
}

// Each column of B's scaling exponent from its range, or kLeftToFallback (and the column
// listed) where two fp16 parts cannot hold it or it holds NaN or Inf; one thread a column.
__global__ void column_exponents_kernel(ColumnRanges ranges, int* column_exponents, int n, Flagged flagged) {
    const int column = blockIdx.x * blockDim.x + threadIdx.x;
    if (column >= n) return;
    const MagnitudeRange range = ranges.of(column);
    const bool splits = !range.non_finite && fits_two_f16_parts(range.largest, range.smallest);
    column_exponents[column] = splits ? scaling_exponent(range.largest) : kLeftToFallback;
    if (!splits) flagged.flag_column(column);
}

// B (K x N) -> B' = [hi; lo] (2 padded_k x N), eight values of a row a thread (N is a
// multiple of 8), each column scaled by its exponent; nothing where every row of A or
// every column of B is flagged (the GEMM will not run: the fallback takes it all).
__global__ void split_b_kernel(const float* b, const int* column_exponents, __half* split, int m, int k, int n,
                               int padded_k, Flagged flagged) {
    if (flagged.whole(m, n)) return;
    const std::size_t count = static_cast<std::size_t>(padded_k) * n / 8;
    const std::size_t segment = static_cast<std::size_t>(padded_k) * n;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        const std::size_t first = 8 * i;  // of B and of each segment of B'
        const int row = static_cast<int>(first / n), column = static_cast<int>(first % n);
        const int4 low_exponents = *reinterpret_cast<const int4*>(column_exponents + column);
        const int4 high_exponents = *reinterpret_cast<const int4*>(column_exponents + column + 4);
        const int exponents[8] = {low_exponents.x,  low_exponents.y,  low_exponents.z,  low_exponents.w,
                                  high_exponents.x, high_exponents.y, high_exponents.z, high_exponents.w};
        float eight[8] = {};
        if (row < k) {
            const float4 low = load_float4(b + first), high = load_float4(b + first + 4);
            eight[0] = low.x, eight[1] = low.y, eight[2] = low.z, eight[3] = low.w;
            eight[4] = high.x, eight[5] = high.y, eight[6] = high.z, eight[7] = high.w;
        }
        const EightSplitValues parts = split_eight(eight, exponents);
        store_eight(split + first, parts.hi);
        store_eight(split + segment + first, parts.lo);
    }
}

// Stage 19's kernel with 128x128 tiles (the partial tile and the sums take 128 registers a
// consumer thread; 128x256 would take 256) and five K tiles in the ring; the products of
// kPromotionInterval K tiles go into each partial.
constexpr int kBlockM = 128, kBlockN = 128, kStages = 5, kClusterM = 2, kCBuffers = 2, kPromotionInterval = 2;
using Tiles = HopperStageTiles<kBlockM, kBlockN>;
constexpr int kConsumers = 2, kThreads = 128 * (1 + kConsumers);
constexpr int kRowsPerConsumer = kBlockM / kConsumers, kMBlocks = kRowsPerConsumer / 64;
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;  // after setmaxnreg
static_assert(128 * kProducerRegisters + 128 * kConsumers * kConsumerRegisters <= 65536, "the SM's registers");
// Shared memory as in stage 19: the ring, each consumer's C chunk buffers, the ring's full
// and empty barriers, and room to align the ring to the swizzle's 1024 bytes. Carved by
// hand from a start found at run time, not declared as a struct as the other Hopper
// kernels' is: with the struct (addresses the compiler knows) this kernel ran 16384^3 at
// 59-77 ms where this way it runs at 49-59 ms, on the same loop (docs/notes/22_split_fp16.md).
constexpr int kCBufferBytes = kCBuffers * kCChunkBytes, kSwizzleBytes = 1024;
constexpr int kSharedBytes = kStages * Tiles::kBytes + kConsumers * kCBufferBytes + 2 * kStages * 8 + kSwizzleBytes;
static_assert(Tiles::kBSlabs % kClusterM == 0, "the cluster's CTAs load B's slabs in equal shares");
static_assert(kMBlocks == 1, "TMA stores: one m64 block per consumer");
static_assert(kSharedBytes <= 227 * 1024, "an H100 block has at most 227 KB of shared memory");
// The lo segments end where a partial ends, so that no partial mixes lo and hi products.
static_assert(2 % kPromotionInterval == 0, "a partial holds the products of one segment");

// C = alpha (A' B', over the three segments of segment_k_tiles K tiles each) + beta C, the
// scaling undone. A' is [lo | hi] and B' is [hi; lo]: the third segment, hi.hi, re-reads
// A's hi parts segment_k_tiles back and B's 2 segment_k_tiles back.
__global__ void __launch_bounds__(kThreads, 1)
    split_fp16_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                      const __grid_constant__ CUtensorMap c_map, float* c, GemmProblem problem, int segment_k_tiles,
                      OperandScaling scaling, Flagged flagged) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    if (flagged.whole(problem.shape.m, problem.shape.n)) return;  // the fallback takes it all, from C0
    constexpr int kGroupRows = 8;                     // raster groups of stack rows, as in stage 19
    constexpr float kLoWeight = 1.0f / kF16LoScale;  // the lo segments' partials
    extern __shared__ std::uint8_t shared_bytes[];
    std::uint8_t* const ring = reinterpret_cast<std::uint8_t*>(
        (reinterpret_cast<std::uintptr_t>(shared_bytes) + kSwizzleBytes - 1) & ~std::uintptr_t(kSwizzleBytes - 1));
    const auto a_tile = [&](int stage) { return ring + stage * Tiles::kBytes; };
    const auto b_tile = [&](int stage) { return a_tile(stage) + Tiles::kABytes; };
    std::uint8_t* const c_buffers = ring + kStages * Tiles::kBytes;
    std::uint64_t* const full = reinterpret_cast<std::uint64_t*>(c_buffers + kConsumers * kCBufferBytes);
    std::uint64_t* const empty = full + kStages;

    init_ring_barriers(full, empty, kStages, kConsumers * kClusterM);
    cluster_sync();

    const unsigned rank = cluster_cta_rank();
    const int cluster = blockIdx.x / kClusterM, clusters = gridDim.x / kClusterM;
    const int stacks = ceil_div(problem.shape.m, kClusterM * kBlockM) * ceil_div(problem.shape.n, kBlockN);
    const auto tile_of = [&](int stack) {
        TileOrigin origin = rasterized_tile_origin<kClusterM * kBlockM, kBlockN>(stack, problem.shape.m,
                                                                                problem.shape.n, kGroupRows);
        origin.row += rank * kBlockM;
        return origin;
    };
    const int k_tiles = 3 * segment_k_tiles, lo_k_tiles = 2 * segment_k_tiles;
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        warpgroup_release_registers<kProducerRegisters>();
        if (threadIdx.x == 0) {
            int passed = 0;
            for (int stack = cluster; stack < stacks; stack += clusters) {
                const TileOrigin tile = tile_of(stack);
                for (int kt = 0; kt < k_tiles; ++kt, ++passed) {
                    const int stage = passed % kStages;
                    const int a_kt = kt < lo_k_tiles ? kt : kt - segment_k_tiles;
                    const int b_kt = kt < lo_k_tiles ? kt : kt - 2 * segment_k_tiles;
                    mbarrier_wait(&empty[stage], (passed / kStages % 2) ^ 1);  // parity 1 first: free
                    mbarrier_arrive_expect_tx(&full[stage], Tiles::kBytes);
                    tma_load_2d(a_tile(stage), &a_map, a_kt * Tiles::kBlockK, tile.row, &full[stage]);
                    for (int slab = rank; slab < Tiles::kBSlabs; slab += kClusterM)
                        tma_load_2d_multicast(b_tile(stage) + slab * Tiles::kBSlabBytes, &b_map,
                                              tile.col + slab * Tiles::kBSlabColumns, b_kt * Tiles::kBlockK,
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
        WarpgroupAccumulators<kMBlocks, kBlockN> sums, partial;
        // sums += weight * partial (one fused multiply-add, rounded to nearest), once the
        // wgmmas that wrote partial are done; weight is a power of two, so only the add rounds.
        const auto add_partial = [&](float weight) {
#pragma unroll
            for (int i = 0; i < kMBlocks; ++i) {
                wgmma_fence_accumulators(partial[i]);
#pragma unroll
                for (int j = 0; j < kBlockN / 2; ++j) sums[i][j] = fmaf(weight, partial[i][j], sums[i][j]);
            }
        };
        int passed = 0, c_chunks = 0;
        for (int stack = cluster; stack < stacks; stack += clusters) {
            const TileOrigin tile = tile_of(stack);
            zero_accumulators<kMBlocks, kBlockN>(sums);
            // Each kPromotionInterval K tiles' products go into a fresh partial, which is added
            // to the sums once the tensor cores are done with it. Adding it any sooner (while
            // the next K tile's wgmmas run) would have ptxas serialize every wgmma: it cannot
            // tell which accumulators are in flight. The other consumer's wgmmas cover the wait.
            for (int kt = 0; kt < k_tiles; ++kt, ++passed) {
                const int stage = passed % kStages, in_partial = kt % kPromotionInterval;
                mbarrier_wait(&full[stage], passed / kStages % 2);
                warpgroup_multiply_k_tile<kMBlocks, kBlockN, __half>(partial, a_tile(stage),
                                                                     b_tile(stage), first_row,
                                                                     in_partial == 0);
                const bool partial_ends = in_partial == kPromotionInterval - 1 || kt + 1 == k_tiles;
                if (partial_ends) wgmma_wait_group<0>();
                else wgmma_wait_group<1>();
                if (in_partial > 0) release((passed - 1) % kStages);
                if (partial_ends) {
                    add_partial(kt < lo_k_tiles ? kLoWeight : 1.0f);
                    if (kt + 1 < k_tiles) release(stage);  // the tile's last is released below
                }
            }
            release((passed - 1) % kStages);
            unscale_accumulators<kMBlocks, kBlockN>(sums, scaling, problem.shape, tile.row + first_row, tile.col);
#pragma unroll
            for (int chunk = 0; chunk < kBlockN / kCChunkColumns; ++chunk)
                store_c_chunk_through_tma<kCBuffers>(sums[0] + chunk * kCChunkValues, problem, c, &c_map,
                                                     c_buffers + (warpgroup - 1) * kCBufferBytes, c_chunks++,
                                                     tile.row + first_row, tile.col + chunk * kCChunkColumns,
                                                     warpgroup);
        }
        if (signals) tma_store_wait<0>();
    }
    __syncwarp();
    cluster_sync();
#endif
}

// K is padded per segment to whole K tiles, so that no partial mixes lo and hi products.
constexpr int kKAlignment = Tiles::kBlockK;

}  // namespace

void launch_split_fp16(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream,
                       int fallback_tile) {
    const auto [m, n, k] = problem.shape;
    const int padded_k = ceil_div(k, kKAlignment) * kKAlignment, k_tiles = padded_k / kKAlignment;
    // A', B', the exponents and lists, then what starts at zero: B's column ranges, the counts.
    static GrowingWorkspace workspace("stage 22's split operands");
    WorkspaceLayout layout;
    const auto a_split_array = layout.add<__half>(static_cast<std::size_t>(m) * 2 * padded_k);
    const auto b_split_array = layout.add<__half>(static_cast<std::size_t>(2) * padded_k * n);
    const auto column_exponents_array = layout.add<int>(n);  // split_b reads eight at a time
    const auto row_exponents_array = layout.add<int>(m);
    const auto row_order = layout.add<int>(m);
    const auto flagged_columns = layout.add<int>(n);
    const auto range_words = layout.add<unsigned>(ColumnRanges::kWordsPerColumn * static_cast<std::size_t>(n));
    const auto counts = layout.add<int>(3);
    void* const base = workspace.at_least(layout.bytes());
    __half* const a_split = a_split_array.in(base);
    __half* const b_split = b_split_array.in(base);
    int* const column_exponents = column_exponents_array.in(base);
    int* const row_exponents = row_exponents_array.in(base);
    const ColumnRanges ranges{range_words.in(base), n};
    const Flagged flagged{row_order.in(base), flagged_columns.in(base), counts.in(base)};

    constexpr int kPrepassThreads = 256;
    const auto blocks = [](std::size_t count) {  // grid-stride loops: at most 8192 blocks
        return static_cast<int>(std::min<std::size_t>((count + kPrepassThreads - 1) / kPrepassThreads, 8192));
    };
    cudaMemsetAsync(ranges.words, 0, WorkspaceLayout::span(range_words, counts), stream);
    launch_column_ranges(b, k, n, ranges, stream);
    column_exponents_kernel<<<ceil_div(n, kPrepassThreads), kPrepassThreads, 0, stream>>>(ranges, column_exponents, n,
                                                                                       flagged);
    split_a_kernel<<<ceil_div(m, kPrepassThreads / 32), kPrepassThreads, 0, stream>>>(a, row_exponents, a_split, m, k,
                                                                                    n, padded_k, flagged);
    split_b_kernel<<<blocks(static_cast<std::size_t>(padded_k) * n / 8), kPrepassThreads, 0, stream>>>(
        b, column_exponents, b_split, m, k, n, padded_k, flagged);

    // The GEMM over K' = 3 padded_k: A' and B' hold 2 padded_k values of K each.
    const GemmProblem split_problem{GemmShape{m, n, 3 * padded_k}, problem.alpha, problem.beta};
    const CUtensorMap a_map = make_f16_tensor_map(a_split, m, 2 * padded_k, kBlockM, Tiles::kBlockK);
    const CUtensorMap b_map = make_f16_tensor_map(b_split, 2 * padded_k, n, Tiles::kBlockK, Tiles::kBSlabColumns);
    const CUtensorMap c_map = make_fp32_tensor_map(c, m, n, kCChunkRows, kCChunkColumns);
    cudaFuncSetAttribute(split_fp16_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes);
    const int stacks = ceil_div(m, kClusterM * kBlockM) * ceil_div(n, kBlockN);
    const int resident = max_active_clusters(split_fp16_kernel, kThreads, kClusterM, kSharedBytes);
    const int clusters = resident > 0 ? std::min(stacks, resident) : stacks;
    launch_with_cluster(split_fp16_kernel, clusters * kClusterM, kThreads, kClusterM, kSharedBytes, stream, a_map,
                        b_map, c_map, c, split_problem, k_tiles, OperandScaling{row_exponents, column_exponents},
                        flagged);
    launch_fp32_fallback(problem, a, b, c, flagged, stream, fallback_tile);
}

void launch_split_fp16(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream) {
    launch_split_fp16(problem, a, b, c, stream, kTunedTileId);
}

void launch_fp32_fallback(const GemmProblem& problem, const float* a, const float* b, float* c, const Flagged& flagged,
                          cudaStream_t stream, int tile) {
    with_stage10_tile(tile, [&](auto config) {
        launch_fp32_fallback_in<decltype(config)>(problem, a, b, c, flagged, stream);
    });
}

}  // namespace sgemm
