#include <cmath>

#include "gpu/cuda_check.hpp"
#include "gpu/device_fill.hpp"

namespace sgemm {
namespace {

template <class T>
__global__ void fill_nan_kernel(T* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x)
        data[i] = T(NAN);
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

// BLAS's beta: data = factor * data, or zeros without a read where factor == 0.
template <class T>
__global__ void scale_kernel(T* data, std::size_t count, T factor) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x)
        data[i] = factor == T{0} ? T{0} : factor * data[i];
}

__global__ void scale_bf16_kernel(__nv_bfloat16* data, std::size_t count, float factor) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x)
        data[i] = __float2bfloat16_rn(factor == 0.0f ? 0.0f : factor * __bfloat162float(data[i]));
}

}  // namespace

int fill_blocks(std::size_t count) {
    constexpr int kMaxBlocks = 4096;  // grid-stride loops: any count, bounded launch size
    const std::size_t needed = (count + kFillThreads - 1) / kFillThreads;
    return static_cast<int>(needed < kMaxBlocks ? (needed > 0 ? needed : 1) : kMaxBlocks);
}

void fill_nan(float* data, std::size_t count, cudaStream_t stream) {
    fill_nan_kernel<<<fill_blocks(count), kFillThreads, 0, stream>>>(data, count);
    CUDA_CHECK(cudaGetLastError());
}

void fill_nan(__nv_bfloat16* data, std::size_t count, cudaStream_t stream) {
    fill_nan_kernel<<<fill_blocks(count), kFillThreads, 0, stream>>>(data, count);
    CUDA_CHECK(cudaGetLastError());
}

void round_to_bf16(float* data, __nv_bfloat16* rounded, std::size_t count, cudaStream_t stream) {
    round_to_bf16_kernel<<<fill_blocks(count), kFillThreads, 0, stream>>>(data, rounded, count);
    CUDA_CHECK(cudaGetLastError());
}

void widen_to_double(const float* in, double* out, std::size_t count, bool absolute,
                     cudaStream_t stream) {
    widen_kernel<<<fill_blocks(count), kFillThreads, 0, stream>>>(in, out, count, absolute);
    CUDA_CHECK(cudaGetLastError());
}

void scale_by(float* data, std::size_t count, float factor, cudaStream_t stream) {
    scale_kernel<<<fill_blocks(count), kFillThreads, 0, stream>>>(data, count, factor);
    CUDA_CHECK(cudaGetLastError());
}

void scale_by(double* data, std::size_t count, double factor, cudaStream_t stream) {
    scale_kernel<<<fill_blocks(count), kFillThreads, 0, stream>>>(data, count, factor);
    CUDA_CHECK(cudaGetLastError());
}

void scale_by(__nv_bfloat16* data, std::size_t count, float factor, cudaStream_t stream) {
    scale_bf16_kernel<<<fill_blocks(count), kFillThreads, 0, stream>>>(data, count, factor);
    CUDA_CHECK(cudaGetLastError());
}

}  // namespace sgemm
