// 128-bit accesses: one instruction moves four floats (LDG.E.128, LDS.128, STS.128,
// STG.E.128 in the SASS). The address must be 16-byte aligned: row strides that are
// multiples of 4 floats and cudaMalloc'd base pointers guarantee it.
#pragma once

namespace sgemm {

__device__ __forceinline__ float4 load_float4(const float* address) {
    return *reinterpret_cast<const float4*>(address);
}

__device__ __forceinline__ void store_float4(float* address, const float4& value) {
    *reinterpret_cast<float4*>(address) = value;
}

// Stores four consecutive values of a row down a column instead: first, first + stride,
// first + 2 stride, first + 3 stride. This is how a tile of A is transposed on its way
// into shared memory.
__device__ __forceinline__ void store_float4_transposed(float* first, int stride, const float4& value) {
    first[0] = value.x;
    first[stride] = value.y;
    first[2 * stride] = value.z;
    first[3 * stride] = value.w;
}

}  // namespace sgemm
