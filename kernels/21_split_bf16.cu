// Stage 21 — FP32 at tensor-core speed: each operand split into three bf16 parts.
//
// Builds on stage 20: its kernel (20_hopper_tuned.cuh) multiplies the parts, with an
// epilogue (UnscalingEpilogue, below) that undoes their scaling as C leaves it. New here:
// the split, its pre-pass and that epilogue.
//
// The idea: most FP32 users cannot take bf16's or TF32's rounding (cuBLAS's TF32 path is
// 7-8x faster than SGEMM on the H100 and 230x less accurate), yet the tensor cores can
// still serve them. Every FP32 value is the exact sum of three bf16 values
// (common/fp32_split.cuh): A = A0 + A1 + A2, B = B0 + B1 + B2, each part about 2^-8 the
// size of the one before. Then
//   A B = A0 B0 + (A0 B1 + A1 B0) + (A0 B2 + A1 B1 + A2 B0) + (terms of 2^-24 and less),
// and the six products kept are bf16 products that the tensor cores compute exactly and
// add in FP32. The dropped terms are each about 2^-24 of |A0 B0|, as large as one FP32
// rounding of a product, but unlike SGEMM's roundings they do not grow with the running
// sum: the error should stay at SGEMM's or below, on wide data as on uniform data.
//
// How: six bf16 GEMMs are one, with K six times as long. A pre-pass writes
// A' = [A2 | A1 | A0 | A1 | A0 | A0] (M x 6K) and B' = [B0; B1; B2; B0; B1; B0] (6K x N),
// each segment K padded to a multiple of 8 with zeros, the smallest products first; then
// stage 20's kernel computes C = alpha A' B' + beta C. The split is timed with it: the
// user hands over FP32 and gets FP32 back. Range: bf16 has FP32's exponents, but A1 and
// A2 of a value below 2^-110 fall among bf16's subnormals and lose bits, so the pre-pass
// scales each row of A and column of B by a power of two (its largest magnitude into
// [2^14, 2^15)), undone on C: every value down to 2^-124 of its row's largest keeps its
// bits. NaN and +-Inf ride on the A0 B0 segment alone, zeros elsewhere: split, they
// would make Inf - Inf = NaN, or meet a zero part of the other operand (Inf 0 = NaN)
// where IEEE gives +-Inf.
//
// Prediction: the GEMM does six times the work of a bf16 one at stage 20's rate (about
// 700 TFLOPS): 1.2 ms at N = 4096, 9.4 ms at 8192; the pre-pass moves 0.54 GB at 4096,
// 2.1 GB at 8192 (0.2 and 0.7 ms): 1.9x cuBLAS SGEMM at 4096 and 2.1x at 8192.
//
// Measured by make results on the H100 80GB HBM3: 104.2 TFLOPS at N = 4096 (2.06x cuBLAS SGEMM),
// 116.6 at 8192 (2.43x).
// Faster than predicted: the long K runs the GEMM near the tensor cores' peak. But the error
// is not SGEMM's (make accuracy): normwise 4.0e-6 at 4096 against 1.15e-6, and
// 1.5-7x SGEMM's on every input kind. It grows as K, where SGEMM's grows as sqrt(K): a
// bias. The tensor cores add each k16 step's products to the accumulator aligned to the
// largest and truncated toward zero: each of the K/16 steps loses up to a unit in the last
// place of the running sum, always the same way. Stage 22 keeps the sum out of them.
//
// Shapes: any M and K; N a multiple of 8 (TMA writes C's rows). Needs sm_90a.
#include "21_split_bf16.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstddef>

#include "20_hopper_tuned.cuh"
#include "common/fp32_split.cuh"
#include "common/gemm_problem.hpp"
#include "common/launch.cuh"
#include "common/operand_scaling.cuh"
#include "common/workspace.cuh"

namespace sgemm {
namespace {

constexpr int kParts = 6;  // products kept, and segments of A' and B'
// Which part of A and of B each segment of A' and B' holds (0 hi, 1 mid, 2 lo): the
// smallest products first.
__constant__ int kAPart[kParts] = {2, 1, 0, 1, 0, 0};
__constant__ int kBPart[kParts] = {0, 1, 2, 0, 1, 0};

// x, scaled by 2^exponent, as the six segments' values. NaN and +-Inf go into the last
// segment alone (hi against hi), zeros elsewhere: split, they would make Inf - Inf = NaN,
// or meet a zero part of the other operand (Inf 0 = NaN) where IEEE gives +-Inf.
struct SegmentValues {
    __nv_bfloat16 value[kParts];
};

__device__ __forceinline__ SegmentValues segment_values(float x, int exponent, const int (&part_of_segment)[kParts]) {
    SegmentValues out;
    if (!isfinite(x)) {
#pragma unroll
        for (int segment = 0; segment < kParts; ++segment)
            out.value[segment] = __float2bfloat16_rn(segment == kParts - 1 ? x : 0.0f);
        return out;
    }
    const Bf16Parts parts = split_into_bf16_parts(times_power_of_two(x, exponent));
#pragma unroll
    for (int segment = 0; segment < kParts; ++segment) {
        const int which = part_of_segment[segment];
        out.value[segment] = which == 0 ? parts.hi : which == 1 ? parts.mid : parts.lo;
    }
    return out;
}

// Each row's scaling exponent, one warp a row.
__global__ void row_exponents_kernel(const float* a, int* row_exponents, int m, int k) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= m) return;
    const MagnitudeRange range = warp_row_range(a + static_cast<std::size_t>(row) * k, k, lane);
    if (lane == 0) row_exponents[row] = scaling_exponent(range.largest);
}

// A (M x K) -> A' (M x 6 padded_k): one thread per element of A padded to padded_k.
__global__ void split_a_kernel(const float* a, const int* row_exponents, __nv_bfloat16* split, int m, int k,
                               int padded_k) {
    const std::size_t count = static_cast<std::size_t>(m) * padded_k;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        const std::size_t row = i / padded_k;
        const int column = static_cast<int>(i % padded_k);
        const SegmentValues values = segment_values(column < k ? a[row * k + column] : 0.0f, row_exponents[row], kAPart);
        __nv_bfloat16* const out = split + row * kParts * padded_k + column;
#pragma unroll
        for (int segment = 0; segment < kParts; ++segment) out[segment * padded_k] = values.value[segment];
    }
}

// Each column's scaling exponent from its range, one thread a column.
__global__ void column_exponents_kernel(ColumnRanges ranges, int* column_exponents, int n) {
    const int column = blockIdx.x * blockDim.x + threadIdx.x;
    if (column < n) column_exponents[column] = scaling_exponent(ranges.of(column).largest);
}

// B (K x N) -> B' (6 padded_k x N): one thread per element of B padded to padded_k rows.
__global__ void split_b_kernel(const float* b, const int* column_exponents, __nv_bfloat16* split, int k, int n,
                               int padded_k) {
    const std::size_t count = static_cast<std::size_t>(padded_k) * n;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        const int row = static_cast<int>(i / n), column = static_cast<int>(i % n);
        const SegmentValues values = segment_values(row < k ? b[i] : 0.0f, column_exponents[column], kBPart);
#pragma unroll
        for (int segment = 0; segment < kParts; ++segment)
            split[(static_cast<std::size_t>(segment) * padded_k) * n + i] = values.value[segment];
    }
}

// Stage 20's epilogue for the scaled parts: each value of C divided by the powers of two
// its row of A and column of B were scaled by (exact, as multiplying by a power of two is,
// unless the result is subnormal).
struct UnscalingEpilogue {
    OperandScaling scaling;

    template <int kMBlocks, int kColumns>
    __device__ void on_accumulators(WarpgroupAccumulators<kMBlocks, kColumns>& acc, const GemmShape& shape,
                                    int first_row, int first_column) const {
        unscale_accumulators<kMBlocks, kColumns>(acc, scaling, shape, first_row, first_column);
    }
    __device__ void on_pair(float (&pair)[2], int row, int column) const {
#pragma unroll
        for (int p = 0; p < 2; ++p)
            pair[p] = ldexpf(pair[p], -(scaling.row_exponents[row] + scaling.column_exponents[column + p]));
    }
};

}  // namespace

void launch_split_bf16(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream) {
    const auto [m, n, k] = problem.shape;
    const int padded_k = ceil_div(k, 8) * 8;
    // A', B', the exponents and B's column ranges (which start at zero), kept between calls.
    static GrowingWorkspace workspace("stage 21's split operands");
    WorkspaceLayout layout;
    const auto a_split_array = layout.add<__nv_bfloat16>(static_cast<std::size_t>(m) * kParts * padded_k);
    const auto b_split_array = layout.add<__nv_bfloat16>(static_cast<std::size_t>(kParts) * padded_k * n);
    const auto row_exponents_array = layout.add<int>(m);
    const auto column_exponents_array = layout.add<int>(n);
    const auto range_words = layout.add<unsigned>(ColumnRanges::kWordsPerColumn * static_cast<std::size_t>(n));
    void* const base = workspace.at_least(layout.bytes());
    __nv_bfloat16* const a_split = a_split_array.in(base);
    __nv_bfloat16* const b_split = b_split_array.in(base);
    int* const row_exponents = row_exponents_array.in(base);
    int* const column_exponents = column_exponents_array.in(base);
    const ColumnRanges ranges{range_words.in(base), n};
    constexpr int kThreads = 256;
    const auto blocks = [](std::size_t count) {  // grid-stride loops: at most 8192 blocks
        return static_cast<int>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 8192));
    };
    cudaMemsetAsync(ranges.words, 0, range_words.count * sizeof(unsigned), stream);
    launch_column_ranges(b, k, n, ranges, stream);
    column_exponents_kernel<<<ceil_div(n, kThreads), kThreads, 0, stream>>>(ranges, column_exponents, n);
    row_exponents_kernel<<<ceil_div(m, kThreads / 32), kThreads, 0, stream>>>(a, row_exponents, m, k);
    split_a_kernel<<<blocks(static_cast<std::size_t>(m) * padded_k), kThreads, 0, stream>>>(a, row_exponents, a_split,
                                                                                          m, k, padded_k);
    split_b_kernel<<<blocks(static_cast<std::size_t>(padded_k) * n), kThreads, 0, stream>>>(
        b, column_exponents, b_split, k, n, padded_k);
    const GemmProblem split_problem{GemmShape{m, n, kParts * padded_k}, problem.alpha, problem.beta};
    launch_in_tuned_tiles(split_problem, a_split, b_split, c, stream,
                          UnscalingEpilogue{OperandScaling{row_exponents, column_exponents}});
}

}  // namespace sgemm
