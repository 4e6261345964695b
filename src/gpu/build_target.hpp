// Which GPU architecture this binary was compiled for, and whether it can run on the
// GPU at hand.
#pragma once

#include <optional>
#include <string>

#include "gpu/device_info.hpp"

namespace sgemm {

// The compute capability the build targets (CMake passes SGEMM_BUILD_CC), e.g. 90.
int build_compute_capability();

// Why this binary cannot run kernels on `device`, or nullopt when it can.
std::optional<std::string> build_mismatch(const DeviceInfo& device);

}  // namespace sgemm
