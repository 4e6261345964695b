#include "gpu/device_info.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <fstream>
#include <regex>

#include "gpu/cuda_check.hpp"

namespace sgemm {
namespace {

// The NVIDIA driver's version as the kernel module reports it; "unknown" where the
// file is absent (non-Linux, or a container that hides it).
std::string read_driver_version() {
    std::ifstream file("/proc/driver/nvidia/version");
    std::string line;
    std::getline(file, line);
    std::smatch match;
    if (std::regex_search(line, match, std::regex(R"(\s(\d+\.\d+(\.\d+)?)\s)"))) return match[1];
    return "unknown";
}

}  // namespace

int fp32_lanes_per_sm(int compute_capability) {
    switch (compute_capability) {
        case 60:
        case 70:
        case 72:
        case 75:
        case 80:
            return 64;
        default:
            return 128;
    }
}

double DeviceInfo::fp32_peak_tflops() const {
    return 2.0 * fp32_lanes_per_sm(compute_capability) * sm_count * clock_khz * 1e3 / 1e12;
}

DeviceInfo query_device() {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
        throw NoGpuError(fmt::format("no usable CUDA GPU found ({})", status == cudaSuccess
                                                                          ? "device count is 0"
                                                                          : cudaGetErrorString(status)));
    }
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp props{};
    CUDA_CHECK(cudaGetDeviceProperties(&props, device));

    DeviceInfo info;
    info.name = props.name;
    info.compute_capability = props.major * 10 + props.minor;
    info.sm_count = props.multiProcessorCount;
    CUDA_CHECK(cudaDeviceGetAttribute(&info.clock_khz, cudaDevAttrClockRate, device));
    info.l2_bytes = static_cast<std::size_t>(props.l2CacheSize);
    std::size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&info.free_memory_bytes, &total));
    info.driver_version = read_driver_version();
    int runtime = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    info.cuda_version = fmt::format("{}.{}", runtime / 1000, runtime % 1000 / 10);
    return info;
}

}  // namespace sgemm
