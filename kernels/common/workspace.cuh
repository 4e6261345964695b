// Device memory that a kernel keeps for the life of the process and grows as problems
// grow, as cuBLAS keeps its workspace: the split operands of stages 21-24, stream-K's
// partial tiles and flags (20_stream_k.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace sgemm {

class GrowingWorkspace {
public:
    // zeroed: every byte is zero when allocated (the users keep it so between launches).
    explicit GrowingWorkspace(std::string what, bool zeroed = false) : what_(std::move(what)), zeroed_(zeroed) {}

    // At least `bytes` bytes; what an earlier call returned is gone once this one grows.
    void* at_least(std::size_t bytes) {
        if (bytes > capacity_) {
            cudaFree(memory_);
            memory_ = nullptr;
            capacity_ = 0;
            if (cudaMalloc(&memory_, bytes) != cudaSuccess ||
                (zeroed_ && cudaMemset(memory_, 0, bytes) != cudaSuccess))
                throw std::runtime_error("no device memory for " + what_);
            capacity_ = bytes;
        }
        return memory_;
    }

private:
    std::string what_;
    bool zeroed_;
    void* memory_ = nullptr;
    std::size_t capacity_ = 0;
};

}  // namespace sgemm
