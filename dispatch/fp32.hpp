// The FP32 track on CUDA cores (sgemm fp32): FP32 inputs, arithmetic and C, as SGEMM.
#pragma once

#include "10_tuned.hpp"
#include "common/gemm_problem.hpp"
#include "dispatch/kernel_choice.hpp"

namespace sgemm {

// Stage 10's kernel in one of its tiles, K split into `parts`, and the time the model
// predicts for it.
struct Fp32Plan {
    Stage10Tile tile;
    int parts;
    double seconds;
};

// The model's time for the shape in `tile`, K in `parts`, on a GPU of `sms` SMs.
double fp32_predicted_seconds(const GemmShape& shape, const Stage10Tile& tile, int parts, int sms);

// Of every tile and split of K stage 10 offers, the one the model predicts fastest.
Fp32Plan fp32_plan(const GemmShape& shape, int sms);

KernelChoice choose_fp32_kernel(const GemmShape& shape, int sms);

void launch_fp32_track(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
