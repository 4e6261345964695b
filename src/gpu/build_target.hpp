// Which GPU architecture this binary was compiled for, and whether it can run on the
// GPU at hand.
#pragma once

#include <optional>
#include <string>

#include "gpu/device_info.hpp"

namespace sgemm {

// What the build targets: the compute capability (CMake passes SGEMM_BUILD_CC), e.g.
// 90, and whether it is the architecture-specific sm_90a, whose wgmma and setmaxnreg
// the Hopper stages need (SGEMM_BUILD_SM90A).
struct BuildTarget {
    int compute_capability = 0;
    bool sm90a = false;
};

BuildTarget build_target();
int build_compute_capability();

// Why this binary cannot run kernels on `device`, or nullopt when it can.
std::optional<std::string> build_mismatch(const DeviceInfo& device);

}  // namespace sgemm
