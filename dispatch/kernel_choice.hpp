// The dispatch layer: for a problem's shape, which stage's kernel runs it, the way cuBLAS's
// heuristics choose among its kernels. Each track is the entry point a user calls: sgemm
// fp32, bf16, fp32-tc or fp8. Each chooses among the stages' kernels of its precision (and
// their tiles and plans) by the measured costs it states. The chapters in kernels/ stay each
// their own kernel; only this layer hands a shape from one to another.
#pragma once

#include <string_view>

namespace sgemm {

struct KernelChoice {
    int stage = 0;             // whose kernel runs the problem
    bool padded = false;       // on zero-padded copies of the operands (kernels/common/padded_launch.cuh)
    std::string_view variant{};  // a configuration of that kernel other than its stage's own, or empty
};

// What the choices depend on in the GPU at hand, read once.
int sm_count_here();
// An sm_90a build on an sm_90 GPU: the Hopper stages (15-25) can run.
bool hopper_kernels_run_here();

}  // namespace sgemm
