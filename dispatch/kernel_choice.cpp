#include "dispatch/kernel_choice.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include "gpu/build_target.hpp"

namespace sgemm {
namespace {

int current_device_attribute(cudaDeviceAttr attribute) {
    int device = 0, value = 0;
    if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&value, attribute, device) != cudaSuccess)
        return 0;
    return value;
}

}  // namespace

int sm_count_here() {
    static const int sms = std::max(current_device_attribute(cudaDevAttrMultiProcessorCount), 1);
    return sms;
}

bool hopper_kernels_run_here() {
    static const bool hopper = build_target().sm90a &&
                               current_device_attribute(cudaDevAttrComputeCapabilityMajor) == 9 &&
                               current_device_attribute(cudaDevAttrComputeCapabilityMinor) == 0;
    return hopper;
}

}  // namespace sgemm
