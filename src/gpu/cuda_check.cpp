#include "gpu/cuda_check.hpp"

#include <fmt/format.h>

namespace sgemm {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
    throw CudaError(fmt::format("CUDA error '{}' in {} ({}:{})", cudaGetErrorString(status), call,
                                file, line));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
    throw CudaError(fmt::format("cuBLAS error '{}' in {} ({}:{})", cublasGetStatusString(status),
                                call, file, line));
}

}  // namespace sgemm
