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

}  // namespace sgemm
