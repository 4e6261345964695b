// The FP8 problem at any N and K through padded copies: see fp8_padded_launch.cuh.
#include "common/fp8_padded_launch.cuh"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/padded_launch.cuh"
#include "common/workspace.cuh"

namespace sgemm {
namespace {

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
        throw std::runtime_error(std::string("FP8 padded launch: ") + what + ": " + cudaGetErrorString(status));
}

// `rows` rows of `row_bytes` (`source_pitch` apart) into a zeroed buffer of `padded_rows` rows
// `padded_pitch` apart.
void copy_into_zeros(void* padded, std::size_t padded_pitch, int padded_rows, const void* source,
                     std::size_t source_pitch, std::size_t row_bytes, int rows, cudaStream_t stream) {
    check(cudaMemsetAsync(padded, 0, padded_pitch * padded_rows, stream), "zeroing a padded copy");
    check(cudaMemcpy2DAsync(padded, padded_pitch, source, source_pitch, row_bytes, rows, cudaMemcpyDeviceToDevice,
                            stream),
          "copying into a padded copy");
}

}  // namespace

void launch_fp8_padded(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                       __nv_bfloat16* d, cudaStream_t stream, Fp8Launcher launch) {
    const auto [m, n, k] = problem.shape;
    const GemmShape padded = padded_shape(problem.shape, kFp8TmaMultiples);
    const bool pad_k = padded.k != k, pad_n = padded.n != n;
    // B's 1 x 128 scales lie [K block][B's rows rounded up to 4] (fp8_problem.hpp).
    const int scale_stride = (n + 3) / 4 * 4, k_blocks = (k + kFp8ScaleBlock - 1) / kFp8ScaleBlock;
    const bool pad_b_scales = scaling == Fp8Scaling::rows_and_rows && scale_stride != padded.n;
    static GrowingWorkspace workspace("the padded operands of an FP8 problem off N % 8 or K % 16");
    WorkspaceLayout layout;
    const auto padded_a = layout.add<std::uint8_t>(pad_k ? static_cast<std::size_t>(m) * padded.k : 0);
    const auto padded_b = layout.add<std::uint8_t>(pad_k || pad_n ? static_cast<std::size_t>(padded.n) * padded.k : 0);
    const auto padded_b_scales = layout.add<float>(pad_b_scales ? static_cast<std::size_t>(k_blocks) * padded.n : 0);
    const auto padded_d_array = layout.add<__nv_bfloat16>(pad_n ? static_cast<std::size_t>(m) * padded.n : 0);
    void* const base = workspace.at_least(layout.bytes());
    Fp8Operands on = operands;
    if (pad_k) {
        copy_into_zeros(padded_a.in(base), padded.k, m, operands.a, k, k, m, stream);
        on.a = padded_a.in(base);
    }
    if (pad_k || pad_n) {
        copy_into_zeros(padded_b.in(base), padded.k, padded.n, operands.b, k, k, n, stream);
        on.b = padded_b.in(base);
    }
    if (pad_b_scales) {
        copy_into_zeros(padded_b_scales.in(base), sizeof(float) * padded.n, k_blocks, operands.b_scales,
                        sizeof(float) * scale_stride, sizeof(float) * scale_stride, k_blocks, stream);
        on.b_scales = padded_b_scales.in(base);
    }
    const GemmProblem padded_problem{padded, problem.alpha, problem.beta};
    if (!pad_n) return launch(padded_problem, scaling, on, d, stream);
    __nv_bfloat16* const padded_d = padded_d_array.in(base);
    constexpr std::size_t kValue = sizeof(__nv_bfloat16);
    if (problem.beta != 0.0f)  // D is read as C: its values in; the padding's are dropped below
        check(cudaMemcpy2DAsync(padded_d, kValue * padded.n, d, kValue * n, kValue * n, m, cudaMemcpyDeviceToDevice,
                                stream),
              "copying D in");
    launch(padded_problem, scaling, on, padded_d, stream);
    check(cudaMemcpy2DAsync(d, kValue * n, padded_d, kValue * padded.n, kValue * n, m, cudaMemcpyDeviceToDevice, stream),
          "copying D out");
}

}  // namespace sgemm
