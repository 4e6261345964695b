// An FP32 value as the sum of three bf16 values (stage 21): x = hi + mid + lo, exactly.
// hi = bf16(x) rounded to nearest; the remainder x - hi is exact in FP32 (it has at most
// 16 significant bits), mid = bf16 of that, and what is left has at most 8 bits: lo holds
// it exactly. bf16 has FP32's exponent range, so nothing overflows; only where x is
// within 2^16 of FP32's smallest normal (|x| < 2^-110) do mid and lo fall below it, as
// subnormals that the tensor cores may read as zero.
#pragma once

#include <cuda_bf16.h>

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

}  // namespace sgemm
