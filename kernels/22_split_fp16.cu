// Stage 22 — FP32 at tensor-core speed, accurately: two fp16 parts, sums in registers.
//
// The idea: stage 21 lost to SGEMM in accuracy not through its split but through the
// tensor cores' adds, which truncate against the running sum. Two changes:
//
// The sums leave the tensor cores. Every two K tiles (128 values of K) the wgmmas start a
// fresh partial tile, and once they are done the consumer adds it to its FP32 registers
// with ordinary adds, which round to nearest (Accumulation::kInRegisters in
// 17_warp_specialized.cuh). The truncation now acts on a partial sum of 128 products and
// its error changes sign with the partial's; the adds are one every 128 products, not
// SGEMM's one a product. The cost: a partial tile beside the sums, so 128x128 block tiles
// (64 + 64 registers a consumer thread; 128x256 tiles would need 256), and a drain of
// each consumer's wgmmas every two K tiles, which the other consumer's wgmmas cover.
//
// Fewer products. fp16 has 11 significant bits to bf16's 8, so two parts carry 22 bits:
// x = hi + lo + r with |r| <= 2^-22 |x| (common/fp32_split.cuh), and
//   A B = Ahi Bhi + (Ahi Blo + Alo Bhi) + Alo Blo + (the parts' remainders),
// of which the three products kept are one fp16 GEMM with K three times as long:
// A' = [Alo | Ahi | Ahi], B' = [Bhi; Blo; Bhi], smallest first. The terms dropped, Alo Blo
// and the remainders, are each at most 2^-22 of |A B|, a few FP32 roundings of one
// product, random in sign: they do not grow with the sum, as SGEMM's roundings of the
// running sum do. The products of fp16 values are exact in FP32 (22 bits).
//
// Range: fp16 spans 2^-24 to 65504, FP32 2^-149 to 2^128. A pre-pass scales each row of
// A and each column of B by the power of two that brings its largest magnitude into
// [2^14, 2^15) (exact), and the epilogue undoes it (unscale_accumulators) before alpha
// and beta. Underflow: a value within 2^-17 of its row's (or column's) largest keeps 22
// bits; below, lo falls among fp16's subnormals and the value keeps an absolute error of
// at most 2^-39 of that largest; below about 2^-39 of it, hi and lo are both zero. Wide
// data spans 2^20 and is wholly inside. A row holding 1 and 1e-13 loses the small
// value's low bits, which matters only if B makes its products the large ones. Stage 21,
// with bf16's FP32 range, had no such limit above 2^-110.
//
// Prediction: a third of stage 21's tensor work, at 85 % of its rate on the smaller
// tiles, plus a heavier pre-pass (maxima, then the split): 3.5x SGEMM at 4096; normwise
// error about 2e-7, a sixth of SGEMM's.
//
// Measured on the H100 (make results, make accuracy): 148.5 TFLOPS at N = 4096, 289 % of
// cuBLAS SGEMM (269 % in turns), 165.3 at 8192, 337 % (304 % in turns). Normwise error
// 2.2e-7 at 4096 and 2.4e-7 at 8192 against SGEMM's 1.15e-6 and 1.6e-6, worst element
// 4.3e-8 and 4.1e-8 against 3.6e-7 and 4.1e-7; wide data: 2.3e-7 and 2.6e-7 against
// 9.8e-7 and 1.4e-6, worst element 2.1e-7 and 2.3e-7 against 1.6e-6 and 1.7e-6
// (results/h100-80gb-hbm3/accuracy.md). Slower than predicted, on both counts (ncu, at
// its fixed clock): the pre-pass is 16 % of the time at 4096 (9 % at 8192), and the GEMM
// reaches 62 % of the tensor cores' peak where stage 21's reached 96 %. The drains are
// not most of that (partials of 8 K tiles gained 3 %): more likely the 128x128 tiles,
// which load 1.5x stage 21's bytes per product. Adding after every K tile gave 1.9e-7
// and was 5 % slower; every 4, 3.5e-7 and 1-4 % faster. Eight values a thread in the
// split, and A's row maxima taken in the same pass, gained 3-7 %
// (docs/notes/22_split_fp16.md). Next: ping-pong consumers that drain by turns, and
// a split that reads A once.
//
// Shapes: any M and K; N a multiple of 8 (TMA writes C's rows). Needs sm_90a.
#include <cuda_fp16.h>

#include <algorithm>
#include <cstddef>

#include "17_warp_specialized.cuh"
#include "common/fp32_split.cuh"
#include "common/vector_access.cuh"
#include "common/workspace.cuh"

namespace sgemm {
namespace {

constexpr int kSegments = 3;  // products kept, and segments of A' and B'

// Eight consecutive values as hi and lo parts, each stored as one 16-byte vector.
struct EightSplitValues {
    alignas(16) __half hi[8];
    alignas(16) __half lo[8];
};

__device__ __forceinline__ EightSplitValues split_eight(const float (&values)[8], const int (&exponents)[8]) {
    EightSplitValues out;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const F16Parts parts = split_into_f16_parts(ldexpf(values[i], exponents[i]));
        out.hi[i] = parts.hi;
        out.lo[i] = parts.lo;
    }
    return out;
}

__device__ __forceinline__ void store_eight(__half* address, const __half (&values)[8]) {
    *reinterpret_cast<uint4*>(address) = *reinterpret_cast<const uint4*>(values);
}

// A (M x K) -> A' = [lo | hi | hi] (M x 3 padded_k), one warp a row: the row's largest
// magnitude first, as its scaling exponent (kept for the epilogue), then the row scaled
// and split, eight values a lane (two 16-byte loads where K is a multiple of 8).
__global__ void split_a_kernel(const float* a, int* row_exponents, __half* split, int m, int k, int padded_k) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= m) return;
    const float* const values = a + static_cast<std::size_t>(row) * k;
    float largest = 0.0f;
    for (int column = lane; column < k; column += 32) largest = fmaxf(largest, fabsf(values[column]));
    for (int offset = 16; offset > 0; offset /= 2)
        largest = fmaxf(largest, __shfl_xor_sync(0xffffffffu, largest, offset));
    const int exponent = f16_scaling_exponent(largest);
    if (lane == 0) row_exponents[row] = exponent;
    int exponents[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) exponents[i] = exponent;
    __half* const out = split + static_cast<std::size_t>(row) * kSegments * padded_k;
    for (int column = 8 * lane; column < padded_k; column += 8 * 32) {
        float eight[8];
        if (k % 8 == 0) {
            const float4 first = load_float4(values + column), second = load_float4(values + column + 4);
            eight[0] = first.x, eight[1] = first.y, eight[2] = first.z, eight[3] = first.w;
            eight[4] = second.x, eight[5] = second.y, eight[6] = second.z, eight[7] = second.w;
        } else {
#pragma unroll
            for (int i = 0; i < 8; ++i) eight[i] = column + i < k ? values[column + i] : 0.0f;
        }
        const EightSplitValues parts = split_eight(eight, exponents);
        store_eight(out + column, parts.lo);
        store_eight(out + padded_k + column, parts.hi);
        store_eight(out + 2 * padded_k + column, parts.hi);
    }
}

// The largest magnitude of each column of B (K x N): a block takes 32 columns (one a lane)
// and kRowsPerBlock rows, and raises each column's running maximum (as bits, which order
// as non-negative floats do; zero before the first block) to its own.
constexpr int kRowsPerBlock = 256;

__global__ void split_column_maxima_kernel(const float* b, int k, int n, unsigned* column_maxima) {
    __shared__ float warp_largest[8][32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;  // 8 warps
    const int column = blockIdx.x * 32 + lane;
    const int first_row = blockIdx.y * kRowsPerBlock, last_row = std::min(k, first_row + kRowsPerBlock);
    float largest = 0.0f;
    if (column < n)
        for (int row = first_row + warp; row < last_row; row += 8)
            largest = fmaxf(largest, fabsf(b[static_cast<std::size_t>(row) * n + column]));
    warp_largest[warp][lane] = largest;
    __syncthreads();
    if (warp == 0 && column < n) {
        for (int w = 1; w < 8; ++w) largest = fmaxf(largest, warp_largest[w][lane]);
        atomicMax(&column_maxima[column], __float_as_uint(largest));
    }
}

// B (K x N) -> B' = [hi; lo; hi] (3 padded_k x N), eight values of a row a thread (N is
// a multiple of 8), each column scaled by its exponent, which the threads of row 0 also
// write out for the epilogue.
__global__ void split_b_kernel(const float* b, const unsigned* column_maxima, int* column_exponents, __half* split,
                               int k, int n, int padded_k) {
    const std::size_t count = static_cast<std::size_t>(padded_k) * n / 8;
    const std::size_t segment = static_cast<std::size_t>(padded_k) * n;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        const std::size_t first = 8 * i;  // of B and of each segment of B'
        const int row = static_cast<int>(first / n), column = static_cast<int>(first % n);
        int exponents[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) exponents[j] = f16_scaling_exponent(__uint_as_float(column_maxima[column + j]));
        if (row == 0)
#pragma unroll
            for (int j = 0; j < 8; ++j) column_exponents[column + j] = exponents[j];
        float eight[8] = {};
        if (row < k) {
            const float4 low = load_float4(b + first), high = load_float4(b + first + 4);
            eight[0] = low.x, eight[1] = low.y, eight[2] = low.z, eight[3] = low.w;
            eight[4] = high.x, eight[5] = high.y, eight[6] = high.z, eight[7] = high.w;
        }
        const EightSplitValues parts = split_eight(eight, exponents);
        store_eight(split + first, parts.hi);
        store_eight(split + segment + first, parts.lo);
        store_eight(split + 2 * segment + first, parts.hi);
    }
}

// 128x128 tiles (the partial tile and acc take 128 registers a consumer thread; 128x256
// would take 256), the products of two K tiles added into registers at a time.
using SplitF16Config = WarpSpecializedConfig<128, 128, 5, 2, CStores::kThroughTma, Schedule::kPersistent, __half,
                                             Accumulation::kInRegisters, 2>;
constexpr int kSplitF16GroupRows = 8;

}  // namespace

void launch_split_fp16(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream) {
    const auto [m, n, k] = problem.shape;
    const int padded_k = ceil_div(k, 8) * 8;
    const std::size_t a_values = static_cast<std::size_t>(m) * kSegments * padded_k;
    const std::size_t b_values = static_cast<std::size_t>(kSegments) * padded_k * n;
    // A', B' and the exponents, kept between calls.
    static GrowingWorkspace workspace("stage 22's split operands");
    const std::size_t exponents = static_cast<std::size_t>(m) + 2 * n;  // rows, columns, column maxima
    auto* const a_split =
        static_cast<__half*>(workspace.at_least((a_values + b_values) * sizeof(__half) + exponents * sizeof(int)));
    auto* const b_split = a_split + a_values;
    auto* const row_exponents = reinterpret_cast<int*>(b_split + b_values);
    auto* const column_exponents = row_exponents + m;
    auto* const column_maxima = reinterpret_cast<unsigned*>(column_exponents + n);

    constexpr int kThreads = 256;
    const auto blocks = [](std::size_t count) {  // grid-stride loops: at most 8192 blocks
        return static_cast<int>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 8192));
    };
    cudaMemsetAsync(column_maxima, 0, static_cast<std::size_t>(n) * sizeof(unsigned), stream);
    split_column_maxima_kernel<<<dim3(ceil_div(n, 32), ceil_div(k, kRowsPerBlock)), kThreads, 0, stream>>>(b, k, n,
                                                                                                     column_maxima);
    split_a_kernel<<<ceil_div(m, kThreads / 32), kThreads, 0, stream>>>(a, row_exponents, a_split, m, k, padded_k);
    split_b_kernel<<<blocks(static_cast<std::size_t>(padded_k) * n / 8), kThreads, 0, stream>>>(
        b, column_maxima, column_exponents, b_split, k, n, padded_k);
    const GemmProblem split_problem{GemmShape{m, n, kSegments * padded_k}, problem.alpha, problem.beta};
    const OperandScaling scaling{row_exponents, column_exponents};
    launch_warp_specialized_kernel<SplitF16Config>(split_problem, a_split, b_split, c, kSplitF16GroupRows, stream,
                                                   scaling);
}

}  // namespace sgemm
