// What the ceiling microbenchmarks share: a grid that keeps every SM as full as the
// kernel's resources allow, and one timing rule. A ceiling is the most the GPU showed
// it can do, so each is the fastest of several launches (after one warm-up launch that
// loads the module and lets the clock rise), timed with CUDA events.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <optional>

#include "gpu/cuda_check.hpp"

namespace sgemm {

constexpr int kTimedLaunches = 5;

// Blocks of `threads` threads that fit on all `sm_count` SMs at once.
template <class Kernel>
int blocks_filling_gpu(Kernel kernel, int threads, std::size_t shared_bytes, int sm_count) {
    int blocks_per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, threads, shared_bytes));
    return blocks_per_sm * sm_count;
}

// Milliseconds of the fastest of kTimedLaunches launches, after one warm-up launch.
double fastest_launch_ms(const std::function<void()>& launch, cudaStream_t stream);

// The same, with the SM clock that launch ran at (sm_clock.hpp): each timed launch
// between two clock stamps.
struct FastestLaunch {
    double ms = 0.0;
    std::optional<double> clock_mhz;
};
FastestLaunch fastest_launch_with_clock(const std::function<void()>& launch, cudaStream_t stream);

// Milliseconds a launch takes, on average over measured_seconds, once the GPU has run it
// back to back for warm_seconds: what a power- or heat-limited GPU sustains, where the
// fastest launch shows what it does before its clock falls.
double sustained_launch_ms(const std::function<void()>& launch, cudaStream_t stream, double warm_seconds,
                           double measured_seconds);

}  // namespace sgemm
