// The bf16 track (sgemm bf16): A and B in bf16, FP32 accumulation, C in FP32 or in bf16
// (--c-type bf16), as cuBLAS's bf16 GEMM.
#pragma once

#include <vector>

#include "25_few_tokens.hpp"
#include "common/gemm_problem.hpp"
#include "dispatch/bf16_cost.hpp"
#include "dispatch/kernel_choice.hpp"

namespace sgemm {

// What the track's choice depends on in the GPU at hand.
struct Bf16Gpu {
    bool hopper = false;        // the Hopper stages run here (hopper_kernels_run_here())
    int sms = 0;
    ResidentCtas few_tokens{};  // what it holds of stage 25's kernel
};
Bf16Gpu bf16_gpu_here();

// A kernel the track weighs for a shape, with the cost model's terms and prediction.
struct Bf16Candidate {
    int stage;
    CostTerms terms;
    double predicted_seconds;
};

// The kernels the track weighs for a shape, in this order: stage 20's (off the multiples of
// 8, on padded copies), stage 25's (off the multiples, loading those rows by hand), and off
// the multiples, stage 14's.
std::vector<Bf16Candidate> bf16_candidates(const GemmShape& shape, const Bf16Gpu& gpu);

KernelChoice choose_bf16_kernel(const GemmShape& shape, const Bf16Gpu& gpu);

void launch_bf16_track(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream);

// C in bf16: the kernel the model predicts faster of stages 20 and 25, where K and N are
// multiples of 8 (the driver refuses the rest, so stage 14 is never weighed).
void launch_bf16_track_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                              __nv_bfloat16* c, cudaStream_t stream);

}  // namespace sgemm
