// The bf16 track: stage 20's kernel where TMA can read the rows as they are (K and N
// multiples of 8: rows that start 16-byte aligned); off those multiples, stage 20's kernel
// on zero-padded copies, unless the copies would cost more than the math they buy, where
// stage 14's kernel, which loads any shape itself, runs the problem as it is
// (padding_cost.hpp: fitted on the draw of seed 1 on an H200, 73.9 -> 80.6 % of cuBLAS over
// its 74 problems off the multiples; on seed 2's 41, 74.4 -> 82.5 %: docs/notes/
// 20_hopper_tuned.md). Without Hopper's instructions, stage 14's kernel runs everything.
#include "dispatch/bf16.hpp"

#include <stdexcept>

#include "14_multistage.hpp"
#include "20_hopper_tuned.hpp"
#include "common/padded_launch.cuh"
#include "dispatch/padding_cost.hpp"

namespace sgemm {
namespace {

constexpr GemmShape kTmaMultiples{1, 8, 8};
constexpr double kFlopsPerCopiedByte = 80.0;

}  // namespace

KernelChoice choose_bf16_kernel(const GemmShape& shape, bool hopper) {
    if (!hopper) return KernelChoice{14};
    if (takes_as_is(shape, kTmaMultiples)) return KernelChoice{20};
    if (copies_outweigh_math(shape, kTmaMultiples, sizeof(__nv_bfloat16), kFlopsPerCopiedByte)) return KernelChoice{14};
    return KernelChoice{20, true};
}

void launch_bf16_track(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream) {
    const KernelChoice choice = choose_bf16_kernel(problem.shape, hopper_kernels_run_here());
    if (choice.stage == 14) return launch_multistage(problem, a, b, c, stream);
    if (choice.padded) return launch_padded(problem, a, b, c, stream, kTmaMultiples, launch_hopper_tuned);
    launch_hopper_tuned(problem, a, b, c, stream);
}

void launch_bf16_track_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                              __nv_bfloat16* c, cudaStream_t stream) {
    if (!hopper_kernels_run_here())
        throw std::runtime_error("the bf16 track writes bf16 C with stage 20's kernel, which needs Hopper (sm_90a)");
    launch_hopper_tuned_bf16_c(problem, a, b, c, stream);
}

}  // namespace sgemm
