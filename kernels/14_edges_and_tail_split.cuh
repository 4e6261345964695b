// Stage 14's edges and split tail (read 14_multistage.cu first): what multistage_kernel
// (14_multistage.cuh) calls for shapes off the tile grid and for a last wave split along K,
// and the second kernel that adds up the split tiles' parts.
#pragma once

#include <algorithm>
#include <cstddef>

#include "common/bf16_tiles.cuh"
#include "common/cp_async.cuh"
#include "common/epilogue.cuh"
#include "common/gemm_problem.hpp"
#include "common/launch.cuh"

namespace sgemm {

// How the kernel meets the edges of the matrices.
//   kWholeTiles: the shape is whole tiles; nothing is tested.
//   kAlignedRows: K and N are multiples of 8, so rows of A, B and C start 16-byte
//     aligned, as cp.async needs. Copies past the bottom or right edge read the last
//     row or chunk instead (what they feed is never stored), and K's remainder is
//     copied first: the main loop is the whole-tile one, with nothing in it tested.
//   kAnyShape: rows need not be 16-byte aligned, which cp.async requires: loads test
//     every value against the bounds (zeros outside) and go through registers, and
//     stores test every output. Correct for any shape, and several times slower.
enum class Edges { kWholeTiles, kAlignedRows, kAnyShape };

// kAlignedRows: where K is not whole tiles, tile 0 starts this many values (< 0) before
// column 0 of A and row 0 of B, and its chunks there are zero-filled; every later tile is
// whole.
template <class Config, Edges kEdges>
__device__ __forceinline__ int aligned_rows_k_start(int k) {
    return kEdges == Edges::kAlignedRows && k % Config::kBlockK != 0 ? k % Config::kBlockK - Config::kBlockK : 0;
}

// kAlignedRows: a thread's rows of A past M read row M - 1, its chunks of B past N the last
// chunk: `index` (a row, or a chunk's first column) goes no further than `last`. The other
// edges take `index` as it is.
template <Edges kEdges>
__device__ __forceinline__ int clamped_to_edge(int index, int last) {
    return kEdges == Edges::kAlignedRows ? min(index, last) : index;
}

// kAnyShape: K tile `tile` into `buffer` through registers, in the chunks the thread's
// cp.async would copy, each value tested against the bounds and zero outside them.
// a and b are the block's first value of A and B, at (row0, 0) and (0, col0).
template <class Config>
__device__ __forceinline__ void copy_tile_tested(__nv_bfloat16* buffer, const __nv_bfloat16* a, const __nv_bfloat16* b,
                                                 int tile, int row0, int col0, int m, int n, int k, int a_row,
                                                 int a_chunk, int b_row, int b_chunk) {
    using T = Config;
    const int k0 = tile * T::kBlockK;
    __nv_bfloat16* const a_tile = buffer;
    __nv_bfloat16* const b_tile = a_tile + T::kATileValues;
#pragma unroll
    for (int pass = 0; pass < T::kAPasses; ++pass) {
        const int row = a_row + pass * T::kARowsPerPass, col = k0 + a_chunk * kChunkValues;
        alignas(16) __nv_bfloat16 values[kChunkValues];
#pragma unroll
        for (int e = 0; e < kChunkValues; ++e)
            values[e] = (row0 + row < m && col + e < k) ? a[row * k + col + e] : __float2bfloat16(0.0f);
        *reinterpret_cast<uint4*>(a_tile + swizzled_offset<T::kBlockK>(row, a_chunk)) =
            *reinterpret_cast<const uint4*>(values);
    }
#pragma unroll
    for (int pass = 0; pass < T::kBPasses; ++pass) {
        const int row = b_row + pass * T::kBRowsPerPass, col = b_chunk * kChunkValues;
        alignas(16) __nv_bfloat16 values[kChunkValues];
#pragma unroll
        for (int e = 0; e < kChunkValues; ++e)
            values[e] = (k0 + row < k && col0 + col + e < n) ? b[(k0 + row) * n + col + e] : __float2bfloat16(0.0f);
        *reinterpret_cast<uint4*>(b_tile + swizzled_offset<T::kBlockN>(row, b_chunk)) =
            *reinterpret_cast<const uint4*>(values);
    }
}

// kAnyShape: C's rows need not start 8-byte aligned, so a lane cannot store its pair of
// outputs as one float2: alone, each value of a warp's store lands in 8 rows, 16 bytes of
// a 32-byte sector each, and each sector is written twice (1449 x 4578 x 18: 145 MB of L2
// traffic for a C of 27 MB, 62 us where cuBLAS takes 18). So the block's tile goes through
// shared memory, whose pipeline buffers are free by now, and each warp stores 32
// consecutive outputs of a row; only those inside C, scaled by alpha and beta.
// Rows padded by 8 floats: the 8 rows of a warp's float2 stores then start on 4 different
// banks, and the stores take two wavefronts, as few as 256 bytes can.
constexpr int staged_tile_pitch(int block_n) { return block_n + 8; }
constexpr std::size_t staged_tile_bytes(int block_m, int block_n) {
    return sizeof(float) * block_m * staged_tile_pitch(block_n);
}

template <class Config, class ForEachOutputPair>
__device__ __forceinline__ void store_scaled_tile_by_rows(float* staged, float* c, int row0, int col0, int m, int n,
                                                          float alpha, float beta,
                                                          const ForEachOutputPair& for_each_output_pair) {
    using T = Config;
    constexpr int kPitch = staged_tile_pitch(T::kBlockN);
    cp_async_wait<0>();
    __syncthreads();  // every warp is done with the pipeline's buffers
    for_each_output_pair([&](int row, int col, float v0, float v1) {
        *reinterpret_cast<float2*>(staged + row * kPitch + col) = make_float2(v0, v1);
    });
    __syncthreads();
    // Only the part of the tile inside C: on a thin C (N = 29 under 256 columns) a walk of
    // the whole tile left most threads idle, most steps.
    const int rows = min(T::kBlockM, m - row0), columns = min(T::kBlockN, n - col0);
    for (int i = threadIdx.x; i < rows * columns; i += T::kThreads) {
        const int row = i / columns, col = i - row * columns;
        float& out = c[row * n + col];
        out = scale_and_accumulate(staged[row * kPitch + col], alpha, beta, out);
    }
}

// How the blocks share the tiles of C. Blocks 0 .. full_tiles - 1 take one tile each, in
// raster order. Where the tiles left after the full waves would leave most SMs idle for
// a whole last wave, or where there are so few tiles that the first wave does (then
// full_tiles is 0), each of those is split along K into `parts` blocks, which write their
// sums to `partials` (one BlockM x BlockN slot per block, row-major) for
// sum_partials_kernel to add up in a fixed order: the tail takes a fraction of a wave,
// and the result does not depend on which block finished first.
struct TailSplit {
    int full_tiles;
    int parts;        // 1: no tile is split, and the grid is full_tiles blocks
    float* partials;  // (tiles - full_tiles) * parts slots
};

// What block blockIdx.x computes: tile `tile` of C, over K tiles [first_tile, end_tile):
// all of them, or in the split tail (in_tail) part `tail_block % split.parts` of them,
// into slot `tail_block` of split.partials.
struct BlockWork {
    bool in_tail;
    int tail_block;
    int tile;
    int first_tile, end_tile;
};

template <class Config, bool kSplitTail>
__device__ __forceinline__ BlockWork block_work(const TailSplit& split, int k) {
    const int tile_count = ceil_div(k, Config::kBlockK);
    const bool in_tail = kSplitTail && static_cast<int>(blockIdx.x) >= split.full_tiles;
    const int tail_block = blockIdx.x - split.full_tiles;
    const int tile = in_tail ? split.full_tiles + tail_block / split.parts : blockIdx.x;
    const int part = in_tail ? tail_block % split.parts : 0, parts = in_tail ? split.parts : 1;
    return BlockWork{in_tail, tail_block, tile, part * tile_count / parts, (part + 1) * tile_count / parts};
}

// A block of the split tail stores its sums whole, unscaled, to its slot for
// sum_partials_kernel; for_each_output_pair is the kernel's walk over its outputs.
template <class Config, class ForEachOutputPair>
__device__ __forceinline__ void store_partial_sums(const TailSplit& split, int tail_block,
                                                   const ForEachOutputPair& for_each_output_pair) {
    float* const slot = split.partials + static_cast<std::size_t>(tail_block) * Config::kBlockM * Config::kBlockN;
    for_each_output_pair([&](int row, int col, float v0, float v1) {
        *reinterpret_cast<float2*>(slot + row * Config::kBlockN + col) = make_float2(v0, v1);
    });
}

// The split tail's second half: C = alpha * (the sum of a tile's parts, in part order) +
// beta * C. Tile blockIdx.y of the tail, four values per thread: enough blocks to keep
// the memory busy (a block per tile took 40 us at 3072, longer than the parts).
constexpr int kSumThreads = 256;

template <class Config, Edges kEdges>
__global__ void __launch_bounds__(kSumThreads) sum_partials_kernel(GemmProblem problem, float* c,
                                                                   int group_rows, TailSplit split) {
    using T = Config;
    constexpr int kTileValues = T::kBlockM * T::kBlockN;
    static_assert(kTileValues / 4 % kSumThreads == 0, "the blocks cover a tile exactly");
    const int m = problem.shape.m, n = problem.shape.n;
    const TileOrigin origin =
        rasterized_tile_origin<T::kBlockM, T::kBlockN>(split.full_tiles + blockIdx.y, m, n, group_rows);
    const int i = blockIdx.x * kSumThreads + threadIdx.x;
    const int row = i / (T::kBlockN / 4), col = i % (T::kBlockN / 4) * 4;
    const int out_row = origin.row + row, out_col = origin.col + col;
    if (out_row >= m || out_col >= n) return;
    const float* const slots = split.partials + static_cast<std::size_t>(blockIdx.y) * split.parts * kTileValues;
    float sum[4] = {};
    for (int part = 0; part < split.parts; ++part) {
        const float4 v = load_float4(slots + part * kTileValues + row * T::kBlockN + col);
        sum[0] += v.x;
        sum[1] += v.y;
        sum[2] += v.z;
        sum[3] += v.w;
    }
    float* const out = c + out_row * n + out_col;
    if constexpr (kEdges == Edges::kAnyShape) {
        for (int e = 0; e < 4 && out_col + e < n; ++e)
            out[e] = scale_and_accumulate(sum[e], problem.alpha, problem.beta, out[e]);
    } else {  // N is a multiple of 8: rows 16-byte aligned, and four outputs or none
        store_scaled_float4(out, sum, problem.alpha, problem.beta);
    }
}

// Whether and how to split the tiles of the last wave (see TailSplit). Only for blocks that
// have an SM each, only where at most half the SMs would have a tile in the last wave,
// into as many parts as fill the SMs at most once, each part at least kMinKTilesPerPart
// K tiles deep; and only where each tile's K loop is long against the tiles to split: at
// least kMinKTiles K tiles and twice as many as the tail has tiles. That last rule is
// fitted to what ./sgemm 14 measured on the H100 against the kernel without the split
// (K tiles, tail tiles: % of cuBLAS, with against without):
//   gains:  48, 24: 54.0 / 50.8 (3072^3)    80, 8: 59.1 / 55.5 (5120^3)
//           64, 4: 53.5 / 39.7 (2176 x 2048 x 4096)   32, 4: 51.8 / 43.3 (x 2048)
//           128, 4: 63.7 / 43.3 (4352 x 1024 x 8192)
//   losses: 32, 24: 50.6 / 51.0 (3072 x 3072 x 2048)  32, 32: 60.9 / 62.0 (8192 x 4352 x 2048)
//           16, 24: 46.4 / 54.0 (3072 x 3072 x 1024)   8, 4: 44.4 / 55.7 (2176 x 2048 x 512)
//           8, 8: 61.0 / 67.0 (5120 x 5120 x 512)
// A split tail costs more than its share of the K loop: the parts of 4352 x 1024 x 8192
// (4 tiles in 32 parts of 4 K tiles) took 37 us where a whole tile takes 163 (Nsight
// Compute), and adding them up 12 more. Where the last wave is fuller (at 4096 and 8192
// on an H100 it is 88 % and 52 % full), splitting did not pay either, nor for 128x64
// blocks two per SM at 1536 (24 tiles past 264): 39 % of cuBLAS against 44 %.
//
// Few tiles: where all the tiles leave at least half the SMs idle (a small C, handed here
// by stage 20 when its shape is off TMA's multiples: 542 x 68 x 997 is 10 tiles of 16 K
// tiles), every tile is split, into as many parts as fill the SMs once, each at least
// kMinKTilesPerPart K tiles deep.
template <class Config>
constexpr bool kMaySplitTail = Config::kMinBlocksPerSm == 1;

template <class Config>
TailSplit plan_tail_split(const GemmShape& shape, int sms) {
    constexpr int kMinKTiles = 32, kMinKTilesPerPart = 4;
    const int tiles = ceil_div(shape.m, Config::kBlockM) * ceil_div(shape.n, Config::kBlockN);
    const int k_tiles = ceil_div(shape.k, Config::kBlockK);
    const TailSplit none{tiles, 1, nullptr};
    if (2 * tiles <= sms) {
        const int parts = std::min(sms / tiles, k_tiles / kMinKTilesPerPart);
        return parts < 2 ? none : TailSplit{0, parts, nullptr};
    }
    const int tail = sms > 0 ? tiles % sms : 0;
    if (!kMaySplitTail<Config> || tiles < sms || tail == 0 || 2 * tail > sms) return none;
    if (k_tiles < kMinKTiles || k_tiles < 2 * tail) return none;
    const int parts = std::min(sms / tail, k_tiles / kMinKTilesPerPart);
    return parts < 2 ? none : TailSplit{tiles - tail, parts, nullptr};
}

// The split this GPU gets for `shape` (of `tiles` tiles), with its slots taken from the
// stream's memory pool. Stream-ordered: the slots are taken when the stream gets here and
// given back by sum_split_tail once sum_partials_kernel is done; without them, no tile is
// split.
template <class Config>
TailSplit take_tail_split(const GemmShape& shape, int tiles, cudaStream_t stream) {
    TailSplit split = plan_tail_split<Config>(shape, current_sm_count());
    if (split.parts > 1) {
        const std::size_t slot_bytes = sizeof(float) * Config::kBlockM * Config::kBlockN;
        const int tail_tiles = tiles - split.full_tiles;
        if (cudaMallocAsync(&split.partials, slot_bytes * tail_tiles * split.parts, stream) != cudaSuccess) {
            (void)cudaGetLastError();
            split = TailSplit{tiles, 1, nullptr};
        }
    }
    return split;
}

// After the parts of a split tail (split.parts > 1): sum_partials_kernel, then the slots
// given back.
template <class Config, Edges kEdges>
void sum_split_tail(const GemmProblem& problem, float* c, int group_rows, const TailSplit& split, int tiles,
                    cudaStream_t stream) {
    const dim3 sum_grid(Config::kBlockM * Config::kBlockN / 4 / kSumThreads, tiles - split.full_tiles);
    sum_partials_kernel<Config, kEdges><<<sum_grid, kSumThreads, 0, stream>>>(problem, c, group_rows, split);
    cudaFreeAsync(split.partials, stream);
}

}  // namespace sgemm
