#include "verification/input_data.hpp"

#include <array>
#include <utility>

#include "gpu/cuda_check.hpp"
#include "gpu/device_fill.hpp"

namespace sgemm {
namespace {

constexpr std::array<std::pair<InputData, std::string_view>, 10> kNames{{{InputData::uniform, "uniform"},
                                                                        {InputData::wide, "wide"},
                                                                        {InputData::exact, "exact"},
                                                                        {InputData::graded, "graded"},
                                                                        {InputData::outliers, "outliers"},
                                                                        {InputData::subnormal, "subnormal"},
                                                                        {InputData::extremes, "extremes"},
                                                                        {InputData::special, "special"},
                                                                        {InputData::cancelling, "cancelling"},
                                                                        {InputData::positive, "positive"}}};

__global__ void fill_input_kernel(float* values, Operand operand, std::uint64_t rows, std::uint64_t columns,
                                  std::uint64_t seed, InputData data) {
    const std::uint64_t count = rows * columns;
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
         i += std::uint64_t{gridDim.x} * blockDim.x)
        values[i] = input_value(data, seed, MatrixElement{operand, i / columns, i % columns, rows, columns});
}

}  // namespace

void fill_input(float* values, Operand operand, std::uint64_t rows, std::uint64_t columns, std::uint64_t seed,
                InputData data, cudaStream_t stream) {
    if (rows * columns == 0) return;
    fill_input_kernel<<<fill_blocks(rows * columns), kFillThreads, 0, stream>>>(values, operand, rows, columns, seed,
                                                                              data);
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
