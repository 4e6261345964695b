// The FP8 problem at any N and K through padded copies: see fp8_padded_launch.cuh.
#include "common/fp8_padded_launch.cuh"

#include <algorithm>
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

// Rows of `padded` (`padded_rows` of them, `padded_pitch` bytes apart) from the rows of
// `source` (`rows` of them, `source_pitch` bytes apart, their first `row_bytes` bytes), zeros
// past them: one pass, a thread a Word of `padded`, its bytes read one by one (the source's
// rows start on any byte; a warp's loads fall in the same lines): each padded byte written
// once, where cudaMemset and then cudaMemcpy2D wrote the copied ones twice.
template <class Word>
__global__ void copy_rows_padded(std::uint8_t* padded, std::size_t padded_pitch, std::size_t padded_rows,
                                 const std::uint8_t* source, std::size_t source_pitch, std::size_t row_bytes,
                                 std::size_t rows) {
    const std::size_t words_a_row = padded_pitch / sizeof(Word), words = words_a_row * padded_rows;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < words;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t row = i / words_a_row, column = i % words_a_row * sizeof(Word);
        Word word = 0;
        if (row < rows)
            for (std::size_t byte = 0; byte < sizeof(Word) && column + byte < row_bytes; ++byte)
                word |= static_cast<Word>(__ldg(source + row * source_pitch + column + byte)) << (8 * byte);
        reinterpret_cast<Word*>(padded + row * padded_pitch)[column / sizeof(Word)] = word;
    }
}

// Enqueues copy_rows_padded in words of 4 bytes where the padded rows are 4-byte aligned, else 2.
void copy_rows(void* padded, std::size_t padded_pitch, std::size_t padded_rows, const void* source,
               std::size_t source_pitch, std::size_t row_bytes, std::size_t rows, cudaStream_t stream) {
    constexpr int kThreads = 256, kMostBlocks = 132 * 16;
    const bool four = padded_pitch % 4 == 0 && reinterpret_cast<std::uintptr_t>(padded) % 4 == 0;
    const std::size_t words = padded_pitch * padded_rows / (four ? 4 : 2);
    const int blocks = static_cast<int>(std::min<std::size_t>((words + kThreads - 1) / kThreads, kMostBlocks));
    if (blocks == 0) return;
    auto* to = static_cast<std::uint8_t*>(padded);
    const auto* from = static_cast<const std::uint8_t*>(source);
    if (four)
        copy_rows_padded<std::uint32_t>
            <<<blocks, kThreads, 0, stream>>>(to, padded_pitch, padded_rows, from, source_pitch, row_bytes, rows);
    else
        copy_rows_padded<std::uint16_t>
            <<<blocks, kThreads, 0, stream>>>(to, padded_pitch, padded_rows, from, source_pitch, row_bytes, rows);
    check(cudaGetLastError(), "copying rows");
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
        copy_rows(padded_a.in(base), padded.k, m, operands.a, k, k, m, stream);
        on.a = padded_a.in(base);
    }
    if (pad_k || pad_n) {
        copy_rows(padded_b.in(base), padded.k, padded.n, operands.b, k, k, n, stream);
        on.b = padded_b.in(base);
    }
    if (pad_b_scales) {
        copy_rows(padded_b_scales.in(base), sizeof(float) * padded.n, k_blocks, operands.b_scales,
                  sizeof(float) * scale_stride, sizeof(float) * scale_stride, k_blocks, stream);
        on.b_scales = padded_b_scales.in(base);
    }
    const GemmProblem padded_problem{padded, problem.alpha, problem.beta};
    if (!pad_n) return launch(padded_problem, scaling, on, d, stream);
    __nv_bfloat16* const padded_d = padded_d_array.in(base);
    constexpr std::size_t kValue = sizeof(__nv_bfloat16);
    if (problem.beta != 0.0f)  // D is read as C: its values in; the padding's are dropped below
        copy_rows(padded_d, kValue * padded.n, m, d, kValue * n, kValue * n, m, stream);
    launch(padded_problem, scaling, on, padded_d, stream);
    copy_rows(d, kValue * n, m, padded_d, kValue * padded.n, kValue * n, m, stream);
}

}  // namespace sgemm
