// Every CUDA and cuBLAS call is checked; a failure becomes an exception that names
// the call and where it was made, so main() can print one line and exit non-zero.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>

namespace sgemm {

class CudaError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);

}  // namespace sgemm

#define CUDA_CHECK(call)                                                                     \
    do {                                                                                     \
        const cudaError_t status_ = (call);                                                  \
        if (status_ != cudaSuccess) ::sgemm::throw_cuda_error(status_, #call, __FILE__, __LINE__); \
    } while (0)

#define CUBLAS_CHECK(call)                                                                     \
    do {                                                                                       \
        const cublasStatus_t status_ = (call);                                                 \
        if (status_ != CUBLAS_STATUS_SUCCESS)                                                  \
            ::sgemm::throw_cublas_error(status_, #call, __FILE__, __LINE__);                   \
    } while (0)
