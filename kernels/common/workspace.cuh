// Device memory that a stage keeps for the life of the process and grows as problems
// grow, as cuBLAS keeps its workspace: stages 21 and 22 write their split operands there.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace sgemm {

class GrowingWorkspace {
public:
    explicit GrowingWorkspace(std::string what) : what_(std::move(what)) {}

    // At least `bytes` bytes; what an earlier call returned is gone once this one grows.
    void* at_least(std::size_t bytes) {
        if (bytes > capacity_) {
            cudaFree(memory_);
            memory_ = nullptr;
            capacity_ = 0;
            if (cudaMalloc(&memory_, bytes) != cudaSuccess)
                throw std::runtime_error("no device memory for " + what_);
            capacity_ = bytes;
        }
        return memory_;
    }

private:
    std::string what_;
    void* memory_ = nullptr;
    std::size_t capacity_ = 0;
};

}  // namespace sgemm
