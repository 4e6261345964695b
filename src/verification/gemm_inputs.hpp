// The inputs of one run on the device: A and B drawn from the seed as `data` says
// (input_data.hpp: uniform in [-1, 1) by default), and the initial C. When beta == 0 the initial C is NaN (poison: an element a stage
// forgets to write, or reads when it should not, stays NaN and fails the check); when
// beta != 0 it is random too, and a copy is kept so every launch starts from it.
// For bf16 stages A and B are rounded to bf16 once, here, before anything is timed;
// their float copies are rounded too, so the float64 reference and the stage multiply
// exactly the same numbers and only the stage's arithmetic is judged. Where C is written
// in bf16 (COutput::bf16), the initial C is rounded to bf16 the same way.
#pragma once

#include <cstdint>

#include "driver/stage.hpp"
#include "gpu/device_buffer.hpp"
#include "verification/input_data.hpp"
#include "kernels/common/gemm_problem.hpp"

namespace sgemm {

class GemmInputs {
public:
    GemmInputs(const GemmProblem& problem, Precision precision, std::uint64_t seed, InputData data,
               cudaStream_t stream, COutput c_output = COutput::fp32);

    COutput c_output() const { return c_output_; }

    const float* a() const { return a_.data(); }
    const float* b() const { return b_.data(); }
    // bf16 copies; nullptr for fp32 inputs.
    const __nv_bfloat16* a_bf16() const { return a_bf16_.data(); }
    const __nv_bfloat16* b_bf16() const { return b_bf16_.data(); }
    // nullptr when beta == 0.
    const float* c_initial() const { return c_initial_.data(); }

    // Sets C (of c_output()'s type) to the state every launch must start from.
    void reset_output(void* c, cudaStream_t stream) const;

private:
    GemmShape shape_;
    COutput c_output_;
    DeviceBuffer<float> a_;
    DeviceBuffer<float> b_;
    DeviceBuffer<float> c_initial_;
    DeviceBuffer<__nv_bfloat16> a_bf16_;
    DeviceBuffer<__nv_bfloat16> b_bf16_;
    DeviceBuffer<__nv_bfloat16> c_initial_bf16_;  // where C is bf16 and beta != 0
};

std::size_t element_count_a(const GemmShape& shape);
std::size_t element_count_b(const GemmShape& shape);
std::size_t element_count_c(const GemmShape& shape);

}  // namespace sgemm
