// Shared-memory tiles of bf16 for the mma.sync stages (13, 14), and the warp's step
// along K that reads them with ldmatrix and multiplies with mma.sync.
//
// Layout. An A tile is [BlockM][BlockK] (BlockK = 32 or 64: 64- or 128-byte rows), a B
// tile [BlockK][BlockN], both in 16-byte chunks of 8 values. ldmatrix reads one chunk
// from each of 8 rows at once; unpadded, those 8 chunks share banks (rows 64, 128 or
// 256+ bytes apart): a 4- or 8-way conflict. An XOR swizzle moves each row's chunks to
// a different bank group instead of padding:
//   rows of 8+ chunks: physical chunk = chunk ^ (row % 8)
//   rows of 4 chunks:  physical chunk = chunk ^ ((row / 2) % 4)   (two rows per 128 bytes)
// so any 8 consecutive rows of the same logical chunk land in 8 distinct bank groups.
// The same function places a chunk when it is written and finds it when it is read.
#pragma once

#include <cuda_bf16.h>

#include "mma.cuh"

namespace sgemm {

constexpr int kChunkValues = 8;  // bf16 values per 16-byte chunk

// Offset of (row, logical chunk) in a swizzled tile whose rows hold kRowValues values.
template <int kRowValues>
__device__ __forceinline__ int swizzled_offset(int row, int chunk) {
    constexpr int kRowChunks = kRowValues / kChunkValues;
    static_assert(kRowChunks == 4 || kRowChunks % 8 == 0, "rows of 4 or a multiple of 8 chunks");
    const int physical = kRowChunks == 4 ? chunk ^ ((row >> 1) & 3) : chunk ^ (row & 7);
    return row * kRowValues + physical * kChunkValues;
}

// The operands of one k16 step of a warp's kMTiles x kNTiles grid of m16n8 tiles.
template <int kMTiles, int kNTiles>
struct WarpFragments {
    unsigned a[kMTiles][4];
    unsigned b[kNTiles][2];
};

// B's n8 tiles n and n + 1 of a k16 step with one ldmatrix_x4_trans; lane l gives the
// address of row l % 8 + 8 ((l / 8) % 2) (K) of n8 tile n + l / 16.
template <int kMTiles, int kNTiles>
__device__ __forceinline__ void load_b_fragment_pair(WarpFragments<kMTiles, kNTiles>& f, int n,
                                                     unsigned shared_address) {
    unsigned r[4];
    ldmatrix_x4_trans(r, shared_address);
    f.b[n][0] = r[0];
    f.b[n][1] = r[1];
    f.b[n + 1][0] = r[2];
    f.b[n + 1][1] = r[3];
}

// Loads them with ldmatrix. The warp's tile of C starts at row warp_row and column
// warp_col of the block's tile.
template <int kMTiles, int kNTiles, int kBlockK, int kBlockN>
__device__ __forceinline__ void load_warp_fragments(WarpFragments<kMTiles, kNTiles>& f,
                                                    const __nv_bfloat16* a_tile,
                                                    const __nv_bfloat16* b_tile, int k16,
                                                    int warp_row, int warp_col, int lane) {
    static_assert(kNTiles % 2 == 0, "B fragments are loaded two n8 tiles at a time");
#pragma unroll
    for (int mi = 0; mi < kMTiles; ++mi) {
        // Lanes 0-15 address rows 0-15 of the first 8 K values, lanes 16-31 the next 8.
        const int row = warp_row + mi * 16 + lane % 16;
        ldmatrix_x4(f.a[mi], a_tile + swizzled_offset<kBlockK>(row, k16 * 2 + lane / 16));
    }
#pragma unroll
    for (int nj = 0; nj < kNTiles / 2; ++nj) {
        // Lanes 0-7 and 8-15: K rows 0-7 and 8-15 of the first n8 tile; 16-31: the second.
        const int row = k16 * 16 + lane % 8 + (lane / 8) % 2 * 8;
        const int chunk = (warp_col + nj * 16) / kChunkValues + lane / 16;
        const __nv_bfloat16* const b_row = b_tile + swizzled_offset<kBlockN>(row, chunk);
        load_b_fragment_pair(f, 2 * nj, static_cast<unsigned>(__cvta_generic_to_shared(b_row)));
    }
}

template <int kMTiles, int kNTiles>
__device__ __forceinline__ void mma_warp_fragments(float (&acc)[kMTiles][kNTiles][4],
                                                   const WarpFragments<kMTiles, kNTiles>& f) {
#pragma unroll
    for (int mi = 0; mi < kMTiles; ++mi)
#pragma unroll
        for (int ni = 0; ni < kNTiles; ++ni) mma_bf16_16816(acc[mi][ni], f.a[mi], f.b[ni]);
}

// One k16 step: load, then multiply.
template <int kMTiles, int kNTiles, int kBlockK, int kBlockN>
__device__ __forceinline__ void warp_mma_k16(float (&acc)[kMTiles][kNTiles][4],
                                             const __nv_bfloat16* a_tile,
                                             const __nv_bfloat16* b_tile, int k16, int warp_row,
                                             int warp_col, int lane) {
    WarpFragments<kMTiles, kNTiles> f;
    load_warp_fragments<kMTiles, kNTiles, kBlockK, kBlockN>(f, a_tile, b_tile, k16, warp_row, warp_col, lane);
    mma_warp_fragments(acc, f);
}

}  // namespace sgemm
