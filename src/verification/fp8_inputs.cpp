#include "verification/fp8_inputs.hpp"

#include "gpu/device_fill.hpp"
#include "verification/host_parallel.hpp"

namespace sgemm {
namespace {

std::vector<float> drawn(Operand operand, int rows, int columns, std::uint64_t seed, InputData data,
                         cudaStream_t stream) {
    DeviceBuffer<float> values(static_cast<std::size_t>(rows) * columns);
    fill_input(values.data(), operand, rows, columns, seed, data, stream);
    std::vector<float> host(values.size());
    CUDA_CHECK(cudaMemcpyAsync(host.data(), values.data(), values.bytes(), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return host;
}

template <class T>
DeviceBuffer<T> on_device(const std::vector<T>& host, cudaStream_t stream) {
    DeviceBuffer<T> device(host.size());
    CUDA_CHECK(cudaMemcpyAsync(device.data(), host.data(), device.bytes(), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return device;
}

}  // namespace

Fp8Inputs::Fp8Inputs(const GemmProblem& problem, Fp8Scaling scaling, std::uint64_t seed, InputData data,
                     cudaStream_t stream)
    : shape_(problem.shape), scaling_(scaling), seed_(seed), data_(data) {
    const GemmShape& s = problem.shape;
    // Distinct streams of random numbers for A, B and C from one seed, as GemmInputs draws them.
    a_fp32_ = drawn(Operand::a, s.m, s.k, seed * 3 + 0, data, stream);
    const std::vector<float> b_k_by_n = drawn(Operand::b, s.k, s.n, seed * 3 + 1, data, stream);
    b_fp32_.resize(b_k_by_n.size());
    host_chunks(static_cast<std::size_t>(s.n), 1, [&](std::size_t, std::size_t begin, std::size_t end) {
        for (std::size_t column = begin; column < end; ++column)
            for (std::size_t row = 0; row < static_cast<std::size_t>(s.k); ++row)
                b_fp32_[column * s.k + row] = b_k_by_n[row * s.n + column];
    });
    a_ = quantize_e4m3(a_fp32_, s.m, s.k, a_block(scaling));
    b_ = quantize_e4m3(b_fp32_, s.n, s.k, b_block(scaling));
    a_values_ = on_device(a_.values, stream);
    b_values_ = on_device(b_.values, stream);
    a_scales_ = on_device(cublaslt_scales(a_), stream);
    b_scales_ = on_device(cublaslt_scales(b_), stream);
    if (problem.beta != 0.0f) {
        c_initial_ = drawn(Operand::c, s.m, s.n, seed * 3 + 2, data, stream);
        const std::size_t column_rows = cublaslt_d_rows(s.m);
        std::vector<__nv_bfloat16> rows(c_initial_.size()), columns(column_rows * s.n, __float2bfloat16_rn(0.0f));
        for (std::size_t row = 0; row < static_cast<std::size_t>(s.m); ++row)
            for (std::size_t column = 0; column < static_cast<std::size_t>(s.n); ++column) {
                float& value = c_initial_[row * s.n + column];
                const __nv_bfloat16 rounded = __float2bfloat16_rn(value);
                value = __bfloat162float(rounded);
                rows[row * s.n + column] = rounded;
                columns[column * column_rows + row] = rounded;
            }
        c_rows_ = on_device(rows, stream);
        c_columns_ = on_device(columns, stream);
    }
}

bool Fp8Inputs::made_for(const GemmProblem& problem, Fp8Scaling scaling, std::uint64_t seed, InputData data) const {
    const GemmShape& s = problem.shape;
    return s.m == shape_.m && s.n == shape_.n && s.k == shape_.k && (problem.beta != 0.0f) == !c_initial_.empty() &&
           scaling == scaling_ && seed == seed_ && data == data_;
}

Fp8Operands Fp8Inputs::operands() const {
    return Fp8Operands{a_values_.data(), b_values_.data(), a_scales_.data(), b_scales_.data()};
}

Fp8OperandsCopy Fp8Inputs::copy_operands(cudaStream_t stream) const {
    Fp8OperandsCopy copy{DeviceBuffer<std::uint8_t>(a_values_.size()), DeviceBuffer<std::uint8_t>(b_values_.size()),
                         DeviceBuffer<float>(a_scales_.size()), DeviceBuffer<float>(b_scales_.size())};
    const auto copy_buffer = [stream](auto& to, const auto& from) {
        CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), from.bytes(), cudaMemcpyDeviceToDevice, stream));
    };
    copy_buffer(copy.a_values, a_values_);
    copy_buffer(copy.b_values, b_values_);
    copy_buffer(copy.a_scales, a_scales_);
    copy_buffer(copy.b_scales, b_scales_);
    return copy;
}

std::size_t Fp8Inputs::operand_bytes() const {
    const std::size_t d_passes = c_rows_.size() > 0 ? 2 : 1;  // written (+ read)
    return a_values_.bytes() + b_values_.bytes() + a_scales_.bytes() + b_scales_.bytes() +
           d_passes * sizeof(__nv_bfloat16) * static_cast<std::size_t>(shape_.m) * shape_.n;
}

void Fp8Inputs::reset_output(__nv_bfloat16* d, cudaStream_t stream) const {
    if (c_rows_.size() == 0) return fill_nan(d, static_cast<std::size_t>(shape_.m) * shape_.n, stream);
    CUDA_CHECK(cudaMemcpyAsync(d, c_rows_.data(), c_rows_.bytes(), cudaMemcpyDeviceToDevice, stream));
}

void Fp8Inputs::reset_output_column_major(__nv_bfloat16* d, cudaStream_t stream) const {
    if (c_columns_.size() == 0) return fill_nan(d, static_cast<std::size_t>(cublaslt_d_rows(shape_.m)) * shape_.n, stream);
    CUDA_CHECK(cudaMemcpyAsync(d, c_columns_.data(), c_columns_.bytes(), cudaMemcpyDeviceToDevice, stream));
}

}  // namespace sgemm
