// A thread's register tile in the CUDA-core stages (5-10): the slices of A and B it
// reads from shared memory at each step along K, the outer product that updates its
// accumulators, and the epilogue that writes them. From stage 6 on, slices are read as
// float4 quads and outputs come in 4x4 quads; only where the quads sit changes from
// stage to stage, so that is what the callers pass in.
#pragma once

#include "epilogue.cuh"
#include "vector_access.cuh"

namespace sgemm {

// acc[r][c] += a[r] * b[c]
template <int kRows, int kCols>
__device__ __forceinline__ void accumulate_outer_product(float (&acc)[kRows][kCols],
                                                         const float (&a)[kRows],
                                                         const float (&b)[kCols]) {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
        for (int c = 0; c < kCols; ++c) acc[r][c] += a[r] * b[c];
}

// slice[4q .. 4q+3] = the float4 at first + q * stride, for each quad q.
template <int kQuads>
__device__ __forceinline__ void load_slice(float (&slice)[4 * kQuads], const float* first, int stride) {
#pragma unroll
    for (int q = 0; q < kQuads; ++q) {
        const float4 v = load_float4(first + q * stride);
        slice[4 * q] = v.x;
        slice[4 * q + 1] = v.y;
        slice[4 * q + 2] = v.z;
        slice[4 * q + 3] = v.w;
    }
}

// Writes the thread's outputs, held as quads: acc[4 qm + r][4 qn + e] belongs at row
// quad_row + qm * stride_m + r, column quad_col + qn * stride_n + e of the block's tile
// of C (c points at its corner, n is the row length).
template <int kQuadsM, int kQuadsN>
__device__ __forceinline__ void store_quads(float* c, int n, const float (&acc)[4 * kQuadsM][4 * kQuadsN],
                                            int quad_row, int quad_col, int stride_m, int stride_n,
                                            float alpha, float beta) {
#pragma unroll
    for (int r = 0; r < 4 * kQuadsM; ++r)
#pragma unroll
        for (int qn = 0; qn < kQuadsN; ++qn) {
            const int row = quad_row + (r / 4) * stride_m + r % 4;
            const float quad[4] = {acc[r][4 * qn], acc[r][4 * qn + 1], acc[r][4 * qn + 2], acc[r][4 * qn + 3]};
            store_scaled_float4(c + row * n + quad_col + qn * stride_n, quad, alpha, beta);
        }
}

}  // namespace sgemm
