// cuBLASLt's own kernels for the bf16 problem (bf16 A and B, FP32 compute, FP32 C): every
// algorithm configuration the library offers for one shape, each named by the kernel it
// launches. sgemm_survey uses them to find what NVIDIA's kernels written before Hopper
// (mma.sync, as stages 11-14) reach on this GPU, beside the wgmma ones cublasGemmEx picks.
#pragma once

#include <cublasLt.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "kernels/common/gemm_problem.hpp"

namespace sgemm {

struct CublasLtKernel {
    cublasLtMatmulAlgo_t algo{};
    std::string config;       // "algo 21 tile 24 stages 12 swizzle 0 ..." (cublasLt.h's enum values)
    std::string kernel_name;  // what it launches, " + "-joined when more than one kernel
    std::size_t workspace_bytes = 0;
};

// Whether a kernel's name says it was written for Hopper or later (sm90..., nvjet...):
// the library's names are the only sign of which instructions a kernel uses.
bool named_for_hopper_or_later(std::string_view kernel_name);

class CublasLt {
public:
    // Descriptors for `problem` (row-major, as cuBLAS is called for the stages: the
    // operands swapped and M and N exchanged) and the workspace cuBLAS's default has.
    explicit CublasLt(const GemmProblem& problem);
    ~CublasLt();
    CublasLt(const CublasLt&) = delete;
    CublasLt& operator=(const CublasLt&) = delete;

    // Every configuration the library accepts for the problem, each launched once on
    // these operands to learn its kernel's name (CUPTI, so not under another profiler).
    std::vector<CublasLtKernel> kernels(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                                        cudaStream_t stream) const;

    // C = alpha A B + beta C of the constructor's problem with that configuration.
    void gemm(const CublasLtKernel& kernel, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
              cudaStream_t stream) const;

    int version() const;  // cublasLtGetVersion(): 130001 for 13.0.1

private:
    GemmProblem problem_;
    cublasLtHandle_t handle_ = nullptr;
    cublasLtMatmulDesc_t operation_ = nullptr;
    cublasLtMatrixLayout_t a_layout_ = nullptr;  // cuBLAS's A: the row-major B
    cublasLtMatrixLayout_t b_layout_ = nullptr;  // cuBLAS's B: the row-major A
    cublasLtMatrixLayout_t c_layout_ = nullptr;
    DeviceBuffer<std::byte> workspace_;
};

}  // namespace sgemm
