#include <fmt/format.h>

#include "gpu/build_target.hpp"

namespace sgemm {
namespace {

// Compiled like every stage: if the runtime finds no image of it for this GPU, it
// finds none of the stages either.
__global__ void probe_kernel() {}

}  // namespace

BuildTarget build_target() { return BuildTarget{SGEMM_BUILD_CC, SGEMM_BUILD_SM90A != 0}; }

int build_compute_capability() { return SGEMM_BUILD_CC; }

std::optional<std::string> build_mismatch(const DeviceInfo& device) {
    cudaFuncAttributes attributes{};
    const cudaError_t status = cudaFuncGetAttributes(&attributes, probe_kernel);
    if (status == cudaSuccess) return std::nullopt;
    cudaGetLastError();  // consume the error so later calls do not report it
    return fmt::format("this binary was built for sm_{} and cannot run on this {} (sm_{}): {}; "
                       "rebuild with make ARCH={}",
                       SGEMM_BUILD_CC, device.name, device.compute_capability,
                       cudaGetErrorString(status), device.compute_capability);
}

}  // namespace sgemm
