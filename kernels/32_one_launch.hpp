// Stage 32's launcher and its plan, defined in 32_one_launch.cu.
#pragma once

#include "common/gemm_problem.hpp"

namespace sgemm {

// The kernel's plan for a shape: one of its tiles (rows x columns of C a CTA computes) and
// how many CTAs of a cluster split K between them (1-8).
struct OneLaunchPlan {
    int block_m = 0;
    int block_n = 0;
    int k_splits = 1;
};

// The plan the launcher takes for `shape` on a GPU of `sms` SMs.
OneLaunchPlan one_launch_plan(const GemmShape& shape, int sms);

void launch_one_launch(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
