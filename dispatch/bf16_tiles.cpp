#include "dispatch/bf16_tiles.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "dispatch/bf16_tiles_fit.hpp"
#include "dispatch/kernel_choice.hpp"

namespace sgemm {
namespace {

constexpr int kStepK = 64;
// Stream-K's last sharer adds the others' partial tiles one by one (20_stream_k.cuh, never
// in shares here): past this many sharers a stack, the adding outlasts the split's gain.
constexpr double kMaxSharers = 16;

double whole(double x) { return std::ceil(x - 1e-9); }

}  // namespace

const Bf16TilesGpu& bf16_tiles_gpu_here() {
    static const Bf16TilesGpu gpu = hopper_kernels_run_here() ? Bf16TilesGpu{sm_count_here(), any_tile_resident_ctas()}
                                                              : Bf16TilesGpu{sm_count_here(), {}};
    return gpu;
}

double predicted_seconds(const AnyTileTerms& t, const AnyTileConstants& c, bool direct_stores) {
    const double step_seconds = std::max(t.step_bytes / c.load_bytes_per_second,
                                         t.step_macs / c.macs_per_second + t.step_wgmmas * c.wgmma_seconds);
    const double store_rate = direct_stores ? c.direct_store_bytes_per_second : c.store_bytes_per_second;
    return c.fixed_seconds + std::max(t.dram_bytes / c.dram_bytes_per_second, t.sm_k_tiles * step_seconds) +
           t.sm_store_bytes / store_rate + t.sm_split_bytes / c.split_bytes_per_second +
           t.sm_cluster_split_bytes / c.cluster_split_bytes_per_second + t.sm_tiles * c.tile_seconds;
}

namespace {

// Each plan of `tile` (`index` in its stage's list; a GPU holds resident_by_cluster of its
// CTAs) for a shape, handed to visit(candidate) in a fixed order, with no allocation: the track
// weighs them every launch.
template <class Visit>
void visit_tile_plans(const GemmShape& shape, const AnyTile& tile, int index, const ResidentByCluster& resident_by_cluster,
                      Visit visit) {
    const int resident = resident_by_cluster[tile.cluster];
    if (resident < tile.cluster) return;
    const double most_clusters = resident / tile.cluster;
    const double stacks = whole(static_cast<double>(tile.row_extent(shape)) / (tile.cluster * tile.rows)) *
                          whole(static_cast<double>(tile.column_extent(shape)) / tile.columns);
    const double k_tiles = whole(static_cast<double>(shape.k) / kStepK);
    const double tile_bytes = 4.0 * tile.rows * tile.columns;

    AnyTileTerms common;
    common.step_bytes = (tile.rows + static_cast<double>(tile.columns) / tile.cluster) * kStepK * 2;
    common.step_macs = static_cast<double>(tile.rows) * tile.columns * kStepK;
    common.step_wgmmas = 4.0 * tile.rows / 64;
    common.dram_bytes = 2.0 * (static_cast<double>(shape.m) * shape.k + static_cast<double>(shape.k) * shape.n) +
                        4.0 * shape.m * shape.n;

    // Whole tiles: a stack a cluster a round.
    const double clusters = std::min(stacks, most_clusters);
    const double rounds = whole(stacks / clusters);
    AnyTileTerms terms = common;
    terms.sm_k_tiles = rounds * k_tiles;
    terms.sm_store_bytes = rounds * tile_bytes;
    terms.sm_tiles = rounds;
    visit(AnyTileCandidate{AnyTilePlan{index, static_cast<int>(clusters) * tile.cluster, false}, terms,
                           predicted_seconds(terms, kAnyTileCost, tile.weights_as_rows)});
    // Stream-K: the stacks after the whole rounds shared out by K over every cluster.
    const double tail = stacks - std::floor(stacks / most_clusters) * most_clusters;
    const double sharers = tail > 0 ? most_clusters / tail : 0;
    if (tail > 0 && tail * k_tiles >= 2 * most_clusters && sharers <= kMaxSharers) {
        terms = common;
        terms.sm_k_tiles = whole(stacks * k_tiles / most_clusters);
        terms.sm_tiles = whole(terms.sm_k_tiles / k_tiles);
        terms.sm_store_bytes = (std::floor(stacks / most_clusters) + 1) * tile_bytes;
        terms.sm_split_bytes = whole(sharers + 1) * tile_bytes;
        visit(AnyTileCandidate{AnyTilePlan{index, static_cast<int>(most_clusters) * tile.cluster, true}, terms,
                               predicted_seconds(terms, kAnyTileCost, tile.weights_as_rows)});
    }
    // K split over a cluster: a tile a cluster, every cluster at once; each CTA stores its
    // share of the tile's sums from registers.
    if (tile.splits_k)
        for (int splits = 2; splits <= kMaxClusterSplits && splits <= k_tiles; ++splits) {
            if (stacks * splits > resident_by_cluster[splits]) continue;
            terms = common;
            terms.sm_k_tiles = whole(k_tiles / splits);
            terms.sm_tiles = 1;
            terms.sm_store_bytes = tile_bytes / splits;
            terms.sm_cluster_split_bytes = tile_bytes;
            visit(AnyTileCandidate{AnyTilePlan{index, static_cast<int>(stacks) * splits, false, 8, splits}, terms,
                                   predicted_seconds(terms, kAnyTileCost, true)});
        }
}

// Stage 30's tile `index` on `gpu`: N and K multiples of 8 (TMA's bf16 rows of B and A).
template <class Visit>
void visit_any_tile_plans(const GemmShape& shape, const Bf16TilesGpu& gpu, int index, Visit visit) {
    if (shape.n % 8 != 0 || shape.k % 8 != 0) return;
    visit_tile_plans(shape, any_tiles()[index], index,
                     index < static_cast<int>(gpu.resident.size()) ? gpu.resident[index] : ResidentByCluster{}, visit);
}

}  // namespace

std::vector<AnyTileCandidate> any_tile_plans(const GemmShape& shape, const AnyTile& tile, int index,
                                             const ResidentByCluster& resident) {
    std::vector<AnyTileCandidate> plans;
    visit_tile_plans(shape, tile, index, resident, [&](const AnyTileCandidate& plan) { plans.push_back(plan); });
    return plans;
}

std::vector<AnyTileCandidate> any_tile_plans(const GemmShape& shape, const Bf16TilesGpu& gpu, int index) {
    std::vector<AnyTileCandidate> plans;
    if (index < 0 || index >= static_cast<int>(any_tiles().size())) throw std::out_of_range("stage 30: no such tile");
    visit_any_tile_plans(shape, gpu, index, [&](const AnyTileCandidate& plan) { plans.push_back(plan); });
    return plans;
}

std::vector<AnyTileCandidate> any_tile_candidates(const GemmShape& shape, const Bf16TilesGpu& gpu) {
    std::vector<AnyTileCandidate> candidates;
    for (int index = 0; index < static_cast<int>(any_tiles().size()); ++index)
        visit_any_tile_plans(shape, gpu, index, [&](const AnyTileCandidate& plan) { candidates.push_back(plan); });
    std::stable_sort(candidates.begin(), candidates.end(), [](const AnyTileCandidate& x, const AnyTileCandidate& y) {
        return x.predicted_seconds < y.predicted_seconds;
    });
    return candidates;
}

std::optional<AnyTileCandidate> fastest_any_tile_plan(const GemmShape& shape, const Bf16TilesGpu& gpu) {
    std::optional<AnyTileCandidate> fastest;
    for (int index = 0; index < static_cast<int>(any_tiles().size()); ++index)
        visit_any_tile_plans(shape, gpu, index, [&](const AnyTileCandidate& plan) {
            if (!fastest || plan.predicted_seconds < fastest->predicted_seconds) fastest = plan;
        });
    return fastest;
}

AnyTilePlan choose_any_tile_plan(const GemmShape& shape, const Bf16TilesGpu& gpu) {
    const std::optional<AnyTileCandidate> fastest = fastest_any_tile_plan(shape, gpu);
    if (!fastest) throw std::invalid_argument("stage 30 takes K and N multiples of 8 on a Hopper GPU (sm_90a)");
    return fastest->plan;
}

void launch_any_tile(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                     cudaStream_t stream) {
    launch_any_tile_plan(choose_any_tile_plan(problem.shape, bf16_tiles_gpu_here()), problem, a, b, c, stream);
}

void launch_any_tile_bf16_c(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                            __nv_bfloat16* c, cudaStream_t stream) {
    launch_any_tile_plan_bf16_c(choose_any_tile_plan(problem.shape, bf16_tiles_gpu_here()), problem, a, b, c,
                                stream);
}

}  // namespace sgemm
