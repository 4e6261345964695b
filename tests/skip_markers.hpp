// How a GPU test says that it cannot run here. A test skips only through these macros, never
// through a bare GTEST_SKIP: each skip's message then starts with a marker, SGEMM_NO_GPU (no
// GPU present) or SGEMM_CANNOT_RUN (this GPU or this build cannot run it: a Hopper stage on
// another GPU, a binary built without its code). test_main.cpp prints kAllSkipped where every
// test a process ran skipped with a marker and none failed, and CTest's SKIP_REGULAR_EXPRESSION
// (tests/CMakeLists.txt) matches that word alone. Not the markers themselves: CTest lets a
// match outrank the exit status, so a marked skip beside a failed case would read as skipped.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>

namespace sgemm {

inline constexpr std::string_view kNoGpu = "SGEMM_NO_GPU";
inline constexpr std::string_view kCannotRun = "SGEMM_CANNOT_RUN";
inline constexpr std::string_view kAllSkipped = "SGEMM_ALL_SKIPPED";

inline bool gpu_present() {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

}  // namespace sgemm

// Skips the test where no GPU is present.
#define SGEMM_SKIP_WITHOUT_GPU() \
    if (!::sgemm::gpu_present()) GTEST_SKIP() << ::sgemm::kNoGpu << ": no CUDA device"

// Skips the test where `refusal`, a std::optional<std::string>, holds why this GPU or this
// build cannot run it.
#define SGEMM_SKIP_IF_REFUSED(refusal)                              \
    if (const std::optional<std::string> sgemm_refusal = (refusal)) \
    GTEST_SKIP() << ::sgemm::kCannotRun << ": " << *sgemm_refusal
