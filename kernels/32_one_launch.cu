// Stage 32 — FP32 on tensor cores in one launch, for small problems: both operands split
// in registers, as tf32.
//
// Builds on stage 22 (the split, sums in registers, the check) and stage 25 (K split over a
// cluster, the sums added through distributed shared memory); the loop is stage 14's
// cp.async ring, on FP32 tiles and mma.sync m16n8k8 with tf32 operands.
//
// The idea: stages 22-24 pay 14-24 us before their first product (a pre-pass, a last kernel,
// the fallback's launch), so on problems that take SGEMM tens of us the fp32-tc track runs
// stage 10. Their fp16 parts need a scale a row and column, fp16's exponent being short;
// tf32 has FP32's. Split into tf32 (common/tf32_split.cuh), a value needs no scale: x = big +
// small + r, |r| <= 2^-22 |x|, for |x| in 2^-103 .. 2^114. So each warp splits its fragments
// as it reads them from shared memory and issues small.big and big.small, which go on
// adding up in the tensor cores over all of K (2^-11 of the sum, their truncation does not
// show), and big.big, from zero every 16 products, added to FP32 sums in registers.
//
// The check, inline: each thread reads back the values it copied into the K tile; where one
// lies outside 2^-103 .. 2^114 (or is NaN or Inf, or K < 32, where SGEMM's own error is below
// the split's), the barrier that opens the tile (__syncthreads_or) sends the whole K tile to
// the CUDA cores: FFMA from the same shared memory, in K's order. No list, no second launch.
//
// Few CTAs: K is split over the CTAs of a cluster (up to 8) until there are three CTAs an
// SM; each leaves its sums in its shared memory and adds up a share of the tile from all of
// them in rank order (ld.shared::cluster): one launch, no workspace, the same bits each run.
// Which k and which column a lane takes are free so long as A, B and C agree: a lane reads
// its eight values of A's row in two LDS.128, four of B's in one (B's chunks swizzled), and
// writes C four columns at a time.
//
// Prediction: mma.sync's tf32 rate is half its bf16 rate (320 TFLOPS on the H100), so three
// products cap it near 100 TFLOPS, 2x SGEMM; at six instructions a value split, issue would
// bound it near there. On problems of 5-30 us, the one launch should put it at or above SGEMM
// where stage 10 ran at 0.65-0.95x (seed 11's draw).
//
// Measured by make results on the H100 80GB HBM3: no result at N = 4096 or 8192 yet.
// On an H200 (no H100 lent; docs/notes/32_one_launch.md), far short: over seed 11's draw
// 0.75x SGEMM in geomean by graphs (0.88x at M <= 256, 0.61-0.62x above), above the fp32-tc
// track on 5 of 60 problems, M <= 34 all (6 x 1536 x 1536: 1.44x against 1.21x). ncu: issue
// slots 41-53 % busy with about 10 warps an SM, 890 instructions a warp's K tile for its
// 96 mma.sync: the split, the check, the sums and the waits bound it. Its error is
// 0.22-0.91x SGEMM's on uniform, wide and positive data, 2.6x on cancelling sums; 1.5-1.6x
// on positive data at few rows, where cuBLAS sums K in shorter parts.
//
// Shapes: any M, N, K. Rows of A and B 16-byte aligned (K, N multiples of 4) are copied 16
// bytes at a time, others a value at a time. Tiles of 64 x 64 (four warps of 32 x 32), or
// 16 x 128 for 16 rows or fewer. Needs sm_90 (clusters).
#include "32_one_launch.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "common/cluster.cuh"
#include "common/cluster_sums.cuh"
#include "common/cp_async.cuh"
#include "common/epilogue.cuh"
#include "common/launch.cuh"
#include "common/mma.cuh"
#include "common/tf32_split.cuh"

namespace sgemm {
namespace {

constexpr int kBlockK = 32;
constexpr int kStages = 4;
constexpr int kThreads = 128;
constexpr int kMostKSplits = 8;  // the portable cluster size
constexpr int kCtasPerSm = 3;  // the plan splits K until there are as many; __launch_bounds__ holds registers to it

// The magnitudes the split holds (common/tf32_split.cuh): 2^-103 .. 2^114, and zero. As
// twice a value's bits (the sign shifted out): zero less 2 wraps to the top, so that the
// least of (bits - 2) finds the tiny values and the largest of the bits NaN, Inf and the huge.
constexpr unsigned kSmallestSplitBits = (127u - 103u) << 24, kLargestSplitBits = (127u + 114u) << 24;

// A tile of C: BlockM x BlockN, warps of WarpM x 32 (m16n8 tiles of mma.sync, four across).
template <int BlockM, int BlockN, int WarpM>
struct OneLaunchTile {
    static constexpr int kBlockM = BlockM, kBlockN = BlockN, kWarpM = WarpM, kWarpN = 32;
    static constexpr int kWarpsN = BlockN / kWarpN;
    static constexpr int kMTiles = WarpM / 16, kNTiles = 4;
    // A's rows 36 values long: the LDS.128 of a quarter warp (rows l/4, chunks 2 (l%4)) fall
    // on 4 (l/4) + 8 (l%4), eight groups of four banks. B's rows are swizzled instead (b_offset).
    static constexpr int kAStride = kBlockK + 4, kBStride = BlockN;
    static constexpr int kAValues = BlockM * kAStride, kBValues = kBlockK * kBStride;
    static constexpr int kStageValues = kAValues + kBValues;
    static constexpr int kSumsStride = BlockN + 4;  // the tile's sums for the cluster, rows 16-byte aligned
    static constexpr std::size_t kSharedBytes =
        sizeof(float) * std::max(kStages * kStageValues, BlockM * kSumsStride);

    static_assert(32 * (BlockM / WarpM) * kWarpsN == kThreads, "four warps tile the block");
    static_assert(BlockM * kBlockK / 4 % kThreads == 0 && kBlockK * BlockN / 4 % kThreads == 0, "copies split evenly");
};

using Rows64Tile = OneLaunchTile<64, 64, 32>;
using Rows16Tile = OneLaunchTile<16, 128, 16>;

// Where B's value (k, col) of a K tile lies: its 16-byte chunk XOR-ed with 2 ((k / 8) % 4),
// so that the LDS.128 of a quarter warp (k = 8 (l%4) + c, chunks l/4 of a warp's eight) hit
// eight groups of four banks.
template <class T>
__device__ __forceinline__ int b_offset(int k, int col) {
    return k * T::kBStride + ((col / 4) ^ (2 * ((k / 8) % 4))) * 4 + col % 4;
}

// C = alpha A B + beta C for tile blockIdx.x / k_splits of C, over the share of K of CTA
// blockIdx.x % k_splits of its cluster (its rank: clusters are k_splits consecutive CTAs).
// kAAligned (kBAligned): K (N) a multiple of 4, so that A's (B's) rows start 16-byte aligned.
//
// Which K a lane takes is free, so long as A and B agree: at step s (of four a K tile),
// where mma.sync's lane l holds k = l%4 and l%4 + 4, it takes k = 8 (l%4) + 2s and + 1, so
// that its eight values of a row of A are side by side (two LDS.128 for the K tile). Which
// column is free too, so long as C follows: lane l's column of n8 tile ni is 4 (l/4) + ni,
// so that its four values of a row of B are side by side (one LDS.128), and its outputs
// (mma.sync's columns 2 (l%4) and + 1 of the four n8 tiles) are columns 8 (l%4) + 0..7.
template <class Tile, bool kAAligned, bool kBAligned>
__global__ void __launch_bounds__(kThreads, kCtasPerSm)
    one_launch_kernel(GemmProblem problem, const float* a, const float* b, float* c, int k_splits) {
    using T = Tile;
    extern __shared__ float4 shared_storage[];  // float4: 16-byte alignment for cp.async
    float* const shared = reinterpret_cast<float*>(shared_storage);
    const int m = problem.shape.m, n = problem.shape.n, k = problem.shape.k;
    const int tile = blockIdx.x / k_splits, rank = blockIdx.x % k_splits;
    const int tiles_n = ceil_div(n, T::kBlockN);
    const int row0 = tile / tiles_n * T::kBlockM, col0 = tile % tiles_n * T::kBlockN;
    const int k_tiles = ceil_div(k, kBlockK);
    const int first_tile = k_tiles * rank / k_splits, end_tile = k_tiles * (rank + 1) / k_splits;

    // K tile `k_tile` into stage `stage` of the ring; what lies past M, N or K is zeros.
    // in_range(stage) reads back what the thread copied and says whether the split holds it.
    const auto copy_k_tile = [&](int k_tile, int stage) {
        float* const a_tile = shared + stage * T::kStageValues;
        float* const b_tile = a_tile + T::kAValues;
        const int k0 = k_tile * kBlockK;
        if constexpr (kAAligned) {
#pragma unroll
            for (int pass = 0; pass < T::kBlockM * kBlockK / 4 / kThreads; ++pass) {
                const int chunk = threadIdx.x + pass * kThreads, row = chunk / (kBlockK / 4);
                const int column = chunk % (kBlockK / 4) * 4;
                const bool valid = row0 + row < m && k0 + column < k;
                const float* from = valid ? a + static_cast<std::size_t>(row0 + row) * k + k0 + column : a;
                cp_async_16_or_zero(shared_address(a_tile + row * T::kAStride + column), from, valid);
            }
        } else {
#pragma unroll 4
            for (int value = threadIdx.x; value < T::kBlockM * kBlockK; value += kThreads) {
                const int row = value / kBlockK, column = value % kBlockK;
                const bool valid = row0 + row < m && k0 + column < k;
                cp_async_4_or_zero(a_tile + row * T::kAStride + column,
                                   valid ? a + static_cast<std::size_t>(row0 + row) * k + k0 + column : a, valid);
            }
        }
        if constexpr (kBAligned) {
#pragma unroll
            for (int pass = 0; pass < kBlockK * T::kBlockN / 4 / kThreads; ++pass) {
                const int chunk = threadIdx.x + pass * kThreads, row = chunk / (T::kBlockN / 4);
                const int column = chunk % (T::kBlockN / 4) * 4;
                const bool valid = k0 + row < k && col0 + column < n;
                const float* from = valid ? b + static_cast<std::size_t>(k0 + row) * n + col0 + column : b;
                cp_async_16_or_zero(shared_address(b_tile + b_offset<T>(row, column)), from, valid);
            }
        } else {
#pragma unroll 4
            for (int value = threadIdx.x; value < kBlockK * T::kBlockN; value += kThreads) {
                const int row = value / T::kBlockN, column = value % T::kBlockN;
                const bool valid = k0 + row < k && col0 + column < n;
                cp_async_4_or_zero(b_tile + b_offset<T>(row, column),
                                   valid ? b + static_cast<std::size_t>(k0 + row) * n + col0 + column : b, valid);
            }
        }
    };

    // Whether every value this thread copied into stage `stage` lies where the split holds it.
    const auto in_range = [&](int stage) {
        const float* const a_tile = shared + stage * T::kStageValues;
        const float* const b_tile = a_tile + T::kAValues;
        unsigned lowest = ~0u, highest = 0u;
        const auto include = [&](float x) {
            const unsigned twice = __float_as_uint(x) << 1;
            lowest = min(lowest, twice - 2u);
            highest = max(highest, twice);
        };
        const auto include4 = [&](const float* at) {
            const float4 v = *reinterpret_cast<const float4*>(at);
            include(v.x), include(v.y), include(v.z), include(v.w);
        };
        if constexpr (kAAligned) {
#pragma unroll
            for (int pass = 0; pass < T::kBlockM * kBlockK / 4 / kThreads; ++pass) {
                const int chunk = threadIdx.x + pass * kThreads;
                include4(a_tile + chunk / (kBlockK / 4) * T::kAStride + chunk % (kBlockK / 4) * 4);
            }
        } else {
#pragma unroll 4
            for (int value = threadIdx.x; value < T::kBlockM * kBlockK; value += kThreads)
                include(a_tile[value / kBlockK * T::kAStride + value % kBlockK]);
        }
        if constexpr (kBAligned) {
#pragma unroll
            for (int pass = 0; pass < kBlockK * T::kBlockN / 4 / kThreads; ++pass) {
                const int chunk = threadIdx.x + pass * kThreads;
                include4(b_tile + b_offset<T>(chunk / (T::kBlockN / 4), chunk % (T::kBlockN / 4) * 4));
            }
        } else {
#pragma unroll 4
            for (int value = threadIdx.x; value < kBlockK * T::kBlockN; value += kThreads)
                include(b_tile[b_offset<T>(value / T::kBlockN, value % T::kBlockN)]);
        }
        return lowest >= kSmallestSplitBits - 2u && highest < kLargestSplitBits;
    };

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_row = warp / T::kWarpsN * T::kWarpM, warp_col = warp % T::kWarpsN * T::kWarpN;
    const int g = lane / 4, t = lane % 4;  // mma.sync's fragment coordinates (common/mma.cuh)
    // sums[mi][ni][2h + j]: row warp_row + 16 mi + g + 8 h, column warp_col + 8 t + 4 j + ni.
    float sums[T::kMTiles][T::kNTiles][4] = {};

    // A K tile on the CUDA cores, straight into the sums in K's order: the check's way.
    const auto multiply_in_fp32 = [&](const float* a_tile, const float* b_tile) {
#pragma unroll 2
        for (int kk = 0; kk < kBlockK; ++kk) {
            float a_values[T::kMTiles][2];
#pragma unroll
            for (int mi = 0; mi < T::kMTiles; ++mi)
#pragma unroll
                for (int h = 0; h < 2; ++h) a_values[mi][h] = a_tile[(warp_row + 16 * mi + g + 8 * h) * T::kAStride + kk];
            float4 b_values[2];
#pragma unroll
            for (int j = 0; j < 2; ++j)
                b_values[j] = *reinterpret_cast<const float4*>(b_tile + b_offset<T>(kk, warp_col + 8 * t + 4 * j));
#pragma unroll
            for (int mi = 0; mi < T::kMTiles; ++mi)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const float a_value = a_values[mi][e / 2];
                    const float4 b4 = b_values[e % 2];
                    sums[mi][0][e] = fmaf(a_value, b4.x, sums[mi][0][e]);
                    sums[mi][1][e] = fmaf(a_value, b4.y, sums[mi][1][e]);
                    sums[mi][2][e] = fmaf(a_value, b4.z, sums[mi][2][e]);
                    sums[mi][3][e] = fmaf(a_value, b4.w, sums[mi][3][e]);
                }
        }
    };

    // A K tile on the tensor cores. The two small products (2^-11 of the big one) go on
    // adding up in the tensor cores over all of the CTA's K; the big one starts from zero
    // every two steps (16 products) and is added to the FP32 sums in registers, rounding to
    // nearest, so that the tensor cores' truncating adds act on 16 products at a time.
    float smalls[T::kMTiles][T::kNTiles][4] = {};
    const auto multiply_k_tile = [&](const float* a_tile, const float* b_tile) {
        float a_rows[T::kMTiles][2][8];  // rows g and g + 8 of each m16 tile, K = 8t .. 8t + 7
#pragma unroll
        for (int mi = 0; mi < T::kMTiles; ++mi)
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int half = 0; half < 2; ++half)
                    *reinterpret_cast<float4*>(&a_rows[mi][h][4 * half]) = *reinterpret_cast<const float4*>(
                        a_tile + (warp_row + 16 * mi + g + 8 * h) * T::kAStride + 8 * t + 4 * half);
        float bigs[T::kMTiles][T::kNTiles][4];
#pragma unroll
        for (int step = 0; step < kBlockK / 8; ++step) {
            unsigned a_big[T::kMTiles][4], a_small[T::kMTiles][4], b_big[T::kNTiles][2], b_small[T::kNTiles][2];
            const auto split = [](float x, unsigned& big, unsigned& small) {
                const Tf32Parts parts = split_into_tf32_parts(x);
                big = parts.big, small = parts.small;
            };
#pragma unroll
            for (int mi = 0; mi < T::kMTiles; ++mi)
#pragma unroll
                for (int r = 0; r < 4; ++r)  // a0..a3: rows g, g + 8; k slots 0, 1
                    split(a_rows[mi][r % 2][2 * step + r / 2], a_big[mi][r], a_small[mi][r]);
#pragma unroll
            for (int r = 0; r < 2; ++r) {  // K = 8t + 2 step + r, columns 4g + 0..3 of the warp's
                const float4 row =
                    *reinterpret_cast<const float4*>(b_tile + b_offset<T>(8 * t + 2 * step + r, warp_col + 4 * g));
                split(row.x, b_big[0][r], b_small[0][r]);
                split(row.y, b_big[1][r], b_small[1][r]);
                split(row.z, b_big[2][r], b_small[2][r]);
                split(row.w, b_big[3][r], b_small[3][r]);
            }
#pragma unroll
            for (int mi = 0; mi < T::kMTiles; ++mi)
#pragma unroll
                for (int ni = 0; ni < T::kNTiles; ++ni) {
                    mma_tf32_1688(smalls[mi][ni], a_small[mi], b_big[ni]);
                    mma_tf32_1688(smalls[mi][ni], a_big[mi], b_small[ni]);
                    if (step % 2 == 0)
#pragma unroll
                        for (int e = 0; e < 4; ++e) bigs[mi][ni][e] = 0.0f;
                    mma_tf32_1688(bigs[mi][ni], a_big[mi], b_big[ni]);
                    if (step % 2 == 1)
#pragma unroll
                        for (int e = 0; e < 4; ++e) sums[mi][ni][e] += bigs[mi][ni][e];
                }
        }
    };

    // Below 32 products a sum, SGEMM's own error (a few units of 2^-24) is below what the
    // split drops from each product (up to 2^-22 of it): such a K is the CUDA cores'.
    const bool split_pays = k >= kBlockK;

    // The ring: kStages - 1 tiles in flight. One group of copies a K tile, empty past the
    // CTA's share, keeps the wait counts fixed.
#pragma unroll
    for (int stage = 0; stage < kStages - 1; ++stage) {
        if (first_tile + stage < end_tile) copy_k_tile(first_tile + stage, stage);
        cp_async_commit();
    }
    for (int k_tile = first_tile; k_tile < end_tile; ++k_tile) {
        const int stage = (k_tile - first_tile) % kStages;
        cp_async_wait<kStages - 2>();
        // Tile k_tile has landed for every thread, and tile k_tile - 1's buffer is free; the
        // barrier also tells every thread whether any found a value the split cannot hold.
        const bool exceptional = __syncthreads_or(!in_range(stage)) || !split_pays;
        const int next = k_tile + kStages - 1;
        if (next < end_tile) copy_k_tile(next, (next - first_tile) % kStages);
        cp_async_commit();
        const float* const a_tile = shared + stage * T::kStageValues;
        if (exceptional)
            multiply_in_fp32(a_tile, a_tile + T::kAValues);
        else
            multiply_k_tile(a_tile, a_tile + T::kAValues);
    }
#pragma unroll
    for (int mi = 0; mi < T::kMTiles; ++mi)
#pragma unroll
        for (int ni = 0; ni < T::kNTiles; ++ni)
#pragma unroll
            for (int e = 0; e < 4; ++e) sums[mi][ni][e] += smalls[mi][ni][e];

    // Four outputs of row `row`, columns col .. col + 3 of the tile, scaled into C.
    const auto store_four = [&](int row, int col, const float (&values)[4]) {
        if (row0 + row >= m) return;
        float* const out = c + static_cast<std::size_t>(row0 + row) * n + col0 + col;
        if (n % 4 == 0 && col0 + col + 3 < n) return store_scaled_float4(out, values, problem.alpha, problem.beta);
        for (int j = 0; j < 4 && col0 + col + j < n; ++j)
            out[j] = scale_and_accumulate(values[j], problem.alpha, problem.beta, out[j]);
    };
    // calls at(row, col, four values) for each of the thread's rows of four sums
    const auto for_each_four = [&](auto&& at) {
#pragma unroll
        for (int mi = 0; mi < T::kMTiles; ++mi)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                at(warp_row + 16 * mi + g + 8 * (e / 2), warp_col + 8 * t + 4 * (e % 2),
                   {sums[mi][0][e], sums[mi][1][e], sums[mi][2][e], sums[mi][3][e]});
    };

    if (k_splits == 1) {
        for_each_four([&](int row, int col, const float (&values)[4]) { store_four(row, col, values); });
        return;
    }

    // K split over the cluster: every CTA's sums into its shared memory (the ring is done
    // with), then each adds up its share of the tile's rows of four from all of them.
    cp_async_wait<0>();
    __syncthreads();
    for_each_four([&](int row, int col, const float (&values)[4]) {
        *reinterpret_cast<float4*>(shared + row * T::kSumsStride + col) =
            make_float4(values[0], values[1], values[2], values[3]);
    });
    cluster_sync();
    constexpr int kFoursPerRow = T::kBlockN / 4, kFours = T::kBlockM * kFoursPerRow;
    const int last = kFours * (rank + 1) / k_splits;
    for (int four = kFours * rank / k_splits + threadIdx.x; four < last; four += kThreads) {
        const int row = four / kFoursPerRow, col = four % kFoursPerRow * 4;
        const float4 sum = sum_float4_over_cluster(shared + row * T::kSumsStride + col, k_splits);
        store_four(row, col, {sum.x, sum.y, sum.z, sum.w});
    }
    cluster_sync();  // no CTA leaves while another still reads its shared memory
}

template <class Tile, bool kAAligned, bool kBAligned>
void launch_kernel(const GemmProblem& problem, const float* a, const float* b, float* c, int k_splits,
                   cudaStream_t stream) {
    const auto kernel = one_launch_kernel<Tile, kAAligned, kBAligned>;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(Tile::kSharedBytes));
    const GemmShape& s = problem.shape;
    const int blocks = ceil_div(s.m, Tile::kBlockM) * ceil_div(s.n, Tile::kBlockN) * k_splits;
    if (k_splits == 1)
        kernel<<<blocks, kThreads, Tile::kSharedBytes, stream>>>(problem, a, b, c, 1);
    else
        launch_with_cluster(kernel, blocks, kThreads, k_splits, Tile::kSharedBytes, stream, problem, a, b, c, k_splits);
}

template <class Tile>
void launch_tile(const GemmProblem& problem, const float* a, const float* b, float* c, int k_splits,
                 cudaStream_t stream) {
    const bool a_aligned = problem.shape.k % 4 == 0, b_aligned = problem.shape.n % 4 == 0;
    if (a_aligned && b_aligned) return launch_kernel<Tile, true, true>(problem, a, b, c, k_splits, stream);
    if (a_aligned) return launch_kernel<Tile, true, false>(problem, a, b, c, k_splits, stream);
    if (b_aligned) return launch_kernel<Tile, false, true>(problem, a, b, c, k_splits, stream);
    launch_kernel<Tile, false, false>(problem, a, b, c, k_splits, stream);
}

}  // namespace

OneLaunchPlan one_launch_plan(const GemmShape& shape, int sms) {
    OneLaunchPlan plan{Rows64Tile::kBlockM, Rows64Tile::kBlockN, 1};
    if (shape.m <= Rows16Tile::kBlockM) plan = {Rows16Tile::kBlockM, Rows16Tile::kBlockN, 1};
    const int tiles = ceil_div(shape.m, plan.block_m) * ceil_div(shape.n, plan.block_n);
    const int most_splits = std::max(1, std::min(kMostKSplits, ceil_div(shape.k, kBlockK)));
    plan.k_splits = std::clamp(ceil_div(kCtasPerSm * std::max(sms, 1), tiles), 1, most_splits);
    return plan;
}

void launch_one_launch(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream) {
    const OneLaunchPlan plan = one_launch_plan(problem.shape, current_sm_count());
    if (plan.block_m == Rows16Tile::kBlockM)
        launch_tile<Rows16Tile>(problem, a, b, c, plan.k_splits, stream);
    else
        launch_tile<Rows64Tile>(problem, a, b, c, plan.k_splits, stream);
}

}  // namespace sgemm
