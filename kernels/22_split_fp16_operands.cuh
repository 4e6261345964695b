// Stage 22's operands (read 22_split_fp16.cu first): how the pre-pass scales A's rows and
// B's columns, checks that two fp16 parts hold them, and writes the parts, which stages 23
// and 24 share; what fails the check is listed for the FP32 fallback (22_fp32_fallback.cuh).
// Stage 22's pre-pass kernels are in 22_split_fp16.cu.
#pragma once

#include <cuda_fp16.h>

#include <cstddef>

#include "22_fp32_fallback.cuh"
#include "common/fp32_split.cuh"
#include "common/gemm_problem.hpp"
#include "common/launch.cuh"
#include "common/vector_access.cuh"

namespace sgemm {

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
    if (splits) flagged.keep_row(row, m);
    else flagged.flag_row(row);
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

}  // namespace sgemm
