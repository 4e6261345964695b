// cuBLAS for the two references: SGEMM at the stages' precision (timed beside every
// stage, and stage 0 itself) and DGEMM for the float64 reference result; and cuBLAS's
// two ways of running FP32 on tensor cores, for the accuracy table (sgemm_accuracy).
//
// cuBLAS is column-major. A row-major M x N matrix is the column-major N x M matrix
// of its transpose, and C = A B  <=>  C^T = B^T A^T, so a row-major GEMM is cuBLAS's
// GEMM with the operands swapped and M and N exchanged.
#pragma once

#include <cublas_v2.h>

#include "kernels/common/gemm_problem.hpp"

namespace sgemm {

class Cublas {
public:
    explicit Cublas(cudaStream_t stream);
    ~Cublas();
    Cublas(const Cublas&) = delete;
    Cublas& operator=(const Cublas&) = delete;

    // C = alpha A B + beta C, row-major, FP32 (no TF32: cuBLAS's default math mode).
    void sgemm(const GemmProblem& problem, const float* a, const float* b, float* c) const;

    // bf16 A and B, FP32 accumulation and FP32 C (cublasGemmEx): the reference of the
    // bf16 stages.
    void gemm_bf16(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                   float* c) const;
    // The same writing (and reading) C in bf16: the reference of sgemm --c-type bf16.
    void gemm_bf16(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                   __nv_bfloat16* c) const;

    // FP32 A, B and C on tensor cores (cublasGemmEx with FP32 data): TF32 (the inputs
    // rounded to TF32, CUBLAS_COMPUTE_32F_FAST_TF32), or FP32 emulated with three bf16
    // parts per value (CUBLAS_COMPUTE_32F_EMULATED_16BFX9, strategy EAGER: emulated
    // wherever the library can).
    enum class TensorCoreFp32 { tf32, bf16x9 };
    void gemm_fp32_on_tensor_cores(const GemmProblem& problem, const float* a, const float* b, float* c,
                                   TensorCoreFp32 path) const;

    // The same in float64.
    void dgemm(const GemmShape& shape, double alpha, const double* a, const double* b, double beta,
               double* c) const;

private:
    void gemm_bf16_into(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, void* c,
                        cudaDataType c_type) const;

    cublasHandle_t handle_ = nullptr;
};

}  // namespace sgemm
