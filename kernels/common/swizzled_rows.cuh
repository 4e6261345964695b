// What TMA does for a kernel, done by a warpgroup's own copies where TMA cannot: rows of a
// row-major bf16 matrix that start off 16 bytes (TMA needs the row pitch a multiple of 16
// bytes) into the tile TMA would have written, with the 128-byte swizzle (16-byte chunk c
// of row r at chunk c ^ (r % 8) of its 128-byte row, from a 1024-byte aligned start) and
// zeros outside the matrix. Two steps, so that several stages' copies can be in flight
// without holding registers:
//   1. stage_rows: cp.async copies, for each row, the nine 16-byte aligned chunks that hold
//      its 64 values into a staging area of 144 bytes a row, as they lie in memory. Only
//      the bytes of the row's values (and, in the first chunk, the end of the row before)
//      are read: cp.async's src-size stops each chunk there and zero-fills the rest, so
//      values past the matrix's width or height are zeros. A chunk that runs past the
//      matrix's end is read by plain loads (compute-sanitizer holds a cp.async to all 16
//      bytes of its chunk, whatever the src-size).
//   2. swizzle_staged_rows: once every thread's copies of the stage have landed
//      (cp.async.wait_group, then a barrier), each thread takes 16-byte chunks of the tile:
//      the two staged chunks a chunk straddles, shifted by the row's misalignment (prmt),
//      stored swizzled.
// The tile's stores are ordinary (generic proxy): before wgmma reads the tile, each thread
// that stored must run fence_shared_for_wgmma() (fence.proxy.async), and a barrier must
// order those fences before the consumers' wait. The matrix must start 16-byte aligned.
#pragma once

#include <cuda_bf16.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cp_async.cuh"

namespace sgemm {

constexpr int kStagedRowBytes = 9 * 16;  // 64 bf16 values at any even address span nine chunks

// Step 1 for rows that may (kMayEndPastMatrix) or may not hold the matrix's last chunk.
template <int kRows, bool kMayEndPastMatrix>
__device__ __forceinline__ void stage_rows_checked(std::uint8_t* staged, const __nv_bfloat16* matrix, int height,
                                                   int width, int first_row, int first_column, int thread) {
    constexpr int kCopies = kRows * 9;
    const int values = std::min(64, width - first_column);  // of each row, inside the matrix
    const auto matrix_end = reinterpret_cast<std::uintptr_t>(matrix + static_cast<std::size_t>(height) * width);
    const unsigned staged_base = shared_address(staged);
#pragma unroll
    for (int i = 0; i < (kCopies + 127) / 128; ++i) {
        const int copy = thread + 128 * i, row = copy / 9, chunk = copy % 9;
        if (copy >= kCopies) break;
        const unsigned to = staged_base + row * kStagedRowBytes + chunk * 16;
        const __nv_bfloat16* from = matrix;
        int bytes = 0;
        if (first_row + row < height && values > 0) {
            const __nv_bfloat16* const start = matrix + static_cast<std::size_t>(first_row + row) * width + first_column;
            const auto aligned = reinterpret_cast<std::uintptr_t>(start) & ~std::uintptr_t{15};
            const auto end = reinterpret_cast<std::uintptr_t>(start + values);
            const std::uintptr_t address = aligned + 16 * chunk;
            if (address < end) {
                from = reinterpret_cast<const __nv_bfloat16*>(address);
                bytes = static_cast<int>(std::min<std::uintptr_t>(16, end - address));
            }
            if (kMayEndPastMatrix && bytes > 0 && address + 16 > matrix_end) {
                const auto* words = reinterpret_cast<const unsigned short*>(address);
                for (int j = 0; j < 8; ++j)
                    asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(to + 2 * j),
                                 "h"(2 * j < bytes ? words[j] : static_cast<unsigned short>(0)));
                continue;
            }
        }
        cp_async_16_partial(to, from, bytes);
    }
}

// Step 1: rows first_row .. first_row + kRows - 1 and the 64 columns from first_column of a
// height x width matrix, as they lie in memory, into `staged` (kRows x 144 bytes), by the
// 128 threads of a warpgroup (`thread` = 0..127). The caller commits the group. Only a tile
// that holds the matrix's last row tests each chunk against the matrix's end: the test in
// every tile's copies cost stage 25 2.5 points off the multiples of 8 (58.4 % of cuBLAS
// against 60.9 % hoisted, over draw 5's 75 such problems; docs/notes).
template <int kRows>
__device__ __forceinline__ void stage_rows(std::uint8_t* staged, const __nv_bfloat16* matrix, int height, int width,
                                           int first_row, int first_column, int thread) {
    if (first_row + kRows >= height)
        stage_rows_checked<kRows, true>(staged, matrix, height, width, first_row, first_column, thread);
    else
        stage_rows_checked<kRows, false>(staged, matrix, height, width, first_row, first_column, thread);
}

// Step 2: the staged rows into `tile` (kRows x 128 bytes), each shifted by the bytes its
// row starts past 16 (the same first_row, first_column and width as step 1).
template <int kRows>
__device__ __forceinline__ void swizzle_staged_rows(std::uint8_t* tile, const std::uint8_t* staged, int width,
                                                    int first_row, int first_column, int thread) {
#pragma unroll
    for (int i = 0; i < (kRows * 8 + 127) / 128; ++i) {
        const int chunk = thread + 128 * i, row = chunk / 8, column_chunk = chunk % 8;
        if (chunk >= kRows * 8) break;
        // The row's first value lies `skip` bytes into its first staged chunk (only the low
        // bits of the element offset matter, so 32-bit arithmetic may wrap).
        const unsigned skip =
            (static_cast<unsigned>(first_row + row) * static_cast<unsigned>(width) + first_column) * 2 % 16;
        const std::uint8_t* const from = staged + row * kStagedRowBytes + column_chunk * 16;
        const uint4 low = *reinterpret_cast<const uint4*>(from), high = *reinterpret_cast<const uint4*>(from + 16);
        const unsigned words[8] = {low.x, low.y, low.z, low.w, high.x, high.y, high.z, high.w};
        const unsigned word_skip = skip / 4;
        unsigned kept[5];
#pragma unroll
        for (int w = 0; w < 5; ++w)
            kept[w] = word_skip == 0   ? words[w]
                      : word_skip == 1 ? words[w + 1]
                      : word_skip == 2 ? words[w + 2]
                                       : words[w + 3];
        unsigned out[4];
#pragma unroll
        for (int w = 0; w < 4; ++w) out[w] = skip % 4 == 0 ? kept[w] : __byte_perm(kept[w], kept[w + 1], 0x5432);
        *reinterpret_cast<uint4*>(tile + row * 128 + (column_chunk ^ row % 8) * 16) =
            make_uint4(out[0], out[1], out[2], out[3]);
    }
}

}  // namespace sgemm
