#include <cmath>

#include "gpu/cuda_check.hpp"
#include "gpu/device_fill.hpp"

namespace sgemm {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;  // grid-stride loops: any count, bounded launch size

// SplitMix64 finalizer: a well-mixed 64-bit hash of the element index and the seed.
__device__ std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

__global__ void fill_uniform_kernel(float* data, std::size_t count, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        const std::uint64_t bits = mix(mix(seed) ^ i) >> 40;  // 24 random bits
        data[i] = static_cast<float>(bits) * 0x1p-23f - 1.0f;
    }
}

__global__ void fill_nan_kernel(float* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x)
        data[i] = NAN;
}

__global__ void round_to_bf16_kernel(float* data, __nv_bfloat16* rounded, std::size_t count) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        rounded[i] = __float2bfloat16_rn(data[i]);
        data[i] = __bfloat162float(rounded[i]);
    }
}

__global__ void widen_kernel(const float* in, double* out, std::size_t count, bool absolute) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        const double value = in[i];
        out[i] = absolute ? fabs(value) : value;
    }
}

int blocks_for(std::size_t count) {
    const std::size_t needed = (count + kThreads - 1) / kThreads;
    return static_cast<int>(needed < kMaxBlocks ? (needed > 0 ? needed : 1) : kMaxBlocks);
}

}  // namespace

void fill_uniform(float* data, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
    fill_uniform_kernel<<<blocks_for(count), kThreads, 0, stream>>>(data, count, seed);
    CUDA_CHECK(cudaGetLastError());
}

void fill_nan(float* data, std::size_t count, cudaStream_t stream) {
    fill_nan_kernel<<<blocks_for(count), kThreads, 0, stream>>>(data, count);
    CUDA_CHECK(cudaGetLastError());
}

void round_to_bf16(float* data, __nv_bfloat16* rounded, std::size_t count, cudaStream_t stream) {
    round_to_bf16_kernel<<<blocks_for(count), kThreads, 0, stream>>>(data, rounded, count);
    CUDA_CHECK(cudaGetLastError());
}

void widen_to_double(const float* in, double* out, std::size_t count, bool absolute,
                     cudaStream_t stream) {
    widen_kernel<<<blocks_for(count), kThreads, 0, stream>>>(in, out, count, absolute);
    CUDA_CHECK(cudaGetLastError());
}

}  // namespace sgemm
