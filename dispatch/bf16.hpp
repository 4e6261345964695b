// The bf16 track (sgemm bf16): A and B in bf16, FP32 accumulation, C in FP32 or in bf16
// (--c-type bf16), as cuBLAS's bf16 GEMM.
#pragma once

#include <vector>

#include "25_few_tokens.hpp"
#include "30_any_tile.hpp"
#include "common/gemm_problem.hpp"
#include "dispatch/bf16_cost.hpp"
#include "dispatch/bf16_tiles.hpp"
#include "dispatch/kernel_choice.hpp"

namespace sgemm {

// What the track's choice depends on in the GPU at hand.
struct Bf16Gpu {
    bool hopper = false;        // the Hopper stages run here (hopper_kernels_run_here())
    int sms = 0;
    ResidentCtas few_tokens{};  // what it holds of stage 25's kernel
    Bf16TilesGpu tiles;         // what it holds of stage 30's (none weighed where empty)
};
// Asked once a process.
const Bf16Gpu& bf16_gpu_here();

// A kernel the track weighs for a shape, with its cost model's prediction: stages 14, 20
// and 25 by bf16_cost.hpp's model (and its terms), stage 30 by bf16_tiles.hpp's in the
// plan that model chose (and the terms there).
struct Bf16Candidate {
    int stage;
    CostTerms terms;
    double predicted_seconds;
    AnyTilePlan tile_plan{};  // stage 30's
};

// The kernels the track weighs for a shape, in this order: on the multiples of 8 stage 30's
// best plan (stage 20's kernel where stage 30 has none), off them stage 20's on padded
// copies; stage 25's (off the multiples, loading those rows by hand); off the multiples
// stage 14's.
std::vector<Bf16Candidate> bf16_candidates(const GemmShape& shape, const Bf16Gpu& gpu);

KernelChoice choose_bf16_kernel(const GemmShape& shape, const Bf16Gpu& gpu);

void launch_bf16_track(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream);

// C in bf16: the kernel predicted fastest of stages 20, 25 and 30, where K and N are
// multiples of 8 (the driver refuses the rest, so stage 14 is never weighed).
void launch_bf16_track_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                              __nv_bfloat16* c, cudaStream_t stream);

}  // namespace sgemm
