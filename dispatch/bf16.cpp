// The bf16 track: of the Hopper kernels, the one the cost model (bf16_cost.hpp) predicts
// fastest for the shape: stage 20's (tiles of 64-128 rows, persistent, stream-K) or stage
// 25's (the tokens as wgmma's N, K split over a cluster). Off K and N multiples of 8, where
// TMA cannot read the rows (they start off 16 bytes), stage 25 loads them itself, at the
// model's constants for that (kStage25ByHandCost); where stage 20 is predicted faster (on
// the shape rounded up, copies left out), it runs on zero-padded copies, unless the copies
// would cost more than the math they buy, where stage 14's kernel, which loads any shape
// itself, runs the problem as it is (padding_cost.hpp: fitted on the draw of
// seed 1 on an H200, 73.9 -> 80.6 % of cuBLAS over its 74 problems off the multiples; on
// seed 2's 41, 74.4 -> 82.5 %: docs/notes/20_hopper_tuned.md). Without Hopper's
// instructions, stage 14's kernel runs everything.
#include "dispatch/bf16.hpp"

#include <algorithm>
#include <stdexcept>

#include "14_multistage.hpp"
#include "20_hopper_tuned.hpp"
#include "25_few_tokens.hpp"
#include "common/padded_launch.cuh"
#include "dispatch/bf16_cost_fit.hpp"
#include "dispatch/padding_cost.hpp"

namespace sgemm {
namespace {

constexpr GemmShape kTmaMultiples{1, 8, 8};
constexpr double kFlopsPerCopiedByte = 80.0;

int fastest_hopper_stage(const GemmShape& shape, const Bf16Gpu& gpu) {
    const std::vector<Bf16Candidate> candidates = bf16_candidates(shape, gpu);
    return std::min_element(candidates.begin(), candidates.end(),
                            [](const Bf16Candidate& x, const Bf16Candidate& y) {
                                return x.predicted_seconds < y.predicted_seconds;
                            })
        ->stage;
}

template <class COut>
void launch_hopper_stage(int stage, const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                         COut* c, cudaStream_t stream) {
    if constexpr (std::is_same_v<COut, float>) {
        if (stage == 25) return launch_few_tokens(problem, a, b, c, stream);
        launch_hopper_tuned(problem, a, b, c, stream);
    } else {
        if (stage == 25) return launch_few_tokens_bf16_c(problem, a, b, c, stream);
        launch_hopper_tuned_bf16_c(problem, a, b, c, stream);
    }
}

}  // namespace

Bf16Gpu bf16_gpu_here() {
    const bool hopper = hopper_kernels_run_here();
    return Bf16Gpu{hopper, sm_count_here(), hopper ? few_tokens_resident_ctas() : ResidentCtas{}};
}

std::vector<Bf16Candidate> bf16_candidates(const GemmShape& shape, const Bf16Gpu& gpu) {
    const bool as_is = takes_as_is(shape, kTmaMultiples);
    const CostTerms stage20 = stage20_terms(as_is ? shape : padded_shape(shape, kTmaMultiples), gpu.sms);
    const CostTerms stage25 = stage25_terms(shape, gpu.few_tokens);
    return {Bf16Candidate{20, stage20, predicted_seconds(stage20, kStage20Cost)},
            Bf16Candidate{25, stage25, predicted_seconds(stage25, as_is ? kStage25Cost : kStage25ByHandCost)}};
}

KernelChoice choose_bf16_kernel(const GemmShape& shape, const Bf16Gpu& gpu) {
    if (!gpu.hopper) return KernelChoice{14};
    const int fastest = fastest_hopper_stage(shape, gpu);
    if (takes_as_is(shape, kTmaMultiples) || fastest == 25) return KernelChoice{fastest};
    if (copies_outweigh_math(shape, kTmaMultiples, sizeof(__nv_bfloat16), kFlopsPerCopiedByte)) return KernelChoice{14};
    return KernelChoice{20, true};
}

void launch_bf16_track(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream) {
    const KernelChoice choice = choose_bf16_kernel(problem.shape, bf16_gpu_here());
    if (choice.stage == 14) return launch_multistage(problem, a, b, c, stream);
    if (choice.stage == 25) return launch_few_tokens(problem, a, b, c, stream);
    if (choice.padded) return launch_padded(problem, a, b, c, stream, kTmaMultiples, launch_hopper_tuned);
    launch_hopper_tuned(problem, a, b, c, stream);
}

void launch_bf16_track_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                              __nv_bfloat16* c, cudaStream_t stream) {
    const Bf16Gpu gpu = bf16_gpu_here();
    if (!gpu.hopper)
        throw std::runtime_error("the bf16 track writes bf16 C with stage 20's or 25's kernel, which need Hopper (sm_90a)");
    launch_hopper_stage(fastest_hopper_stage(problem.shape, gpu), problem, a, b, c, stream);
}

}  // namespace sgemm
