// Shared-memory tiles of bf16 for the mma.sync stages (13, 14): their swizzle, and the
// fragments a warp loads from them with ldmatrix for one k16 step.
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

}  // namespace sgemm
