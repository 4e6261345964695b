// The shared-memory tiles of the Hopper stages (15 on), as TMA writes them, and what a
// warpgroup does with them: the wgmma steps of one K tile, and the epilogue.
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
#include "common/tma.cuh"
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

    // Stage `stage` of a ring that starts at `base` (1024-byte aligned).
    __device__ static std::uint8_t* a_tile(std::uint8_t* base, int stage) { return base + stage * kBytes; }
    __device__ static std::uint8_t* b_tile(std::uint8_t* base, int stage) { return a_tile(base, stage) + kABytes; }
};

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

// acc += weight * partial (one fused multiply-add, rounded to nearest), once the wgmmas
// that wrote partial are done (wgmma_wait_group): stage 22 adds a few K tiles' products
// at a time into registers; weight is a power of two, so only the add rounds.
template <int kMBlocks, int kBlockN>
__device__ __forceinline__ void add_accumulators(WarpgroupAccumulators<kMBlocks, kBlockN>& acc,
                                                 WarpgroupAccumulators<kMBlocks, kBlockN>& partial, float weight) {
#pragma unroll
    for (int i = 0; i < kMBlocks; ++i) {
        wgmma_fence_accumulators(partial[i]);
#pragma unroll
        for (int j = 0; j < kBlockN / 2; ++j) acc[i][j] = fmaf(weight, partial[i][j], acc[i][j]);
    }
}

// Operands scaled by powers of two (stages 21 and 22): row i of A by 2^row_exponents[i],
// column j of B by 2^column_exponents[j], so that C's element (i, j) comes out of the
// tensor cores 2^(row_exponents[i] + column_exponents[j]) too large. Null pointers: no
// scaling. Stage 22 also scales its low parts up by lo_scale: the products of K tiles
// 0 .. lo_k_tiles - 1 (sums in registers only) are weighted by 1 / lo_scale. And it
// stores its hi parts once for two segments of K: from K tile repeat_from on, the
// producer reads A's K tile kt - a_repeat_back and B's kt - b_repeat_back again, and
// A' and B' are only repeat_from K tiles long.
struct OperandScaling {
    const int* row_exponents = nullptr;
    const int* column_exponents = nullptr;
    int lo_k_tiles = 0;
    float lo_scale = 1.0f;
    int repeat_from = 0x7fffffff, a_repeat_back = 0, b_repeat_back = 0;

    __device__ int a_k_tile(int kt) const { return kt < repeat_from ? kt : kt - a_repeat_back; }
    __device__ int b_k_tile(int kt) const { return kt < repeat_from ? kt : kt - b_repeat_back; }
};

// Undoes the scaling on the warpgroup's accumulators (rows first_row .. + 64 kMBlocks,
// columns first_column .. + kBlockN); exact, as multiplying by a power of two is, unless
// the result is subnormal.
template <int kMBlocks, int kBlockN>
__device__ __forceinline__ void unscale_accumulators(WarpgroupAccumulators<kMBlocks, kBlockN>& acc,
                                                     const OperandScaling& scaling, const GemmShape& shape,
                                                     int first_row, int first_column) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = first_row + 64 * i + 16 * warp + lane / 4 + 8 * half;
            const int row_exponent = row < shape.m ? scaling.row_exponents[row] : 0;
#pragma unroll
            for (int j = 0; j < kBlockN / 8; ++j) {
                const int column = first_column + 8 * j + 2 * (lane % 4);  // N is a multiple of 8
                if (column >= shape.n) continue;
                const int exponents[2] = {scaling.column_exponents[column], scaling.column_exponents[column + 1]};
#pragma unroll
                for (int pair = 0; pair < 2; ++pair) {
                    float& value = acc[i][4 * j + 2 * half + pair];
                    value = ldexpf(value, -(row_exponent + exponents[pair]));
                }
            }
        }
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
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const int m = problem.shape.m, n = problem.shape.n;
#pragma unroll
    for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = first_row + 64 * i + 16 * warp + lane / 4 + 8 * half;
            if (row >= m) continue;
            float* const c_row = c + static_cast<std::size_t>(row) * n;
#pragma unroll
            for (int j = 0; j < kBlockN / 8; ++j) {
                const int column = first_column + 8 * j + 2 * (lane % 4);
                if (column < n)
                    store_scaled_float2(c_row + column, acc[i][4 * j + 2 * half], acc[i][4 * j + 2 * half + 1],
                                        problem.alpha, problem.beta);
            }
        }
}

// bar.sync id, threads: a barrier for `threads` threads (whole warps) only, here one
// warpgroup; ids 1-15 (__syncthreads uses 0).
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// One chunk of a warpgroup's C tile through shared memory and a TMA store, so that the
// warpgroup is free again as soon as the chunk is in shared memory: 64 rows x 32 columns
// (8 KB: rows of 128 bytes, swizzled like the operands, so that a warp's float2 writes
// spread over the banks) at (first_row, first_column) of C. `values`: this thread's 16
// accumulators of the chunk, 8-column block b's at values[4b..4b+3] in the wgmma layout.
// The chunks of a warpgroup take turns in kBuffers buffers of its own (1024-byte aligned);
// `sequence` counts its chunks. Before a buffer is written again, the store that read it
// kBuffers chunks ago must be done reading. TMA leaves out rows and columns outside C.
// `barrier_id`: the warpgroup's named barrier.
constexpr int kCChunkRows = 64, kCChunkColumns = 32, kCChunkBytes = kCChunkRows * kCChunkColumns * 4;
constexpr int kCChunkValues = kCChunkColumns / 8 * 4;  // per thread

template <int kBuffers>
__device__ __forceinline__ void store_c_chunk_through_tma(const float* values, const GemmProblem& problem,
                                                          const float* c, const CUtensorMap* c_map,
                                                          std::uint8_t* buffers, int sequence, int first_row,
                                                          int first_column, int barrier_id) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const bool issues_stores = threadIdx.x % 128 == 0;
    std::uint8_t* const buffer = buffers + sequence % kBuffers * kCChunkBytes;
    if (issues_stores) tma_store_wait_read<kBuffers - 1>();
    named_barrier_sync(barrier_id, 128);
#pragma unroll
    for (int block = 0; block < kCChunkColumns / 8; ++block)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = 16 * warp + lane / 4 + 8 * half, column = 8 * block + 2 * (lane % 4);
            float2 out = make_float2(problem.alpha * values[4 * block + 2 * half],
                                     problem.alpha * values[4 * block + 2 * half + 1]);
            const int c_row = first_row + row, c_column = first_column + column;
            if (problem.beta != 0.0f && c_row < problem.shape.m && c_column < problem.shape.n) {
                const float2 old =
                    *reinterpret_cast<const float2*>(c + static_cast<std::size_t>(c_row) * problem.shape.n + c_column);
                out.x += problem.beta * old.x;
                out.y += problem.beta * old.y;
            }
            const int unit = (column / 4) ^ (row % 8);
            *reinterpret_cast<float2*>(buffer + row * 128 + unit * 16 + column % 4 * 4) = out;
        }
    fence_shared_for_wgmma();  // the copy engine reads through the async proxy, as wgmma does
    named_barrier_sync(barrier_id, 128);
    if (issues_stores) {
        tma_store_2d(c_map, first_column, first_row, buffer);
        tma_store_commit();
    }
}

// Stream-K's hand-over between clusters (tile_schedule.cuh), by the `threads` consumer
// threads of a CTA (this one `thread`). publish_partial_sums: the partial sums of a piece
// that does not finish its tile go to `slot`, four values at a time (float4 q of thread t
// at q * threads + t, so that a warp's stores are coalesced); once every consumer has
// written them (barrier `barrier_id`), one thread raises `flag` (st.release.gpu).
// add_partial_sums: one thread waits for `flag` (ld.acquire.gpu) and lowers it again for
// the next launch, then every consumer adds the slot's sums to its accumulators, reading
// past L1 (ld.global.cg), which may hold the slot from an earlier launch.
__device__ __forceinline__ void store_release(int* flag, int value) {
    asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}

__device__ __forceinline__ int load_acquire(const int* flag) {
    int value;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(value) : "l"(flag) : "memory");
    return value;
}

template <int kMBlocks, int kBlockN>
__device__ __forceinline__ void publish_partial_sums(const WarpgroupAccumulators<kMBlocks, kBlockN>& acc, float* slot,
                                                     int* flag, int thread, int threads, int barrier_id) {
    float4* const slot4 = reinterpret_cast<float4*>(slot);
#pragma unroll
    for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
        for (int v = 0; v < kBlockN / 2; v += 4)
            slot4[(i * kBlockN / 2 + v) / 4 * threads + thread] =
                make_float4(acc[i][v], acc[i][v + 1], acc[i][v + 2], acc[i][v + 3]);
    __threadfence();
    named_barrier_sync(barrier_id, threads);
    if (thread == 0) store_release(flag, 1);
}

template <int kMBlocks, int kBlockN>
__device__ __forceinline__ void add_partial_sums(WarpgroupAccumulators<kMBlocks, kBlockN>& acc, const float* slot,
                                                 int* flag, int thread, int threads, int barrier_id) {
    if (thread == 0) {
        while (load_acquire(flag) == 0) {
        }
        *flag = 0;
    }
    named_barrier_sync(barrier_id, threads);
    const float4* const slot4 = reinterpret_cast<const float4*>(slot);
#pragma unroll
    for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
        for (int v = 0; v < kBlockN / 2; v += 4) {
            const float4 sums = __ldcg(slot4 + (i * kBlockN / 2 + v) / 4 * threads + thread);
            acc[i][v] += sums.x;
            acc[i][v + 1] += sums.y;
            acc[i][v + 2] += sums.z;
            acc[i][v + 3] += sums.w;
        }
}

}  // namespace sgemm
