#include "gpu/cublas_gemm.hpp"

#include "gpu/cuda_check.hpp"

namespace sgemm {

Cublas::Cublas(cudaStream_t stream) {
    CUBLAS_CHECK(cublasCreate(&handle_));
    CUBLAS_CHECK(cublasSetStream(handle_, stream));
}

Cublas::~Cublas() { cublasDestroy(handle_); }

void Cublas::sgemm(const GemmProblem& problem, const float* a, const float* b, float* c) const {
    const auto [m, n, k] = problem.shape;
    CUBLAS_CHECK(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &problem.alpha, b, n, a, k,
                             &problem.beta, c, n));
}

void Cublas::gemm_bf16_into(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, void* c,
                            cudaDataType c_type) const {
    const auto [m, n, k] = problem.shape;
    CUBLAS_CHECK(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &problem.alpha, b,
                              CUDA_R_16BF, n, a, CUDA_R_16BF, k, &problem.beta, c, c_type, n,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void Cublas::gemm_bf16(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                       float* c) const {
    gemm_bf16_into(problem, a, b, c, CUDA_R_32F);
}

void Cublas::gemm_bf16(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                       __nv_bfloat16* c) const {
    gemm_bf16_into(problem, a, b, c, CUDA_R_16BF);
}

void Cublas::gemm_fp32_on_tensor_cores(const GemmProblem& problem, const float* a, const float* b, float* c,
                                       TensorCoreFp32 path) const {
    const auto [m, n, k] = problem.shape;
    const cublasComputeType_t compute =
        path == TensorCoreFp32::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
    if (path == TensorCoreFp32::bf16x9)
        CUBLAS_CHECK(cublasSetEmulationStrategy(handle_, CUBLAS_EMULATION_STRATEGY_EAGER));
    CUBLAS_CHECK(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &problem.alpha, b, CUDA_R_32F, n, a,
                              CUDA_R_32F, k, &problem.beta, c, CUDA_R_32F, n, compute, CUBLAS_GEMM_DEFAULT));
}

void Cublas::dgemm(const GemmShape& shape, double alpha, const double* a, const double* b,
                   double beta, double* c) const {
    const auto [m, n, k] = shape;
    CUBLAS_CHECK(
        cublasDgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, n, a, k, &beta, c, n));
}

}  // namespace sgemm
