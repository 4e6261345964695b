// The shared-memory tiles of the Hopper stages (15 on), as TMA writes them, and what a
// warpgroup does with them: the wgmma steps of one K tile, and C from its registers.
//
// One pipeline stage holds the K tile kt (64 values of K) of A's and B's block tiles,
// both with the 128-byte swizzle (chunk c of 16 bytes in row r sits at chunk c ^ (r % 8)
// of its 128-byte row, in 1024-byte patterns of 8 rows):
//   A, kBlockM x 64, K-major: kBlockM rows of 128 bytes, one TMA box. A descriptor's
//     rows are 128 bytes apart, 8-row groups 1024 (the stride offset); the k16 step j
//     starts 32 j bytes into the row.
//   B, 64 x kBlockN, MN-major (B is row-major K x N, N contiguous): kBlockN / 64 slabs,
//     each 64 rows of K by 64 values of N (128 bytes), one TMA box each. wgmma reads it
//     transposed (tB = 1): in the PTX ISA's canonical MN-major layout
//     ((8,8,slabs),(8,2)) : ((1,8,leading offset),(64,stride offset)) in values, the
//     leading offset is the slab (8192 bytes) and the stride offset the next 8 rows of
//     K (1024 bytes); the k16 step j starts 16 rows (2048 bytes) further.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "common/epilogue.cuh"
#include "common/gemm_problem.hpp"
#include "common/wgmma.cuh"

namespace sgemm {

// B's slabs: 64 rows of K by 64 values of N (8 KB), whatever the tile.
constexpr int kBSlabBytes = 64 * 64 * 2;

template <int BlockM, int BlockN>
struct HopperStageTiles {
    static constexpr int kBlockM = BlockM, kBlockN = BlockN;
    static constexpr int kBlockK = 64;  // one 128-byte swizzle row of bf16
    static constexpr int kSwizzleBytes = 1024;
    static constexpr int kABytes = kBlockM * kBlockK * 2;
    static constexpr int kBSlabColumns = 64;
    static constexpr int kBSlabs = kBlockN / kBSlabColumns;
    static constexpr int kBSlabBytes = sgemm::kBSlabBytes;
    static_assert(kBSlabBytes == kBlockK * kBSlabColumns * 2, "a slab is one 64 x 64 box");
    static constexpr int kBytes = kABytes + kBSlabs * kBSlabBytes;  // one pipeline stage
    static_assert(kBlockM % 64 == 0 && kBlockN % kBSlabColumns == 0, "whole m64 blocks and B slabs");
    static_assert(kBlockM <= 256, "one TMA box holds at most 256 rows");

    // One stage of the ring as a kernel's shared-memory struct holds it: A's K tile, then
    // B's slabs (b[0] is where the B tile starts), aligned to the swizzle's 1024-byte pattern.
    struct alignas(kSwizzleBytes) Stage {
        std::uint8_t a[kABytes];
        std::uint8_t b[kBSlabs][kBSlabBytes];
    };
    static_assert(sizeof(Stage) == kBytes, "a stage is its tiles");

    // Stage `stage`'s tiles in a ring of them. (As byte offsets: where stage 20 indexed the
    // Stage array instead, ptxas serialized its wgmmas, warning C7515.)
    __device__ static std::uint8_t* a_tile(Stage* ring, int stage) {
        return reinterpret_cast<std::uint8_t*>(ring) + stage * kBytes;
    }
    __device__ static std::uint8_t* b_tile(Stage* ring, int stage) { return a_tile(ring, stage) + kABytes; }
};

// A Hopper kernel's dynamic shared memory as its struct (sizeof(SharedMemory) bytes asked
// for at launch). The swizzled tiles want 1024-byte alignment, which the declaration asks
// of the dynamic shared memory's start (these kernels have no static shared memory).
template <class SharedMemory>
__device__ __forceinline__ SharedMemory& shared_memory_as() {
    extern __shared__ __align__(1024) std::uint8_t hopper_shared_bytes[];
    return *reinterpret_cast<SharedMemory*>(hopper_shared_bytes);
}

// Descriptors for the k16 step `step` of the m64 block starting at row `row` of an A
// tile, and of a B tile (whose 64-wide slabs follow each other).
__device__ __forceinline__ std::uint64_t a_step_descriptor(const std::uint8_t* a_tile, int row, int step) {
    return wgmma_descriptor(a_tile + row * 128 + step * 32, 16, 1024, WgmmaSwizzle::bytes128);
}

__device__ __forceinline__ std::uint64_t b_step_descriptor(const std::uint8_t* b_tile, int step) {
    return wgmma_descriptor(b_tile + step * 2048, kBSlabBytes, 1024, WgmmaSwizzle::bytes128);
}

// A warpgroup's accumulators: kMBlocks m64 blocks of kBlockN columns.
template <int kMBlocks, int kBlockN>
using WarpgroupAccumulators = float[kMBlocks][kBlockN / 2];

template <int kMBlocks, int kBlockN>
__device__ __forceinline__ void zero_accumulators(WarpgroupAccumulators<kMBlocks, kBlockN>& acc) {
#pragma unroll
    for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
        for (int j = 0; j < kBlockN / 2; ++j) acc[i][j] = 0.0f;
}

// Issues one K tile's wgmmas (four k16 steps for each m64 block of the warpgroup's rows,
// starting at row `first_row` of the A tile) as one group, and returns at once. With
// `fresh` the first step overwrites the accumulators instead of adding to them. Input:
// the 16-bit type of the tiles (__nv_bfloat16 or __half).
template <int kMBlocks, int kBlockN, class Input = __nv_bfloat16>
__device__ __forceinline__ void warpgroup_multiply_k_tile(WarpgroupAccumulators<kMBlocks, kBlockN>& acc,
                                                          const std::uint8_t* a_tile, const std::uint8_t* b_tile,
                                                          int first_row, bool fresh = false) {
    wgmma_fence();
#pragma unroll
    for (int step = 0; step < 4; ++step)
#pragma unroll
        for (int i = 0; i < kMBlocks; ++i)
            wgmma_m64k16<kBlockN, true, Input>(acc[i], a_step_descriptor(a_tile, first_row + 64 * i, step),
                                               b_step_descriptor(b_tile, step), !(fresh && step == 0));
    wgmma_commit_group();
}

// Waits for every wgmma of the warpgroup, then keeps the compiler from reading the
// accumulators before that.
template <int kMBlocks, int kBlockN>
__device__ __forceinline__ void warpgroup_finish(WarpgroupAccumulators<kMBlocks, kBlockN>& acc) {
    wgmma_wait_group<0>();
#pragma unroll
    for (int i = 0; i < kMBlocks; ++i) wgmma_fence_accumulators(acc[i]);
}

// C = alpha * acc + beta * C for the warpgroup's rows first_row .. + 64 kMBlocks and the
// block's columns first_column .. + kBlockN, straight from registers: each thread's
// column pairs as float2 (N is a multiple of 8, so a pair is all in or all out).
template <int kMBlocks, int kBlockN>
__device__ __forceinline__ void store_warpgroup_tile(const WarpgroupAccumulators<kMBlocks, kBlockN>& acc,
                                                     const GemmProblem& problem, float* c, int first_row,
                                                     int first_column) {
    const int m = problem.shape.m, n = problem.shape.n;
#pragma unroll
    for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = first_row + 64 * i + wgmma_accumulator_position(threadIdx.x % 128, 0, half).row;
            if (row >= m) continue;
            float* const c_row = c + static_cast<std::size_t>(row) * n;
#pragma unroll
            for (int j = 0; j < kBlockN / 8; ++j) {
                const int column = first_column + wgmma_accumulator_position(threadIdx.x % 128, j, half).column;
                if (column < n)
                    store_scaled_float2(c_row + column, acc[i][4 * j + 2 * half], acc[i][4 * j + 2 * half + 1],
                                        problem.alpha, problem.beta);
            }
        }
}

}  // namespace sgemm
