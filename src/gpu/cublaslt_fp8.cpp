#include "gpu/cublaslt_fp8.hpp"

#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"

namespace sgemm {
namespace {

cublasLtMatmulMatrixScale_t scale_mode(Fp8Block block) {
    switch (block) {
        case Fp8Block::tensor:
            return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
        case Fp8Block::row_128:
            return CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
        case Fp8Block::block_128x128:
            return CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    }
    return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
}

template <class T>
void set_attribute(cublasLtMatmulDesc_t operation, cublasLtMatmulDescAttributes_t attribute, const T& value) {
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(operation, attribute, &value, sizeof(value)));
}

constexpr std::size_t kWorkspaceBytes = 32u << 20;

}  // namespace

CublasLtFp8::CublasLtFp8(int m, int n, int k, Fp8Scaling scaling, const std::uint8_t* a, const float* a_scales,
                         const float* b_scales, bool promote)
    : workspace_(kWorkspaceBytes), a_(a) {
    const int rows = cublaslt_d_rows(m), columns = columns_for(n, scaling);
    d_values_ = static_cast<std::size_t>(rows) * n;
    if (columns != n) padded_d_ = DeviceBuffer<__nv_bfloat16>(static_cast<std::size_t>(rows) * columns);
    if (rows != m) {
        // A's rows, then zeros; 1 x 128 scales keep their blocks of K, each `rows` long.
        CUDA_CHECK(cudaDeviceSynchronize());  // the operands are written on the caller's stream
        padded_a_ = DeviceBuffer<std::uint8_t>(static_cast<std::size_t>(rows) * k);
        CUDA_CHECK(cudaMemset(padded_a_.data(), 0, padded_a_.bytes()));
        CUDA_CHECK(cudaMemcpy(padded_a_.data(), a, static_cast<std::size_t>(m) * k, cudaMemcpyDeviceToDevice));
        a_ = padded_a_.data();
        if (a_block(scaling) == Fp8Block::row_128) {
            const std::size_t blocks = (k + 127) / 128, stride = cublaslt_scales_stride(m);
            padded_a_scales_ = DeviceBuffer<float>(blocks * rows);
            CUDA_CHECK(cudaMemset(padded_a_scales_.data(), 0, padded_a_scales_.bytes()));
            CUDA_CHECK(cudaMemcpy2D(padded_a_scales_.data(), rows * sizeof(float), a_scales, stride * sizeof(float),
                                    stride * sizeof(float), blocks, cudaMemcpyDeviceToDevice));
            a_scales = padded_a_scales_.data();
        }
    }
    CUBLAS_CHECK(cublasLtCreate(&handle_));
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&operation_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    set_attribute(operation_, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
    set_attribute(operation_, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
    set_attribute(operation_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, static_cast<std::int8_t>(promote ? 0 : 1));
    set_attribute(operation_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, scale_mode(a_block(scaling)));
    set_attribute(operation_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, scale_mode(b_block(scaling)));
    set_attribute(operation_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, a_scales);
    set_attribute(operation_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, b_scales);
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_layout_, CUDA_R_8F_E4M3, k, rows, k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_layout_, CUDA_R_8F_E4M3, k, columns, k));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_layout_, CUDA_R_16BF, rows, columns, rows));
    cublasLtMatmulPreference_t preference = nullptr;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    const std::size_t workspace_bytes = workspace_.bytes();
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &workspace_bytes, sizeof(workspace_bytes)));
    int found = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle_, operation_, a_layout_, b_layout_, d_layout_,
                                                                 d_layout_, preference, 1, &heuristic_, &found);
    cublasLtMatmulPreferenceDestroy(preference);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && found == 0))
        throw std::runtime_error("cuBLASLt offers no FP8 GEMM of M=" + std::to_string(m) + " N=" + std::to_string(n) +
                                 " K=" + std::to_string(k) + " with scaling " + std::string(to_string(scaling)) +
                                 (promote ? "" : " and fast accumulation") + ", the reference this run is timed against");
    CUBLAS_CHECK(status);
}

CublasLtFp8::~CublasLtFp8() {
    if (d_layout_ != nullptr) cublasLtMatrixLayoutDestroy(d_layout_);
    if (b_layout_ != nullptr) cublasLtMatrixLayoutDestroy(b_layout_);
    if (a_layout_ != nullptr) cublasLtMatrixLayoutDestroy(a_layout_);
    if (operation_ != nullptr) cublasLtMatmulDescDestroy(operation_);
    if (handle_ != nullptr) cublasLtDestroy(handle_);
}

void CublasLtFp8::run(const std::uint8_t* b, __nv_bfloat16* d, float alpha, float beta, cudaStream_t stream) const {
    // Column-major, D's N columns are the first of the padded buffer's: one copy each way.
    __nv_bfloat16* const out = padded_d_.size() > 0 ? padded_d_.data() : d;
    if (out != d && beta != 0.0f)
        CUDA_CHECK(cudaMemcpyAsync(out, d, d_values_ * sizeof(__nv_bfloat16), cudaMemcpyDeviceToDevice, stream));
    CUBLAS_CHECK(cublasLtMatmul(handle_, operation_, &alpha, a_, a_layout_, b, b_layout_, &beta, out, d_layout_, out,
                                d_layout_, &heuristic_.algo, workspace_.data(), workspace_.bytes(), stream));
    if (out != d)
        CUDA_CHECK(cudaMemcpyAsync(d, out, d_values_ * sizeof(__nv_bfloat16), cudaMemcpyDeviceToDevice, stream));
}

}  // namespace sgemm
