// What the inputs of a run hold (sgemm --data): the values of A, B and the initial C, each
// a pure function of (seed, index), the same on any GPU and on the host.
//   uniform: uniform in [-1, 1), multiples of 2^-23 (the default).
//   wide:    magnitudes log-uniform over [1e-3, 1e3), random signs: twelve binades either
//            side of 1, where a tensor-core split of FP32 operands must keep its low parts.
//   exact:   integers in [-8, 8]: bf16, tf32 and FP32 hold them, and every product and sum
//            of a dot product up to K = 2^18 long, so a correct stage matches the float64
//            reference exactly (alpha = 1, beta 0 or 1).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sgemm {

enum class InputData { uniform, wide, exact };

std::string_view to_string(InputData data);
std::optional<InputData> input_data_named(std::string_view name);
std::vector<std::string> input_data_names();

// SplitMix64's finalizer: a well-mixed 64-bit hash.
__host__ __device__ inline std::uint64_t mix_bits(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Element `index` of the matrix drawn from `seed`.
__host__ __device__ inline float input_value(InputData data, std::uint64_t seed, std::uint64_t index) {
    const std::uint64_t bits = mix_bits(mix_bits(seed) ^ index);
    const float unit = static_cast<float>(bits >> 40) * 0x1p-24f;  // [0, 1), 24 random bits
    switch (data) {
        case InputData::wide: {
            constexpr float kLog2Range = 19.931568569324174f;  // log2(1e6)
            const float magnitude = exp2f(unit * kLog2Range) * 1e-3f;
            return (bits & 1) != 0 ? -magnitude : magnitude;
        }
        case InputData::exact:
            return static_cast<float>(static_cast<int>(bits % 17) - 8);
        case InputData::uniform:
        default:
            return 2.0f * unit - 1.0f;
    }
}

// Fills values[0 .. count) on the device with elements 0 .. count - 1 of that matrix.
void fill_input(float* values, std::size_t count, std::uint64_t seed, InputData data, cudaStream_t stream);

}  // namespace sgemm
