// The FP32 track on CUDA cores: stage 10's kernel on every shape. Of the CUDA-core stages
// it is the fastest (the README's table), the only one tuned for this GPU, and the only
// one built for any shape: its own launcher chooses its tiles for few rows and splits K
// where C has few tiles (10_tuned.cu). The earlier stages are steps of the tutorial.
#include "dispatch/fp32.hpp"

#include "10_tuned.hpp"

namespace sgemm {

KernelChoice choose_fp32_kernel(const GemmShape&) { return KernelChoice{10}; }

void launch_fp32_track(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream) {
    launch_tuned(problem, a, b, c, stream);
}

}  // namespace sgemm
