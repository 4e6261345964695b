// What the driver needs to know about the GPU: its name and architecture for the
// report and the stage availability check, SM count and clock for the FP32 paper
// peak, L2 size for flushing the cache between timed runs, free memory for refusing
// problems that do not fit.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace sgemm {

class NoGpuError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct DeviceInfo {
    std::string name;
    int compute_capability = 0;  // 90 for sm_90
    int sm_count = 0;
    int clock_khz = 0;
    std::size_t l2_bytes = 0;
    std::size_t free_memory_bytes = 0;
    std::string driver_version;   // the NVIDIA driver, e.g. "580.95.05"
    std::string cuda_version;     // the CUDA runtime the binary uses, e.g. "13.0"

    // FP32 lanes per SM x 2 FLOP per FMA x SMs x clock.
    double fp32_peak_tflops() const;
};

// Throws NoGpuError when no usable CUDA GPU is present.
DeviceInfo query_device();

// FP32 FMA lanes per SM for a compute capability (64 on sm_80, 128 on sm_86 and later).
int fp32_lanes_per_sm(int compute_capability);

}  // namespace sgemm
