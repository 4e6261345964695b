// Operands the FP8 GPU tests share (test_fp8_cublaslt.cpp, test_fp8_stages.cpp).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "verification/fp8_operands.hpp"

namespace sgemm {

// Why the GPU present cannot run cuBLASLt's FP8 GEMM, which runs from sm_90 on, or nothing.
inline std::optional<std::string> fp8_gemm_refusal() {
    int major = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    if (major >= 9) return std::nullopt;
    return "cuBLASLt's FP8 GEMM needs sm_90 or later; this GPU is sm_" + std::to_string(major) + "x";
}

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

// rows x k e4m3 integers in [-largest, largest] with power-of-two scales (2^-2 to 2^2) in
// `block`: where the accumulation is exact, D is the float64 reference rounded to bf16.
inline Fp8Operand exact_operand(int rows, int k, Fp8Block block, int largest, std::mt19937& rng) {
    std::uniform_int_distribution<int> small(-largest, largest), exponent(-2, 2);
    Fp8Operand operand{rows, k, block, std::vector<std::uint8_t>(static_cast<std::size_t>(rows) * k), {}};
    for (auto& value : operand.values) value = double_to_e4m3(small(rng));
    operand.scales.resize(static_cast<std::size_t>(operand.scale_rows()) * operand.scale_columns());
    for (float& scale : operand.scales) scale = std::ldexp(1.0f, exponent(rng));
    return operand;
}

// rows x k values uniform in [-1, 1), each block of `block` (1 x 128 or 128 x 128 of rows x K)
// times its own 2^-8 to 2^8 (one magnitude for one scale a tensor), quantized in `block`: a
// scale applied to another block's values fails the check.
inline Fp8Operand graded_operand(int rows, int k, Fp8Block block, std::mt19937& rng) {
    std::uniform_int_distribution<int> exponent(-8, 8);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    const int block_rows = block == Fp8Block::block_128x128 ? 128 : 1, k_blocks = (k + 127) / 128;
    std::vector<int> exponents(static_cast<std::size_t>((rows + block_rows - 1) / block_rows) * k_blocks);
    for (int& e : exponents) e = block == Fp8Block::tensor ? 0 : exponent(rng);
    std::vector<float> x(static_cast<std::size_t>(rows) * k);
    for (int row = 0; row < rows; ++row)
        for (int column = 0; column < k; ++column)
            x[static_cast<std::size_t>(row) * k + column] = std::ldexp(
                uniform(rng), exponents[static_cast<std::size_t>(row / block_rows) * k_blocks + column / 128]);
    return quantize_e4m3(x, rows, k, block);
}

}  // namespace sgemm
