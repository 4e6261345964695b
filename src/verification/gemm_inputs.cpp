#include "verification/gemm_inputs.hpp"

#include "gpu/device_fill.hpp"

namespace sgemm {

std::size_t element_count_a(const GemmShape& s) { return std::size_t(s.m) * std::size_t(s.k); }
std::size_t element_count_b(const GemmShape& s) { return std::size_t(s.k) * std::size_t(s.n); }
std::size_t element_count_c(const GemmShape& s) { return std::size_t(s.m) * std::size_t(s.n); }

GemmInputs::GemmInputs(const GemmProblem& problem, Precision precision, std::uint64_t seed, InputData data,
                       cudaStream_t stream, COutput c_output)
    : shape_(problem.shape),
      c_output_(c_output),
      a_(element_count_a(problem.shape)),
      b_(element_count_b(problem.shape)),
      c_initial_(problem.beta != 0.0f ? element_count_c(problem.shape) : 0) {
    // Distinct streams of random numbers for A, B and C from one seed.
    const GemmShape& s = problem.shape;
    fill_input(a_.data(), Operand::a, s.m, s.k, seed * 3 + 0, data, stream);
    fill_input(b_.data(), Operand::b, s.k, s.n, seed * 3 + 1, data, stream);
    if (c_initial_.size() > 0) fill_input(c_initial_.data(), Operand::c, s.m, s.n, seed * 3 + 2, data, stream);
    if (precision == Precision::bf16) {
        a_bf16_ = DeviceBuffer<__nv_bfloat16>(a_.size());
        b_bf16_ = DeviceBuffer<__nv_bfloat16>(b_.size());
        round_to_bf16(a_.data(), a_bf16_.data(), a_.size(), stream);
        round_to_bf16(b_.data(), b_bf16_.data(), b_.size(), stream);
    }
    if (c_output == COutput::bf16 && c_initial_.size() > 0) {
        c_initial_bf16_ = DeviceBuffer<__nv_bfloat16>(c_initial_.size());
        round_to_bf16(c_initial_.data(), c_initial_bf16_.data(), c_initial_.size(), stream);
    }
}

void GemmInputs::reset_output(void* c, cudaStream_t stream) const {
    if (c_output_ == COutput::bf16) {
        if (c_initial_bf16_.size() > 0)
            CUDA_CHECK(cudaMemcpyAsync(c, c_initial_bf16_.data(), c_initial_bf16_.bytes(), cudaMemcpyDeviceToDevice,
                                       stream));
        else
            fill_nan(static_cast<__nv_bfloat16*>(c), element_count_c(shape_), stream);
    } else if (c_initial_.size() > 0) {
        CUDA_CHECK(cudaMemcpyAsync(c, c_initial_.data(), c_initial_.bytes(), cudaMemcpyDeviceToDevice, stream));
    } else {
        fill_nan(static_cast<float*>(c), element_count_c(shape_), stream);
    }
}

}  // namespace sgemm
