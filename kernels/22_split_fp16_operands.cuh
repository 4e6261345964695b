// Stage 22's operands (read 22_split_fp16.cu first): the pre-pass that scales A's rows
// and B's columns, checks that two fp16 parts hold them, and writes the parts; and the
// fallback that computes in FP32 the rows and columns of C whose operands fail the check.
#pragma once

#include <cuda_fp16.h>

#include <cstddef>

#include "common/fp32_split.cuh"
#include "common/gemm_problem.hpp"
#include "common/launch.cuh"
#include "common/vector_access.cuh"

namespace sgemm {
namespace {

// What the pre-pass tells the fallback: the rows of A in two lists, the ones the split
// cannot hold (flagged) from the front of row_order, the others from its back, and the
// columns of B the split cannot hold. counts: flagged rows, other rows, flagged columns.
struct Flagged {
    int* row_order;         // m
    int* flagged_columns;   // n
    int* counts;            // 3, zero before the pre-pass
};

// The exponent of a row or column that the split leaves to the fallback: its part of A'
// or B' is zeros, and the epilogue's unscaling of those zeros stays zero.
constexpr int kLeftToFallback = 1 << 20;

// Eight consecutive values as lo and hi parts, each written as one 16-byte vector.
struct EightSplitValues {
    alignas(16) __half hi[8];
    alignas(16) __half lo[8];
};

__device__ __forceinline__ EightSplitValues split_eight(const float (&values)[8], const int (&exponents)[8]) {
    EightSplitValues out;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const bool splits = exponents[i] != kLeftToFallback;
        const F16Parts parts = split_into_f16_parts(splits ? times_power_of_two(values[i], exponents[i]) : 0.0f);
        out.hi[i] = parts.hi;
        out.lo[i] = parts.lo;
    }
    return out;
}

__device__ __forceinline__ void store_eight(__half* address, const __half (&values)[8]) {
    *reinterpret_cast<uint4*>(address) = *reinterpret_cast<const uint4*>(values);
}

// Eight values of a row of k from `column` on: two 16-byte loads where k is a multiple of
// 8, zeros past its end.
__device__ __forceinline__ void load_eight(const float* values, int k, int column, float (&eight)[8]) {
    if (k % 8 == 0 && column < k) {
        const float4 first = load_float4(values + column), second = load_float4(values + column + 4);
        eight[0] = first.x, eight[1] = first.y, eight[2] = first.z, eight[3] = first.w;
        eight[4] = second.x, eight[5] = second.y, eight[6] = second.z, eight[7] = second.w;
    } else {
#pragma unroll
        for (int i = 0; i < 8; ++i) eight[i] = column + i < k ? values[column + i] : 0.0f;
    }
}

// A row's scaling exponent from its range, kept for the epilogue, and its place in the
// row order: at the front (flagged, the exponent kLeftToFallback) where two fp16 parts
// cannot hold it or it holds NaN or Inf, at the back otherwise. One thread a row calls it.
__device__ __forceinline__ int record_row(const MagnitudeRange& range, int row, int m, int* row_exponents,
                                          Flagged flagged) {
    const bool splits = !range.non_finite && fits_two_f16_parts(range.largest, range.smallest);
    const int exponent = splits ? scaling_exponent(range.largest) : kLeftToFallback;
    row_exponents[row] = exponent;
    if (splits) flagged.row_order[m - 1 - atomicAdd(&flagged.counts[1], 1)] = row;
    else flagged.row_order[atomicAdd(&flagged.counts[0], 1)] = row;
    return exponent;
}

// A row of k values scaled and split into its row of A' = [lo | hi] (2 padded_k halves at
// `out`), zeros for a flagged row: eight values from `first` on, every `stride`.
__device__ __forceinline__ void split_row(const float* values, int k, int padded_k, int exponent, __half* out,
                                          int first, int stride) {
    int exponents[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) exponents[i] = exponent;
    for (int column = first; column < padded_k; column += stride) {
        float eight[8];
        load_eight(values, k, column, eight);
        const EightSplitValues parts = split_eight(eight, exponents);
        store_eight(out + column, parts.lo);
        store_eight(out + padded_k + column, parts.hi);
    }
}

// A (M x K) -> A' = [lo | hi] (M x 2 padded_k), one warp a row: the row's range first
// (record_row), then the row scaled and split, eight values a lane.
__global__ void split_a_kernel(const float* a, int* row_exponents, __half* split, int m, int k, int padded_k,
                               Flagged flagged) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= m) return;
    const float* const values = a + static_cast<std::size_t>(row) * k;
    const MagnitudeRange range = warp_row_range(values, k, lane);
    int exponent = 0;
    if (lane == 0) exponent = record_row(range, row, m, row_exponents, flagged);
    exponent = __shfl_sync(0xffffffffu, exponent, 0);
    split_row(values, k, padded_k, exponent, split + static_cast<std::size_t>(row) * 2 * padded_k, 8 * lane, 8 * 32);
}

// Each column of B's scaling exponent from its range, or kLeftToFallback (and the column
// listed) where two fp16 parts cannot hold it or it holds NaN or Inf; one thread a column.
__global__ void column_exponents_kernel(ColumnRanges ranges, int* column_exponents, int n, Flagged flagged) {
    const int column = blockIdx.x * blockDim.x + threadIdx.x;
    if (column >= n) return;
    const MagnitudeRange range = ranges.of(column);
    const bool splits = !range.non_finite && fits_two_f16_parts(range.largest, range.smallest);
    column_exponents[column] = splits ? scaling_exponent(range.largest) : kLeftToFallback;
    if (!splits) flagged.flagged_columns[atomicAdd(&flagged.counts[2], 1)] = column;
}

// B (K x N) -> B' = [hi; lo] (2 padded_k x N), eight values of a row a thread (N is a
// multiple of 8), each column scaled by its exponent.
__global__ void split_b_kernel(const float* b, const int* column_exponents, __half* split, int k, int n,
                               int padded_k) {
    const std::size_t count = static_cast<std::size_t>(padded_k) * n / 8;
    const std::size_t segment = static_cast<std::size_t>(padded_k) * n;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        const std::size_t first = 8 * i;  // of B and of each segment of B'
        const int row = static_cast<int>(first / n), column = static_cast<int>(first % n);
        const int4 low_exponents = *reinterpret_cast<const int4*>(column_exponents + column);
        const int4 high_exponents = *reinterpret_cast<const int4*>(column_exponents + column + 4);
        const int exponents[8] = {low_exponents.x,  low_exponents.y,  low_exponents.z,  low_exponents.w,
                                  high_exponents.x, high_exponents.y, high_exponents.z, high_exponents.w};
        float eight[8] = {};
        if (row < k) {
            const float4 low = load_float4(b + first), high = load_float4(b + first + 4);
            eight[0] = low.x, eight[1] = low.y, eight[2] = low.z, eight[3] = low.w;
            eight[4] = high.x, eight[5] = high.y, eight[6] = high.z, eight[7] = high.w;
        }
        const EightSplitValues parts = split_eight(eight, exponents);
        store_eight(split + first, parts.hi);
        store_eight(split + segment + first, parts.lo);
    }
}

// The fallback: the flagged rows and columns of C in FP32 on the CUDA cores, as cuBLAS
// SGEMM computes them, each dot product summed in K order by fused multiply-adds. The
// GEMM left fl(beta C0) there (their rows of A' and columns of B' are zeros); this adds
// alpha A B to it. Two passes in one launch, over 64 x 64 tiles that a persistent grid
// takes in turn: the flagged rows with every column, then the other rows with the flagged
// columns, so that each element is computed once. A tile's rows (and, in the second pass,
// columns) are gathered through the lists; 256 threads take 4 x 4 outputs each, and load
// the next 32 values of K into registers while they multiply the current ones (with few
// flagged rows a block has its SM alone, and would otherwise wait out every load).
constexpr int kFallbackTile = 64, kFallbackK = 32, kFallbackThreads = 256;
constexpr int kFallbackLoads = kFallbackK * kFallbackTile / kFallbackThreads;  // of A and of B, per thread

__global__ void __launch_bounds__(kFallbackThreads, 2) fallback_kernel(GemmProblem problem, const float* a, const float* b,
                                                                    float* c, Flagged flagged) {
    __shared__ float a_tile[kFallbackK][kFallbackTile + 1];  // [k][row]; + 1: the transposing stores spread over banks
    __shared__ alignas(16) float b_tile[kFallbackK][kFallbackTile];  // [k][column], read as float4
    const int m = problem.shape.m, n = problem.shape.n, k = problem.shape.k;  // plain ints: the lambdas capture them
    const int flagged_rows = flagged.counts[0], flagged_columns = flagged.counts[2];
    const int first_pass_tiles = ceil_div(flagged_rows, kFallbackTile) * ceil_div(n, kFallbackTile);
    const int second_pass_columns = ceil_div(flagged_columns, kFallbackTile);
    const int tiles = first_pass_tiles + ceil_div(m - flagged_rows, kFallbackTile) * second_pass_columns;
    const int thread_row = threadIdx.x / 16 * 4, thread_column = threadIdx.x % 16 * 4;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const bool first_pass = tile < first_pass_tiles;
        const int in_pass = first_pass ? tile : tile - first_pass_tiles;
        const int column_tiles = first_pass ? ceil_div(n, kFallbackTile) : second_pass_columns;
        const int* const rows = flagged.row_order + (first_pass ? 0 : flagged_rows);
        const int row_count = first_pass ? flagged_rows : m - flagged_rows;
        const int column_count = first_pass ? n : flagged_columns;
        const int tile_row = in_pass / column_tiles * kFallbackTile, tile_column = in_pass % column_tiles * kFallbackTile;
        const auto column_at = [&](int j) { return first_pass ? j : flagged.flagged_columns[j]; };
        // Load l of a thread: A's value at row l kFallbackThreads / kFallbackK + threadIdx.x / kFallbackK
        // of the tile, K index k0 + threadIdx.x % kFallbackK (a warp reads 32 values of a row), and B's at K
        // index k0 + l kFallbackThreads / kFallbackTile + threadIdx.x / kFallbackTile, column threadIdx.x %
        // kFallbackTile (a warp reads 32 columns of a row). The rows and column are found once a tile.
        constexpr int kARowStep = kFallbackThreads / kFallbackK, kBRowStep = kFallbackThreads / kFallbackTile;
        const float* a_rows[kFallbackLoads];
#pragma unroll
        for (int l = 0; l < kFallbackLoads; ++l) {
            const int r = tile_row + l * kARowStep + threadIdx.x / kFallbackK;
            a_rows[l] = r < row_count ? a + static_cast<std::size_t>(rows[r]) * k + threadIdx.x % kFallbackK : nullptr;
        }
        const int b_column = tile_column + threadIdx.x % kFallbackTile;
        const float* const b_first =
            b_column < column_count ? b + static_cast<std::size_t>(threadIdx.x / kFallbackTile) * n + column_at(b_column)
                                    : nullptr;
        float a_next[kFallbackLoads], b_next[kFallbackLoads];
        const auto load_slab = [&](int k0) {
            const bool a_in_k = k0 + static_cast<int>(threadIdx.x % kFallbackK) < k;
#pragma unroll
            for (int l = 0; l < kFallbackLoads; ++l) {
                a_next[l] = a_rows[l] != nullptr && a_in_k ? a_rows[l][k0] : 0.0f;
                const int kb = k0 + l * kBRowStep + static_cast<int>(threadIdx.x / kFallbackTile);
                b_next[l] = b_first != nullptr && kb < k ? b_first[static_cast<std::size_t>(k0 + l * kBRowStep) * n] : 0.0f;
            }
        };
        float acc[4][4] = {};
        load_slab(0);
        for (int k0 = 0; k0 < k; k0 += kFallbackK) {
#pragma unroll
            for (int l = 0; l < kFallbackLoads; ++l) {
                a_tile[threadIdx.x % kFallbackK][l * kARowStep + threadIdx.x / kFallbackK] = a_next[l];
                b_tile[l * kBRowStep + threadIdx.x / kFallbackTile][threadIdx.x % kFallbackTile] = b_next[l];
            }
            __syncthreads();
            if (k0 + kFallbackK < k) load_slab(k0 + kFallbackK);
#pragma unroll
            for (int kk = 0; kk < kFallbackK; ++kk) {
                const float4 b4 = *reinterpret_cast<const float4*>(&b_tile[kk][thread_column]);
                const float bv[4] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a_tile[kk][thread_row + i], bv[j], acc[i][j]);
            }
            __syncthreads();
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            if (tile_row + thread_row + i >= row_count) break;
            float* const c_row = c + static_cast<std::size_t>(rows[tile_row + thread_row + i]) * n;
#pragma unroll
            for (int j = 0; j < 4; ++j)
                if (tile_column + thread_column + j < column_count) {
                    float& out = c_row[column_at(tile_column + thread_column + j)];
                    out = fmaf(problem.alpha, acc[i][j], out);
                }
        }
    }
}

}  // namespace
}  // namespace sgemm
