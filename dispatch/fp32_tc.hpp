// The FP32 track on tensor cores (sgemm fp32-tc): FP32 inputs and C, with SGEMM's accuracy,
// computed by splitting each value into 16-bit parts (stages 22-24) where that pays, on the
// CUDA cores (stage 10) where it does not. Hopper only (sm_90a).
#pragma once

#include "common/gemm_problem.hpp"
#include "dispatch/fp32.hpp"
#include "dispatch/kernel_choice.hpp"

namespace sgemm {

// The split kernels' model (fp32_tc.cpp; dispatch/fp32_tc_fit.hpp holds the fitted
// constants): a fixed time, the values its pre-pass splits, and the longer of its GEMM's
// bytes at one fitted rate and its products at another.
struct Fp32TcKernelConstants {
    int stage;  // 22, 23 or 24
    double launch_seconds;
    double seconds_per_split_value;
    double seconds_per_byte;
    double seconds_per_product;
};

// What a split kernel does for a shape: the values its pre-pass splits (stage 22: A's and
// B's, 23: A's, 24: B's); the bytes its GEMM moves (the pre-pass's fp16 parts, the other
// operand in FP32, C); A B's products on its tiles (stage 22's in waves of its clusters'
// stacks, on `sms` SMs).
struct Fp32TcTerms {
    double split_values;
    double bytes;
    double products;
};

// Stage `stage` (22, 23 or 24) takes the shape as it is (N a multiple of 8; stage 24: K of 4).
bool split_kernel_takes(const GemmShape& shape, int stage);
Fp32TcTerms fp32_tc_terms(const GemmShape& shape, int stage, int sms);
double fp32_tc_predicted_seconds(const Fp32TcTerms& terms, const Fp32TcKernelConstants& constants);
double fp32_tc_predicted_seconds(const GemmShape& shape, int stage, int sms);

// Stage 10's kernel in the fp32 model's plan among those as accurate as SGEMM: chains no
// longer than stage 10's own plan's (fp32_tc.cpp says why).
Fp32Plan fp32_tc_stage10_plan(const GemmShape& shape, int sms);

// The plan whose tile a split kernel's FP32 fallback runs: the fp32 model's among K whole
// or in parts of at most 128 products (fp32_tc.cpp says why).
Fp32Plan fallback_plan(const GemmShape& shape, int sms);

// The id (Stage10Tile::id) of stage 10's tile for a split kernel's FP32 fallback, given
// the fallback's plan.
int fallback_tile(const GemmShape& shape, int sms, const Fp32Plan& plan);

KernelChoice choose_fp32_tc_kernel(const GemmShape& shape, int sms);

void launch_fp32_tc_track(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
