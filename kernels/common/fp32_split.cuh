// FP32 values as sums of 16-bit ones, for the tensor cores (stages 21-24), and the
// powers of two that scale a row of A or a column of B into a 16-bit type's range first.
//
// An FP32 value as the sum of three bf16 values (stage 21): x = hi + mid + lo, exactly.
// hi = bf16(x) rounded to nearest; the remainder x - hi is exact in FP32 (it has at most
// 16 significant bits), mid = bf16 of that, and what is left has at most 8 bits: lo holds
// it exactly, as long as mid and lo stay above bf16's smallest normal (2^-126), that is
// for |x| >= 2^-110; below, they fall among bf16's subnormals and lose bits.
//
// Scaling: both stages multiply each row of A and each column of B by the power of two
// that brings its largest finite magnitude into [2^14, 2^15) (scaling_exponent; exact),
// and undo it on C. Then fp16 holds the largest values without overflow, and bf16's parts
// stay normal for every value down to 2^-124 of its row's largest. NaN and +-Inf are left
// out of the largest and pass through as they are.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>
#include <cmath>
#include <cstddef>

namespace sgemm {

struct Bf16Parts {
    __nv_bfloat16 hi, mid, lo;
};

__host__ __device__ inline Bf16Parts split_into_bf16_parts(float x) {
    const __nv_bfloat16 hi = __float2bfloat16_rn(x);
    const float rest = x - __bfloat162float(hi);
    const __nv_bfloat16 mid = __float2bfloat16_rn(rest);
    const __nv_bfloat16 lo = __float2bfloat16_rn(rest - __bfloat162float(mid));
    return Bf16Parts{hi, mid, lo};
}

// An FP32 value scaled into fp16's range as two fp16 values (stage 22), the second
// scaled up by 2^11 so that it stays among fp16's normal numbers as long as hi does:
//   x = hi + 2^-11 lo + r,  hi = fp16(x),  lo = fp16(2^11 (x - hi))
// (x - hi and its scaling are exact in FP32). hi carries 11 bits and lo the next 11.
// For |x| >= 2^-14 (fp16's smallest normal), |r| <= 2^-22 |x|: where lo is normal its
// rounding is relative, 2^-11 of |lo| <= 2^-11 |x|; where it is subnormal, absolute, 2^-25
// of lo and so 2^-36 of x, again at most 2^-22 |x|. Below 2^-14 hi is subnormal and r is
// absolute. x must stay below 2^15 (hi below fp16's largest, 65504).
inline constexpr float kF16LoScale = 0x1p11f;

struct F16Parts {
    __half hi, lo;
};

__host__ __device__ inline F16Parts split_into_f16_parts(float x) {
    const __half hi = __float2half_rn(x);
    return F16Parts{hi, __float2half_rn((x - __half2float(hi)) * kF16LoScale)};
}

// The power of two that brings a row or column whose largest finite magnitude is `largest`
// into [2^14, 2^15): at 2^14 or more, values down to 2^-28 of the largest stay at or above
// fp16's smallest normal (2^-14); below 2^15, hi stays below 65504 however it rounds. 0 for
// a row of zeros (or of nothing finite).
__host__ __device__ inline int scaling_exponent(float largest) {
    if (!(largest > 0.0f && largest <= FLT_MAX)) return 0;
    int exponent;
    frexpf(largest, &exponent);  // largest = f 2^exponent, f in [0.5, 1)
    return 15 - exponent;
}

// x 2^exponent for the scaling exponents above (-113 .. 164), as two multiplications by
// powers of two, each a normal float: exact wherever ldexpf would be exact, that is for
// every value whose scaled result is normal (or whose result underflows either way), at a
// fraction of ldexpf's instructions.
__host__ __device__ inline float power_of_two(int exponent) {  // exponent in -126 .. 127
#if defined(__CUDA_ARCH__)
    return __uint_as_float(static_cast<unsigned>(127 + exponent) << 23);
#else
    return std::ldexp(1.0f, exponent);
#endif
}

__host__ __device__ inline float times_power_of_two(float x, int exponent) {
    const int half = exponent / 2;
    return x * power_of_two(half) * power_of_two(exponent - half);
}

// Whether two fp16 parts hold every nonzero finite value of a row or column to 22 bits
// (|r| <= 2^-22 |x| above): true when, once scaled, each is at least 2^-14, which holds
// when the smallest nonzero magnitude is at least 2^-28 of the largest. `smallest` is
// +Inf for a row or column without nonzero finite values.
__host__ __device__ inline bool fits_two_f16_parts(float largest, float smallest) {
    return smallest >= ldexpf(largest, -28);
}

#if defined(__CUDACC__)  // the rest runs on the device only (the host tests take the above)

// A row's or column's range: its largest finite magnitude and its smallest nonzero one
// (+Inf while there is none), and whether it holds NaN or +-Inf, which take no part in
// the magnitudes.
struct MagnitudeRange {
    float largest = 0.0f;
    float smallest = INFINITY;
    bool non_finite = false;

    __device__ void include(float x) {
        const float magnitude = fabsf(x);
        if (!(magnitude <= FLT_MAX)) {
            non_finite = true;
            return;
        }
        largest = fmaxf(largest, magnitude);
        if (magnitude > 0.0f) smallest = fminf(smallest, magnitude);
    }
    __device__ void include(const MagnitudeRange& other) {
        largest = fmaxf(largest, other.largest);
        smallest = fminf(smallest, other.smallest);
        non_finite = non_finite || other.non_finite;
    }
};

// The ranges of B's columns (B is K x N), in 3 N unsigned words that start at zero
// (cudaMemsetAsync): word j holds the bits of column j's largest magnitude, word N + j the
// complement of its smallest's, so that atomicMax raises both (non-negative floats order
// as their bits do) and zero means none yet; word 2 N + j is 1 where it holds NaN or Inf.
struct ColumnRanges {
    static constexpr int kWordsPerColumn = 3;
    unsigned* words;
    int n;

    __device__ void include(int column, const MagnitudeRange& range) const {
        atomicMax(&words[column], __float_as_uint(range.largest));
        if (range.smallest <= FLT_MAX) atomicMax(&words[n + column], ~__float_as_uint(range.smallest));
        if (range.non_finite) words[2 * n + column] = 1;
    }
    __device__ MagnitudeRange of(int column) const {
        const unsigned smallest_complement = words[n + column];
        return MagnitudeRange{__uint_as_float(words[column]),
                              smallest_complement == 0 ? INFINITY : __uint_as_float(~smallest_complement),
                              words[2 * n + column] != 0};
    }
};

// One block takes 32 columns (a lane each) and Rows rows with 8 warps.
constexpr int kColumnRangeRows = 256;

template <int Rows>
__global__ void __launch_bounds__(256) column_ranges_kernel(const float* b, int k, int n, ColumnRanges ranges) {
    __shared__ MagnitudeRange warp_ranges[8][32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int column = blockIdx.x * 32 + lane;
    const int first_row = blockIdx.y * Rows, last_row = min(k, first_row + Rows);
    MagnitudeRange range;
    if (column < n)
        for (int row = first_row + warp; row < last_row; row += 8) range.include(b[static_cast<std::size_t>(row) * n + column]);
    warp_ranges[warp][lane] = range;
    __syncthreads();
    if (warp == 0 && column < n) {
        for (int w = 1; w < 8; ++w) range.include(warp_ranges[w][lane]);
        ranges.include(column, range);
    }
}

inline void launch_column_ranges(const float* b, int k, int n, ColumnRanges ranges, cudaStream_t stream) {
    const dim3 grid((n + 31) / 32, (k + kColumnRangeRows - 1) / kColumnRangeRows);
    column_ranges_kernel<kColumnRangeRows><<<grid, 256, 0, stream>>>(b, k, n, ranges);
}

// The ranges of a warp's lanes combined; every lane gets the result.
__device__ inline MagnitudeRange warp_range(MagnitudeRange range) {
    for (int offset = 16; offset > 0; offset /= 2) {
        range.largest = fmaxf(range.largest, __shfl_xor_sync(0xffffffffu, range.largest, offset));
        range.smallest = fminf(range.smallest, __shfl_xor_sync(0xffffffffu, range.smallest, offset));
    }
    range.non_finite = __any_sync(0xffffffffu, range.non_finite);
    return range;
}

// The ranges of a block's kThreads threads combined, through shared memory; thread 0 gets
// the result (the others their warp's). The block's threads all call it.
template <int kThreads>
__device__ inline MagnitudeRange block_range(MagnitudeRange range) {
    __shared__ MagnitudeRange warp_ranges[kThreads / 32];
    range = warp_range(range);
    if (threadIdx.x % 32 == 0) warp_ranges[threadIdx.x / 32] = range;
    __syncthreads();
    if (threadIdx.x == 0)
        for (int w = 1; w < kThreads / 32; ++w) range.include(warp_ranges[w]);
    return range;
}

// The range of a row of `count` values, by a whole warp (each lane reads every 32nd value);
// every lane gets the result.
__device__ inline MagnitudeRange warp_row_range(const float* values, int count, int lane) {
    MagnitudeRange range;
    for (int i = lane; i < count; i += 32) range.include(values[i]);
    return warp_range(range);
}

#endif  // __CUDACC__

}  // namespace sgemm
