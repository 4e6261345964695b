// What TMA does for a kernel, done by a warpgroup's own loads where TMA cannot: rows of a
// row-major bf16 matrix whose rows do not start 16-byte aligned (TMA needs the row pitch a
// multiple of 16 bytes) loaded into the tile TMA would have written, with the 128-byte
// swizzle (16-byte chunk c of row r at chunk c ^ (r % 8) of its 128-byte row, from a
// 1024-byte aligned start) and zeros outside the matrix. The values are read two bytes at
// a time (ld.global.nc.u16: a row may start at any even address), eight to a thread for
// each 16-byte chunk, all of a thread's chunks before any is stored, so that its loads are
// in flight together. The stores are ordinary (generic proxy): before wgmma reads the
// tile, each thread that stored must run fence_shared_for_wgmma() (fence.proxy.async), and
// a barrier must order those fences before the consumers' wait.
#pragma once

#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>

namespace sgemm {

// Rows first_row .. first_row + kRows - 1 and the 64 columns from first_column of a
// height x width matrix into `tile` (kRows x 128 bytes), by the 128 threads of a warpgroup
// (`thread` = 0..127).
template <int kRows>
__device__ __forceinline__ void load_swizzled_rows(std::uint8_t* tile, const __nv_bfloat16* matrix, int height,
                                                   int width, int first_row, int first_column, int thread) {
    constexpr int kChunks = kRows * 8, kChunksPerThread = (kChunks + 127) / 128;
    const auto* values = reinterpret_cast<const unsigned short*>(matrix);
    unsigned short loaded[kChunksPerThread][8];
#pragma unroll
    for (int i = 0; i < kChunksPerThread; ++i) {
        const int chunk = thread + 128 * i, row = first_row + chunk / 8, column = first_column + chunk % 8 * 8;
        const bool row_inside = chunk < kChunks && row < height;
        const unsigned short* const from = values + static_cast<std::size_t>(row) * width + column;
#pragma unroll
        for (int j = 0; j < 8; ++j) loaded[i][j] = row_inside && column + j < width ? __ldg(from + j) : 0;
    }
#pragma unroll
    for (int i = 0; i < kChunksPerThread; ++i) {
        const int chunk = thread + 128 * i, row = chunk / 8;
        if (chunk >= kChunks) break;
        uint4 packed;
        packed.x = loaded[i][0] | static_cast<unsigned>(loaded[i][1]) << 16;
        packed.y = loaded[i][2] | static_cast<unsigned>(loaded[i][3]) << 16;
        packed.z = loaded[i][4] | static_cast<unsigned>(loaded[i][5]) << 16;
        packed.w = loaded[i][6] | static_cast<unsigned>(loaded[i][7]) << 16;
        *reinterpret_cast<uint4*>(tile + row * 128 + (chunk % 8 ^ row % 8) * 16) = packed;
    }
}

}  // namespace sgemm
