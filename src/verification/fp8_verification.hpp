// One checked FP8 run: the stage and cuBLASLt each compute D once from the same quantized
// inputs, and both are compared with the float64 reference of the dequantized operands
// (cuBLAS DGEMM on the device), within the budget the stage claims (fp8_error_budget, or
// 2^-13 over all of K for a stage that keeps its sums in the MMA).
#pragma once

#include <functional>

#include "gpu/cublas_gemm.hpp"
#include "verification/fp8_inputs.hpp"
#include "verification/verification.hpp"

namespace sgemm {

// Enqueues D = alpha A B^T + beta C on the run's stream into `d`: the stage's row-major,
// cuBLASLt's column-major.
using Fp8Launch = std::function<void(__nv_bfloat16* d)>;

Verification verify_fp8(const GemmProblem& problem, const Fp8Inputs& inputs, const ErrorBudget& budget,
                        const Fp8Launch& launch_stage, const Fp8Launch& launch_cublaslt, const Cublas& cublas,
                        cudaStream_t stream);

// What the quantization itself costs, apart from any kernel: the float64 product of the
// dequantized operands against the float64 product of the FP32 values they were quantized
// from (alpha A B^T + beta C both), normwise and as the worst element over the magnitude the
// FP32 inputs' dot product carried; over the elements finite in both.
struct QuantizationError {
    double normwise = 0.0;
    double worst_over_magnitude = 0.0;
};
QuantizationError fp8_quantization_error(const GemmProblem& problem, const Fp8Inputs& inputs, const Cublas& cublas,
                                         cudaStream_t stream);

}  // namespace sgemm
