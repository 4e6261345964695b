#include "dispatch/fp8_tiles.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "dispatch/fp8_tiles_fit.hpp"
#include "dispatch/kernel_choice.hpp"

namespace sgemm {

Fp8TilesGpu fp8_tiles_gpu(int sms, const std::vector<ResidentByCluster>& resident) {
    Fp8TilesGpu gpu{sms, resident};
    gpu.resident.resize(fp8_any_tiles().size());  // none held of a tile past the list given
    return gpu;
}

const Fp8TilesGpu& fp8_tiles_gpu_here() {
    static const Fp8TilesGpu gpu = fp8_tiles_gpu(
        sm_count_here(), hopper_kernels_run_here() ? fp8_any_tile_resident_ctas() : std::vector<ResidentByCluster>{});
    return gpu;
}

Fp8Terms fp8_terms(const AnyTile& tile, const GemmShape& shape) {
    return Fp8Terms{static_cast<double>(tile.consumers), static_cast<double>(tile.rows) * tile.columns / tile.consumers,
                    static_cast<double>(shape.m) * shape.n};
}

double fp8_predicted_seconds(const AnyTileTerms& terms, const Fp8Terms& fp8, const Fp8TileConstants& constants,
                             bool direct_stores) {
    const double consumer_step = terms.step_macs / fp8.consumers / constants.any_tile.macs_per_second +
                                 fp8.promoted_values * constants.promoted_value_seconds;
    // Stage 30's prediction with the K block's loads taking at least the consumer's path:
    // the step is then the longest of the three bounds.
    AnyTileTerms bounded = terms;
    bounded.step_bytes = std::max(terms.step_bytes, consumer_step * constants.any_tile.load_bytes_per_second);
    bounded.dram_bytes = terms.dram_bytes - 2 * fp8.d_values;
    return predicted_seconds(bounded, constants.any_tile, direct_stores);
}

GemmShape fp8_shape_in_bf16_k_tiles(const GemmShape& shape) {
    return GemmShape{shape.m, shape.n, 64 * ((shape.k + kFp8ScaleBlock - 1) / kFp8ScaleBlock)};
}

namespace {

// Each compiled tile's plans for `shape`, predicted with stage 31's constants, handed to
// visit(candidate) in a fixed order (a launch asks for the fastest: no list, no sort). D
// leaves from registers where the tile is swapped or split, as stage 30's model has it; where
// N is off 8 an unswapped tile's D leaves shared memory by the threads, about as slowly
// (106 x 10098 x 48 in 128 x 128 on an H200: 8.4 us, 6.0 at N = 10096 through TMA), so it is
// priced as stores from registers there. K a multiple of 16 (TMA's rows of A and B); any N.
template <class Visit>
void visit_fp8_any_tile_plans(const GemmShape& shape, const Fp8TilesGpu& gpu, Visit visit) {
    if (shape.k % 16 != 0) return;
    const GemmShape in_k_tiles = fp8_shape_in_bf16_k_tiles(shape);
    const std::vector<AnyTile>& tiles = fp8_any_tiles();
    for (std::size_t i = 0; i < tiles.size(); ++i) {
        const AnyTile& tile = tiles[i];
        for (AnyTileCandidate candidate : any_tile_plans(in_k_tiles, tile, static_cast<int>(i), gpu.resident[i])) {
            candidate.predicted_seconds =
                fp8_predicted_seconds(candidate.terms, fp8_terms(tile, shape), kFp8AnyTileCost,
                                      tile.weights_as_rows || candidate.plan.splits > 1 || shape.n % 8 != 0);
            visit(candidate);
        }
    }
}

}  // namespace

std::vector<AnyTileCandidate> fp8_any_tile_candidates(const GemmShape& shape, const Fp8TilesGpu& gpu) {
    std::vector<AnyTileCandidate> candidates;
    visit_fp8_any_tile_plans(shape, gpu, [&](const AnyTileCandidate& candidate) { candidates.push_back(candidate); });
    std::stable_sort(candidates.begin(), candidates.end(), [](const AnyTileCandidate& x, const AnyTileCandidate& y) {
        return x.predicted_seconds < y.predicted_seconds;
    });
    return candidates;
}

std::optional<AnyTileCandidate> fastest_fp8_any_tile_plan(const GemmShape& shape, const Fp8TilesGpu& gpu) {
    // The first of the fastest, as the sorted list has it.
    std::optional<AnyTileCandidate> fastest;
    visit_fp8_any_tile_plans(shape, gpu, [&](const AnyTileCandidate& candidate) {
        if (!fastest || candidate.predicted_seconds < fastest->predicted_seconds) fastest = candidate;
    });
    return fastest;
}

void launch_fp8_any_tile(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                         __nv_bfloat16* d, cudaStream_t stream) {
    const std::optional<AnyTileCandidate> plan = fastest_fp8_any_tile_plan(problem.shape, fp8_tiles_gpu_here());
    if (!plan) throw std::invalid_argument("stage 31 takes K a multiple of 16 on a Hopper GPU (sm_90a)");
    launch_fp8_any_tile_plan(plan->plan, problem, scaling, operands, d, stream);
}

}  // namespace sgemm
