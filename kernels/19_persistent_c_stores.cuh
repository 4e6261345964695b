// Stage 19's C stores (read 19_persistent.cu first): a consumer's tile of C goes through
// shared memory and a TMA store, chunk by chunk, so that the consumer is free for its next
// tile as soon as a chunk is in shared memory. Stages 20 and 22 write C this way too.
// C is FP32, or bf16 where asked (sgemm --c-type bf16): half the bytes to write.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "common/gemm_problem.hpp"
#include "common/sync.cuh"
#include "common/tma.cuh"
#include "common/wgmma.cuh"

namespace sgemm {

// One chunk of a warpgroup's C tile: 64 rows of 128 bytes, 32 FP32 or 64 bf16 columns (8
// KB, swizzled like the operands, so that a warp's pairs of values spread over the banks)
// at (first_row, first_column) of C. `values`: this thread's accumulators of the chunk
// (16 or 32), 8-column block b's at values[4b..4b+3] in the wgmma layout. The chunks of a warpgroup
// take turns in kBuffers buffers of its own (1024-byte aligned); `sequence` counts its
// chunks. Before a buffer is written again, the store that read it kBuffers chunks ago
// must be done reading. TMA leaves out rows and columns outside C. `barrier_id`: the
// warpgroup's named barrier.
template <class COut>
inline constexpr int kCChunkColumnsOf = 128 / static_cast<int>(sizeof(COut));
template <class COut>
inline constexpr int kCChunkValuesOf = kCChunkColumnsOf<COut> / 8 * 4;  // per thread
constexpr int kCChunkRows = 64, kCChunkBytes = kCChunkRows * 128;
constexpr int kCChunkColumns = kCChunkColumnsOf<float>, kCChunkValues = kCChunkValuesOf<float>;

// The tensor map of C for store_c_chunk_through_tma.
inline CUtensorMap make_c_tensor_map(const float* c, int rows, int columns) {
    return make_fp32_tensor_map(c, rows, columns, kCChunkRows, kCChunkColumnsOf<float>);
}
inline CUtensorMap make_c_tensor_map(const __nv_bfloat16* c, int rows, int columns) {
    return make_bf16_tensor_map(c, rows, columns, kCChunkRows, kCChunkColumnsOf<__nv_bfloat16>);
}

template <int kBuffers, class COut>
__device__ __forceinline__ void store_c_chunk_through_tma(const float* values, const GemmProblem& problem,
                                                          const COut* c, const CUtensorMap* c_map,
                                                          std::uint8_t* buffers, int sequence, int first_row,
                                                          int first_column, int barrier_id) {
    const bool issues_stores = threadIdx.x % 128 == 0;
    std::uint8_t* const buffer = buffers + sequence % kBuffers * kCChunkBytes;
    if (issues_stores) tma_store_wait_read<kBuffers - 1>();
    named_barrier_sync(barrier_id, 128);
#pragma unroll
    for (int block = 0; block < kCChunkColumnsOf<COut> / 8; ++block)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const auto [row, column] = wgmma_accumulator_position(threadIdx.x % 128, block, half);
            float2 out = make_float2(problem.alpha * values[4 * block + 2 * half],
                                     problem.alpha * values[4 * block + 2 * half + 1]);
            const int c_row = first_row + row, c_column = first_column + column;
            if constexpr (std::is_same_v<COut, float>) {
                if (problem.beta != 0.0f && c_row < problem.shape.m && c_column < problem.shape.n) {
                    const float2 old = *reinterpret_cast<const float2*>(
                        c + static_cast<std::size_t>(c_row) * problem.shape.n + c_column);
                    out.x += problem.beta * old.x;
                    out.y += problem.beta * old.y;
                }
                const int unit = (column / 4) ^ (row % 8);  // 16-byte units of 4 values
                *reinterpret_cast<float2*>(buffer + row * 128 + unit * 16 + column % 4 * 4) = out;
            } else {
                if (problem.beta != 0.0f && c_row < problem.shape.m && c_column < problem.shape.n) {
                    const float2 old = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(
                        c + static_cast<std::size_t>(c_row) * problem.shape.n + c_column));
                    out.x += problem.beta * old.x;
                    out.y += problem.beta * old.y;
                }
                const int unit = (column / 8) ^ (row % 8);  // 16-byte units of 8 values
                *reinterpret_cast<__nv_bfloat162*>(buffer + row * 128 + unit * 16 + column % 8 * 2) =
                    __float22bfloat162_rn(out);
            }
        }
    fence_shared_for_wgmma();  // the copy engine reads through the async proxy, as wgmma does
    named_barrier_sync(barrier_id, 128);
    if (issues_stores) {
        tma_store_2d(c_map, first_column, first_row, buffer);
        tma_store_commit();
    }
}

}  // namespace sgemm
