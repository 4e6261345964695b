// The last step of every stage: C = alpha * acc + beta * C.
//
// BLAS semantics: when beta == 0 the old C is never read. That is not an
// optimization: C may hold garbage (the driver fills it with NaN), and
// 0 * NaN is NaN.
#pragma once

#include <cuda_bf16.h>

#include "vector_access.cuh"

namespace sgemm {

__device__ __forceinline__ float scale_and_accumulate(float acc, float alpha, float beta,
                                                      const float& c_old) {
    return beta == 0.0f ? alpha * acc : alpha * acc + beta * c_old;
}

// Four consecutive outputs at once, with one 128-bit store (and load, when beta != 0).
__device__ __forceinline__ void store_scaled_float4(float* c, const float (&acc)[4], float alpha,
                                                    float beta) {
    float4 out = make_float4(alpha * acc[0], alpha * acc[1], alpha * acc[2], alpha * acc[3]);
    if (beta != 0.0f) {
        const float4 old = load_float4(c);
        out.x += beta * old.x;
        out.y += beta * old.y;
        out.z += beta * old.z;
        out.w += beta * old.w;
    }
    store_float4(c, out);
}

// Two consecutive outputs at once (the pair an mma.sync accumulator holds per row).
__device__ __forceinline__ void store_scaled_float2(float* c, float acc0, float acc1, float alpha,
                                                    float beta) {
    float2 out = make_float2(alpha * acc0, alpha * acc1);
    if (beta != 0.0f) {
        const float2 old = *reinterpret_cast<const float2*>(c);
        out.x += beta * old.x;
        out.y += beta * old.y;
    }
    *reinterpret_cast<float2*>(c) = out;
}

// The same into bf16 C, rounded to nearest.
__device__ __forceinline__ void store_scaled_bf16x2(__nv_bfloat16* c, float acc0, float acc1, float alpha,
                                                    float beta) {
    float2 out = make_float2(alpha * acc0, alpha * acc1);
    if (beta != 0.0f) {
        const float2 old = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(c));
        out.x += beta * old.x;
        out.y += beta * old.y;
    }
    *reinterpret_cast<__nv_bfloat162*>(c) = __float22bfloat162_rn(out);
}

}  // namespace sgemm
