// The bf16 track: of the kernels it weighs for a shape, the one predicted fastest. On K and
// N multiples of 8: stage 25's (the tokens as wgmma's N, K split over a cluster), by the
// cost model of bf16_cost.hpp, or stage 30's (any tile, in either orientation) in the plan
// its own model (bf16_tiles.hpp) chooses; both models were fitted on the H100, each on its
// kernels' measured times. Stage 30 took stage 20's place there: its unswapped tiles are
// stage 20's, and the two models' scales put stage 20 ahead where stage 30 was faster
// (docs/notes/30_any_tile.md). Off K and N multiples of
// 8, where TMA cannot read the rows (they start off 16 bytes), it weighs three: stage 25
// loading them itself (kStage25ByHandCost), stage 14's kernel, which loads any shape itself
// (kStage14Cost), and stage 20 on zero-padded copies, predicted on the shape rounded up
// with the copies' bytes (kStage20PaddedCost). Without Hopper's instructions, stage 14's
// kernel runs everything.
#include "dispatch/bf16.hpp"

#include <algorithm>
#include <stdexcept>

#include "14_multistage.hpp"
#include "20_hopper_tuned.hpp"
#include "25_few_tokens.hpp"
#include "30_any_tile.hpp"
#include "common/padded_launch.cuh"
#include "dispatch/bf16_cost_fit.hpp"

namespace sgemm {
namespace {

constexpr GemmShape kTmaMultiples{1, 8, 8};

Bf16Candidate fastest(const std::vector<Bf16Candidate>& candidates) {
    return *std::min_element(candidates.begin(), candidates.end(), [](const Bf16Candidate& x, const Bf16Candidate& y) {
        return x.predicted_seconds < y.predicted_seconds;
    });
}

template <class COut>
void launch_hopper_candidate(const Bf16Candidate& candidate, const GemmProblem& problem, const __nv_bfloat16* a,
                             const __nv_bfloat16* b, COut* c, cudaStream_t stream) {
    if constexpr (std::is_same_v<COut, float>) {
        if (candidate.stage == 30) return launch_any_tile_plan(candidate.tile_plan, problem, a, b, c, stream);
        if (candidate.stage == 25) return launch_few_tokens(problem, a, b, c, stream);
        launch_hopper_tuned(problem, a, b, c, stream);
    } else {
        if (candidate.stage == 30) return launch_any_tile_plan_bf16_c(candidate.tile_plan, problem, a, b, c, stream);
        if (candidate.stage == 25) return launch_few_tokens_bf16_c(problem, a, b, c, stream);
        launch_hopper_tuned_bf16_c(problem, a, b, c, stream);
    }
}

}  // namespace

const Bf16Gpu& bf16_gpu_here() {
    static const Bf16Gpu gpu = [] {
        const bool hopper = hopper_kernels_run_here();
        return Bf16Gpu{hopper, sm_count_here(), hopper ? few_tokens_resident_ctas() : ResidentCtas{},
                       hopper ? bf16_tiles_gpu_here() : Bf16TilesGpu{}};
    }();
    return gpu;
}

std::vector<Bf16Candidate> bf16_candidates(const GemmShape& shape, const Bf16Gpu& gpu) {
    const bool as_is = takes_as_is(shape, kTmaMultiples);
    const CostTerms stage20 = as_is ? stage20_terms(shape, gpu.sms) : stage20_padded_terms(shape, gpu.sms);
    const CostTerms stage25 = stage25_terms(shape, gpu.few_tokens);
    std::vector<Bf16Candidate> candidates{
        Bf16Candidate{20, stage20, predicted_seconds(stage20, as_is ? kStage20Cost : kStage20PaddedCost)},
        Bf16Candidate{25, stage25, predicted_seconds(stage25, as_is ? kStage25Cost : kStage25ByHandCost)}};
    if (!as_is) {
        const CostTerms stage14 = stage14_terms(shape, gpu.sms);
        candidates.push_back(Bf16Candidate{14, stage14, predicted_seconds(stage14, kStage14Cost)});
    } else if (!gpu.tiles.resident.empty()) {
        // Stage 30's unswapped tiles are stage 20's, and its model does not share stage 20's
        // scale: where it has a plan, it takes stage 20's place.
        if (const std::optional<AnyTileCandidate> plan = fastest_any_tile_plan(shape, gpu.tiles))
            candidates.front() = Bf16Candidate{30, CostTerms{}, plan->predicted_seconds, plan->plan};
    }
    return candidates;
}

KernelChoice choose_bf16_kernel(const GemmShape& shape, const Bf16Gpu& gpu) {
    if (!gpu.hopper) return KernelChoice{14};
    const int stage = fastest(bf16_candidates(shape, gpu)).stage;
    return KernelChoice{stage, stage == 20 && !takes_as_is(shape, kTmaMultiples)};
}

void launch_bf16_track(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                       cudaStream_t stream) {
    const Bf16Gpu& gpu = bf16_gpu_here();
    if (!gpu.hopper) return launch_multistage(problem, a, b, c, stream);
    const Bf16Candidate choice = fastest(bf16_candidates(problem.shape, gpu));
    if (choice.stage == 14) return launch_multistage(problem, a, b, c, stream);
    if (choice.stage == 20 && !takes_as_is(problem.shape, kTmaMultiples))
        return launch_padded(problem, a, b, c, stream, kTmaMultiples, launch_hopper_tuned);
    launch_hopper_candidate(choice, problem, a, b, c, stream);
}

void launch_bf16_track_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                              __nv_bfloat16* c, cudaStream_t stream) {
    const Bf16Gpu& gpu = bf16_gpu_here();
    if (!gpu.hopper)
        throw std::runtime_error("the bf16 track writes bf16 C with stage 20's, 25's or 30's kernel, which need Hopper (sm_90a)");
    launch_hopper_candidate(fastest(bf16_candidates(problem.shape, gpu)), problem, a, b, c, stream);
}

}  // namespace sgemm
