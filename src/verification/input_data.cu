#include "verification/input_data.hpp"

#include <array>
#include <utility>

#include "gpu/cuda_check.hpp"
#include "gpu/device_fill.hpp"

namespace sgemm {
namespace {

constexpr std::array<std::pair<InputData, std::string_view>, 3> kNames{
    {{InputData::uniform, "uniform"}, {InputData::wide, "wide"}, {InputData::exact, "exact"}}};

__global__ void fill_input_kernel(float* values, std::size_t count, std::uint64_t seed, InputData data) {
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x)
        values[i] = input_value(data, seed, i);
}

}  // namespace

void fill_input(float* values, std::size_t count, std::uint64_t seed, InputData data, cudaStream_t stream) {
    fill_input_kernel<<<fill_blocks(count), kFillThreads, 0, stream>>>(values, count, seed, data);
    CUDA_CHECK(cudaGetLastError());
}

std::string_view to_string(InputData data) {
    for (const auto& [kind, name] : kNames)
        if (kind == data) return name;
    return "uniform";
}

std::optional<InputData> input_data_named(std::string_view name) {
    for (const auto& [kind, known] : kNames)
        if (known == name) return kind;
    return std::nullopt;
}

std::vector<std::string> input_data_names() {
    std::vector<std::string> names;
    for (const auto& [kind, name] : kNames) names.emplace_back(name);
    return names;
}

}  // namespace sgemm
