// Operands the FP8 GPU tests share (test_fp8_cublaslt.cpp, test_fp8_stages.cpp).
#pragma once

#include <cuda_runtime.h>

#include <random>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "verification/fp8_operands.hpp"

namespace sgemm {

// The GPU's compute capability major, 0 without a GPU.
inline int gpu_major() {
    int count = 0, major = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess)
        return 0;
    return major;
}
// cuBLASLt's FP8 GEMM runs from sm_90 on; the FP8 stages are sm_90a code, Hopper's only.
inline bool gpu_has_fp8() { return gpu_major() >= 9; }
inline bool gpu_is_hopper() { return gpu_major() == 9; }

template <class T>
DeviceBuffer<T> to_device(const std::vector<T>& host) {
    DeviceBuffer<T> device(host.size());
    CUDA_CHECK(cudaMemcpy(device.data(), host.data(), device.bytes(), cudaMemcpyHostToDevice));
    return device;
}

// rows x k values of [0, 1), quantized in `block`: products of one sign, the worst case of an
// accumulator that truncates.
inline Fp8Operand one_signed_operand(int rows, int k, Fp8Block block, std::mt19937& rng) {
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    std::vector<float> x(static_cast<std::size_t>(rows) * k);
    for (float& value : x) value = uniform(rng);
    return quantize_e4m3(x, rows, k, block);
}

}  // namespace sgemm
