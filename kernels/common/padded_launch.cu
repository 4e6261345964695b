// Any shape through padded copies: see padded_launch.cuh.
#include "common/padded_launch.cuh"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/workspace.cuh"

namespace sgemm {
namespace {

int round_up(int value, int multiple) { return (value + multiple - 1) / multiple * multiple; }

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
        throw std::runtime_error(std::string("padded launch: ") + what + ": " + cudaGetErrorString(status));
}

// `rows` x `row_bytes` (rows `source_pitch` bytes apart) into a buffer of `padded_rows` rows
// `padded_pitch` bytes apart, the padding zeroed: its columns past `row_bytes`, its rows past `rows`.
void copy_padded(void* padded, std::size_t padded_pitch, int padded_rows, const void* source, std::size_t source_pitch,
                 std::size_t row_bytes, int rows, cudaStream_t stream) {
    auto* const bytes = static_cast<std::uint8_t*>(padded);
    check(cudaMemcpy2DAsync(bytes, padded_pitch, source, source_pitch, row_bytes, rows, cudaMemcpyDeviceToDevice,
                            stream),
          "copying an operand");
    if (padded_pitch > row_bytes)
        check(cudaMemset2DAsync(bytes + row_bytes, padded_pitch, 0, padded_pitch - row_bytes, rows, stream),
              "zeroing the padded columns");
    if (padded_rows > rows)
        check(cudaMemsetAsync(bytes + rows * padded_pitch, 0, (padded_rows - rows) * padded_pitch, stream),
              "zeroing the padded rows");
}

template <class Input>
void launch_padded_as(const GemmProblem& problem, const Input* a, const Input* b, float* c, cudaStream_t stream,
                      const GemmShape& multiples,
                      void (*launch)(const GemmProblem&, const Input*, const Input*, float*, cudaStream_t)) {
    const auto [m, n, k] = problem.shape;
    const GemmShape padded = padded_shape(problem.shape, multiples);
    constexpr std::size_t input_bytes = sizeof(Input);
    // A's rows are off where K is; B's where K adds rows or N is off; C's where M or N is.
    const bool pad_a = padded.m != m || padded.k != k;
    const bool pad_b = padded.k != k || padded.n != n;
    const bool pad_c = padded.m != m || padded.n != n;
    static GrowingWorkspace workspace("the padded operands of a shape off a launcher's multiples");
    WorkspaceLayout layout;
    const auto padded_a = layout.add<Input>(pad_a ? static_cast<std::size_t>(padded.m) * padded.k : 0);
    const auto padded_b = layout.add<Input>(pad_b ? static_cast<std::size_t>(padded.k) * padded.n : 0);
    const auto padded_c_array = layout.add<float>(pad_c ? static_cast<std::size_t>(padded.m) * padded.n : 0);
    void* const base = workspace.at_least(layout.bytes());
    if (pad_a) {
        copy_padded(padded_a.in(base), input_bytes * padded.k, padded.m, a, input_bytes * k, input_bytes * k, m, stream);
        a = padded_a.in(base);
    }
    if (pad_b) {
        copy_padded(padded_b.in(base), input_bytes * padded.n, padded.k, b, input_bytes * n, input_bytes * n, k, stream);
        b = padded_b.in(base);
    }
    if (!pad_c) return launch(GemmProblem{padded, problem.alpha, problem.beta}, a, b, c, stream);
    float* const padded_c = padded_c_array.in(base);
    if (problem.beta != 0.0f)  // C is read: its values in, the padding's are dropped below
        check(cudaMemcpy2DAsync(padded_c, sizeof(float) * padded.n, c, sizeof(float) * n, sizeof(float) * n, m,
                                cudaMemcpyDeviceToDevice, stream),
              "copying C in");
    launch(GemmProblem{padded, problem.alpha, problem.beta}, a, b, padded_c, stream);
    check(cudaMemcpy2DAsync(c, sizeof(float) * n, padded_c, sizeof(float) * padded.n, sizeof(float) * n, m,
                            cudaMemcpyDeviceToDevice, stream),
          "copying C out");
}

}  // namespace

bool takes_as_is(const GemmShape& shape, const GemmShape& multiples) {
    return shape.m % multiples.m == 0 && shape.n % multiples.n == 0 && shape.k % multiples.k == 0;
}

GemmShape padded_shape(const GemmShape& shape, const GemmShape& multiples) {
    return GemmShape{round_up(shape.m, multiples.m), round_up(shape.n, multiples.n), round_up(shape.k, multiples.k)};
}

void launch_padded(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream,
                   const GemmShape& multiples, Fp32Launcher launch) {
    launch_padded_as(problem, a, b, c, stream, multiples, launch);
}

void launch_padded(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                   cudaStream_t stream, const GemmShape& multiples, Bf16Launcher launch) {
    launch_padded_as(problem, a, b, c, stream, multiples, launch);
}

}  // namespace sgemm
