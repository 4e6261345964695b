#include "driver/padded_launch.hpp"

#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>

#include "gpu/cuda_check.hpp"
#include "kernels/common/workspace.cuh"

namespace sgemm {
namespace {

int round_up(int value, int multiple) { return (value + multiple - 1) / multiple * multiple; }

std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// `rows` x `row_bytes` (rows `source_pitch` bytes apart) into a buffer of `padded_rows` rows
// `padded_pitch` bytes apart, the padding zeroed: its columns past `row_bytes`, its rows past `rows`.
void copy_padded(void* padded, std::size_t padded_pitch, int padded_rows, const void* source, std::size_t source_pitch,
                 std::size_t row_bytes, int rows, cudaStream_t stream) {
    auto* const bytes = static_cast<std::uint8_t*>(padded);
    CUDA_CHECK(cudaMemcpy2DAsync(bytes, padded_pitch, source, source_pitch, row_bytes, rows, cudaMemcpyDeviceToDevice,
                                 stream));
    if (padded_pitch > row_bytes)
        CUDA_CHECK(cudaMemset2DAsync(bytes + row_bytes, padded_pitch, 0, padded_pitch - row_bytes, rows, stream));
    if (padded_rows > rows)
        CUDA_CHECK(cudaMemsetAsync(bytes + rows * padded_pitch, 0, (padded_rows - rows) * padded_pitch, stream));
}

}  // namespace

GemmShape padded_shape(const GemmShape& shape, const ShapeRule& rule) {
    return GemmShape{round_up(shape.m, rule.m_multiple), round_up(shape.n, rule.n_multiple),
                     round_up(shape.k, rule.k_multiple)};
}

void launch_padded(const Stage& stage, const GemmProblem& problem, const StageOperands& operands, float* c,
                   cudaStream_t stream) {
    const auto [m, n, k] = problem.shape;
    const GemmShape padded = padded_shape(problem.shape, stage.shape_rule);
    const std::size_t input_bytes = stage.launch_bf16 != nullptr ? sizeof(__nv_bfloat16) : sizeof(float);
    // A's rows are off where K is; B's where K adds rows or N is off; C's where M or N is.
    const bool pad_a = padded.m != m || padded.k != k;
    const bool pad_b = padded.k != k || padded.n != n;
    const std::size_t a_bytes = pad_a ? aligned(input_bytes * padded.m * padded.k) : 0;
    const std::size_t b_bytes = pad_b ? aligned(input_bytes * padded.k * padded.n) : 0;
    const std::size_t c_bytes = aligned(sizeof(float) * padded.m * padded.n);
    static GrowingWorkspace workspace("the padded operands of a shape off a stage's multiples");
    auto* const base = static_cast<std::uint8_t*>(workspace.at_least(a_bytes + b_bytes + c_bytes));
    const bool bf16 = stage.launch_bf16 != nullptr;
    const void* a = bf16 ? static_cast<const void*>(operands.a_bf16) : operands.a;
    const void* b = bf16 ? static_cast<const void*>(operands.b_bf16) : operands.b;
    if (pad_a) {
        copy_padded(base, input_bytes * padded.k, padded.m, a, input_bytes * k, input_bytes * k, m, stream);
        a = base;
    }
    if (pad_b) {
        copy_padded(base + a_bytes, input_bytes * padded.n, padded.k, b, input_bytes * n, input_bytes * n, k, stream);
        b = base + a_bytes;
    }
    float* const padded_c = reinterpret_cast<float*>(base + a_bytes + b_bytes);
    if (problem.beta != 0.0f)  // C is read: its values in, the padding's are dropped below
        CUDA_CHECK(cudaMemcpy2DAsync(padded_c, sizeof(float) * padded.n, c, sizeof(float) * n, sizeof(float) * n, m,
                                     cudaMemcpyDeviceToDevice, stream));
    const GemmProblem padded_problem{padded, problem.alpha, problem.beta};
    if (bf16)
        stage.launch_bf16(padded_problem, static_cast<const __nv_bfloat16*>(a), static_cast<const __nv_bfloat16*>(b),
                          padded_c, stream);
    else
        stage.launch(padded_problem, static_cast<const float*>(a), static_cast<const float*>(b), padded_c, stream);
    CUDA_CHECK(cudaMemcpy2DAsync(c, sizeof(float) * n, padded_c, sizeof(float) * padded.n, sizeof(float) * n, m,
                                 cudaMemcpyDeviceToDevice, stream));
}

}  // namespace sgemm
