// Device memory that a kernel keeps for the life of the process and grows as problems
// grow, as cuBLAS keeps its workspace: the split operands of stages 21-24, stream-K's
// partial tiles and flags (20_stream_k.cuh), the padded operands (padded_launch.cu); and
// the typed layout of the arrays a launch keeps in one such allocation (WorkspaceLayout).
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

// The arrays of one launch's workspace, laid out one after another, each from a 256-byte
// boundary (so that any vector load of its elements is aligned): add() each array to the
// layout, take bytes() from a GrowingWorkspace once, then find each array in it with in().
class WorkspaceLayout {
public:
    template <class T>
    struct Array {
        std::size_t offset;  // bytes from the workspace's start
        std::size_t count;

        T* in(void* base) const { return reinterpret_cast<T*>(static_cast<std::byte*>(base) + offset); }
        std::size_t end() const { return offset + count * sizeof(T); }
    };

    template <class T>
    Array<T> add(std::size_t count) {
        const Array<T> array{(bytes_ + kAlignment - 1) / kAlignment * kAlignment, count};
        bytes_ = array.end();
        return array;
    }
    std::size_t bytes() const { return bytes_; }

    // The bytes from `first`'s start to `last`'s end (gaps included): one memset clears
    // several arrays added one after the other.
    template <class First, class Last>
    static std::size_t span(const Array<First>& first, const Array<Last>& last) {
        return last.end() - first.offset;
    }

private:
    static constexpr std::size_t kAlignment = 256;
    std::size_t bytes_ = 0;
};

}  // namespace sgemm
