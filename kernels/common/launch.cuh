// Small launch helpers shared by every stage.
#pragma once

#include <cuda_runtime.h>

namespace sgemm {

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace sgemm
