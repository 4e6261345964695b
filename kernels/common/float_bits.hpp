// A float's bits and back, on the host and in kernels alike: __uint_as_float and
// __float_as_uint on the GPU (no instruction: the register is reinterpreted), memcpy on the
// host. For the tf32 split (tf32_split.cuh) and the verification's inputs.
#pragma once

#include <cuda_runtime.h>

#include <cstring>

namespace sgemm {

__host__ __device__ inline float float_of_bits(unsigned bits) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
#endif
}

__host__ __device__ inline unsigned bits_of_float(float x) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    unsigned bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits;
#endif
}

}  // namespace sgemm
