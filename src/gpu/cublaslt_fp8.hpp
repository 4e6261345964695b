// cuBLASLt's FP8 GEMM, the FP8 track's reference (as cuBLAS is the others'): D = alpha *
// A * B^T + beta * D, A (M x K) and B (N x K) e4m3 and K-major with FP32 scales in the blocks
// of verification/fp8_operands.hpp, FP32 accumulation (the partial sums promoted: cuBLASLt's
// default; `promote` false asks for CUBLASLT_MATMUL_DESC_FAST_ACCUM, which does not promote,
// with one scale a tensor only), D bf16.
//
// cuBLASLt is column-major, and takes 8-bit operands only as "TN": its A transposed (our A,
// M x K row-major, is its K x M) and its B not (our B, N x K row-major, is its K x N). NVIDIA's
// cuBLASLt sample of the recipe's scales (LtBlk128x128Fp8Matmul) puts the 1 x 128 ones on its A
// and the 128 x 128 ones on its B, as our A and B have them; so A stays A here, and D comes
// out column-major: element (i, j) at j L + i, L = cublaslt_d_rows(M) (the same work as row-major; a caller reads it
// so). The other assignment was not tried with the scale pointers set.
#pragma once

#include <cublasLt.h>
#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>

#include "gpu/device_buffer.hpp"
#include "verification/fp8_operands.hpp"

namespace sgemm {

class CublasLtFp8 {
public:
    // For operands that lie on the device at these addresses (the scales laid out by
    // cublaslt_scales()): cuBLASLt chooses its kernel for block scales only once it has them.
    // Where M is not a multiple of 16, A and its scales are copied here once, padded with
    // zero rows to cublaslt_d_rows(M).
    // With B's 1 x 128 scales and N off 8 cuBLASLt offers no kernel (seen on an H200, cuBLASLt
    // 13.1): there it multiplies columns_for(N) columns, B's rows and scales padded by the
    // caller (zero rows, the scales' rows that many long), D through a buffer of its own.
    CublasLtFp8(int m, int n, int k, Fp8Scaling scaling, const std::uint8_t* a, const float* a_scales,
                const float* b_scales, bool promote = true);
    static int columns_for(int n, Fp8Scaling scaling) {
        return scaling == Fp8Scaling::rows_and_rows ? (n + 7) / 8 * 8 : n;
    }
    ~CublasLtFp8();
    CublasLtFp8(const CublasLtFp8&) = delete;
    CublasLtFp8& operator=(const CublasLtFp8&) = delete;

    // D = alpha A B^T + beta D for the A given at construction: D (and C, where beta is not
    // 0) column-major, each column cublaslt_d_rows(M) long.
    void run(const std::uint8_t* b, __nv_bfloat16* d, float alpha, float beta, cudaStream_t stream) const;

private:
    cublasLtHandle_t handle_ = nullptr;
    cublasLtMatmulDesc_t operation_ = nullptr;
    cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
    cublasLtMatmulHeuristicResult_t heuristic_{};
    DeviceBuffer<std::byte> workspace_;
    DeviceBuffer<std::uint8_t> padded_a_;  // where M is not a multiple of 16
    DeviceBuffer<float> padded_a_scales_;
    DeviceBuffer<__nv_bfloat16> padded_d_;  // where columns_for(N) is not N
    std::size_t d_values_ = 0;              // D's: cublaslt_d_rows(M) x N
    const std::uint8_t* a_;
};

}  // namespace sgemm
