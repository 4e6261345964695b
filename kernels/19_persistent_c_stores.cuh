// Stage 19's C stores (read 19_persistent.cu first): a consumer's tile of C goes through
// shared memory and a TMA store, chunk by chunk, so that the consumer is free for its next
// tile as soon as a chunk is in shared memory. Stages 20 and 22 write C this way too.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "common/gemm_problem.hpp"
#include "common/sync.cuh"
#include "common/tma.cuh"
#include "common/wgmma.cuh"

namespace sgemm {

// One chunk of a warpgroup's C tile: 64 rows x 32 columns (8 KB: rows of 128 bytes,
// swizzled like the operands, so that a warp's float2 writes spread over the banks) at
// (first_row, first_column) of C. `values`: this thread's 16 accumulators of the chunk,
// 8-column block b's at values[4b..4b+3] in the wgmma layout. The chunks of a warpgroup
// take turns in kBuffers buffers of its own (1024-byte aligned); `sequence` counts its
// chunks. Before a buffer is written again, the store that read it kBuffers chunks ago
// must be done reading. TMA leaves out rows and columns outside C. `barrier_id`: the
// warpgroup's named barrier.
constexpr int kCChunkRows = 64, kCChunkColumns = 32, kCChunkBytes = kCChunkRows * kCChunkColumns * 4;
constexpr int kCChunkValues = kCChunkColumns / 8 * 4;  // per thread

template <int kBuffers>
__device__ __forceinline__ void store_c_chunk_through_tma(const float* values, const GemmProblem& problem,
                                                          const float* c, const CUtensorMap* c_map,
                                                          std::uint8_t* buffers, int sequence, int first_row,
                                                          int first_column, int barrier_id) {
    const bool issues_stores = threadIdx.x % 128 == 0;
    std::uint8_t* const buffer = buffers + sequence % kBuffers * kCChunkBytes;
    if (issues_stores) tma_store_wait_read<kBuffers - 1>();
    named_barrier_sync(barrier_id, 128);
#pragma unroll
    for (int block = 0; block < kCChunkColumns / 8; ++block)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const auto [row, column] = wgmma_accumulator_position(threadIdx.x % 128, block, half);
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

}  // namespace sgemm
