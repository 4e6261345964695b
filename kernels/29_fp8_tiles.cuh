// Stage 29's D stores (read 29_fp8_tiles.cu first): for a consumer whose part of a tile is
// narrower than stage 19's 64-column chunks, D goes straight from registers to global memory.
#pragma once

#include "28_fp8_block_scaled.cuh"

namespace sgemm {

// A DStore (26_fp8_tensor_scale.cuh): each thread writes its pairs of columns as bf16x2, with
// alpha and beta, the rows and columns outside D left out (N is a multiple of 8: a pair is all
// in or all out). For narrow parts the chunks' shared-memory round trip buys nothing.
struct RegisterDStores {
    static constexpr int kBufferBytes = 0;
    template <int kColumns>
    static constexpr bool kTakes = kColumns % 8 == 0;
    template <int kColumns>
    __device__ static void store(const float* values, const GemmProblem& problem, __nv_bfloat16* d,
                                 const CUtensorMap*, std::uint8_t*, int&, TileOrigin origin, int) {
#pragma unroll
        for (int j = 0; j < kColumns / 8; ++j)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const auto [row, column] = wgmma_accumulator_position(threadIdx.x % 128, j, half);
                const int d_row = origin.row + row, d_column = origin.col + column;
                if (d_row >= problem.shape.m || d_column >= problem.shape.n) continue;
                __nv_bfloat162* const out = reinterpret_cast<__nv_bfloat162*>(
                    d + static_cast<std::size_t>(d_row) * problem.shape.n + d_column);
                float2 value = make_float2(problem.alpha * values[4 * j + 2 * half],
                                           problem.alpha * values[4 * j + 2 * half + 1]);
                if (problem.beta != 0.0f) {
                    const float2 old = __bfloat1622float2(*out);
                    value.x += problem.beta * old.x;
                    value.y += problem.beta * old.y;
                }
                *out = __float22bfloat162_rn(value);
            }
    }
    __device__ static void finish() {}
};

}  // namespace sgemm
