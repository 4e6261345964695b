// FP32 values as sums of 16-bit ones, for the tensor cores (stages 21 and 22).
//
// An FP32 value as the sum of three bf16 values (stage 21): x = hi + mid + lo, exactly.
// hi = bf16(x) rounded to nearest; the remainder x - hi is exact in FP32 (it has at most
// 16 significant bits), mid = bf16 of that, and what is left has at most 8 bits: lo holds
// it exactly. bf16 has FP32's exponent range, so nothing overflows; only where x is
// within 2^16 of FP32's smallest normal (|x| < 2^-110) do mid and lo fall below it, as
// subnormals that the tensor cores may read as zero.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>
#include <cmath>

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

// An FP32 value scaled into fp16's range as the sum of two fp16 values (stage 22):
// x = hi + lo + r with hi = fp16(x), lo = fp16(x - hi) (x - hi is exact in FP32). hi
// carries 11 bits and lo the next 11, so |r| <= 2^-22 |x| wherever lo's rounding is
// relative, that is for |x| >= 2^-3; below, lo's rounding is absolute (fp16's subnormal
// spacing, 2^-24) and |r| <= 2^-25. x must stay below fp16's largest value, 65504.
struct F16Parts {
    __half hi, lo;
};

__host__ __device__ inline F16Parts split_into_f16_parts(float x) {
    const __half hi = __float2half_rn(x);
    return F16Parts{hi, __float2half_rn(x - __half2float(hi))};
}

// The power of two that brings a row or column whose largest magnitude is `largest` into
// [2^14, 2^15): at 2^14 or more, values down to 2^-28 of the largest stay above fp16's
// smallest normal (2^-14); below 2^15, hi stays below 65504 however it rounds. 0 for a row of zeros (or of Inf or NaN,
// which pass through as they are).
__host__ __device__ inline int f16_scaling_exponent(float largest) {
    if (!(largest > 0.0f && largest <= FLT_MAX)) return 0;  // also false for NaN
    int exponent;
    frexpf(largest, &exponent);  // largest = f 2^exponent, f in [0.5, 1)
    return 15 - exponent;
}

}  // namespace sgemm
