#include "dispatch/fp8.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "29_fp8_tiles.hpp"
#include "common/fp8_padded_launch.cuh"
#include "dispatch/fp8_fit.hpp"
#include "dispatch/fp8_tiles_fit.hpp"
#include "dispatch/fp8_tiles.hpp"

namespace sgemm {

// Stages 29 and 31 promote; 27 and 28 run stage 29's kernel in one tile; 26 does not promote.
KernelChoice choose_fp8_kernel(const GemmShape& shape, Fp8Scaling) {
    const Fp8TrackPlan plan = fp8_track_plan(shape, fp8_tiles_gpu_here(), sm_count_here());
    return KernelChoice{plan.stage, plan.padding != Fp8Padding::none,
                        plan.tile ? plan.tile->name : std::string_view{}};
}

namespace {

// The fastest predicted on `shape` as it is (K a multiple of 16): stage 29's tiles where N is
// a multiple of 8 (its D leaves through TMA), stage 31's plans at any N (where N is off 8, in
// its kernels that store D from registers or out of shared memory by the threads).
Fp8TrackPlan fastest_plan_as_is(const GemmShape& shape, const Fp8TilesGpu& gpu, int sms) {
    Fp8TrackPlan fastest;
    fastest.predicted_seconds = std::numeric_limits<double>::infinity();
    if (shape.n % kFp8TmaMultiples.n == 0)
        for (const Fp8Tile& tile : fp8_tiles()) {
            const AnyTileTerms terms = stage29_tile_terms(shape, tile, sms);
            const double seconds = fp8_predicted_seconds(terms, stage29_fp8_terms(shape, tile), kStage29Cost,
                                                         stage29_stores_from_registers(tile));
            if (seconds < fastest.predicted_seconds) fastest = Fp8TrackPlan{29, &tile, {}, Fp8Padding::none, seconds};
        }
    const std::optional<AnyTileCandidate> stage31 = fastest_fp8_any_tile_plan(shape, gpu);
    if (stage31 && stage31->predicted_seconds < fastest.predicted_seconds)
        fastest = Fp8TrackPlan{31, nullptr, stage31->plan, Fp8Padding::none, stage31->predicted_seconds};
    return fastest;
}

GemmShape padded_for(const GemmShape& shape, Fp8Padding padding) {
    return padding == Fp8Padding::none ? shape : fp8_padded_shape(shape, padding == Fp8Padding::k_and_n);
}

}  // namespace

Fp8TrackPlan fp8_track_plan_in(const GemmShape& shape, Fp8Padding padding, const Fp8TilesGpu& gpu, int sms) {
    Fp8TrackPlan plan = fastest_plan_as_is(padded_for(shape, padding), gpu, sms);
    plan.padding = padding;
    plan.predicted_seconds += fp8_copy_seconds(shape, padding);
    return plan;
}

Fp8TrackPlan fp8_track_plan(const GemmShape& shape, const Fp8TilesGpu& gpu, int sms) {
    const bool k_as_is = shape.k % kFp8TmaMultiples.k == 0;
    Fp8TrackPlan fastest = fp8_track_plan_in(shape, k_as_is ? Fp8Padding::none : Fp8Padding::k, gpu, sms);
    if (shape.n % kFp8TmaMultiples.n != 0) {
        const Fp8TrackPlan padded_n = fp8_track_plan_in(shape, Fp8Padding::k_and_n, gpu, sms);
        if (padded_n.predicted_seconds < fastest.predicted_seconds) fastest = padded_n;
    }
    return fastest;
}

double fp8_copy_seconds(const GemmShape& shape, Fp8Padding padding) {
    if (padding == Fp8Padding::none) return 0;
    const GemmShape padded = padded_for(shape, padding);
    const double m = shape.m, n = shape.n, k = shape.k;
    // A where K is off; B read and written whole (padded in K or in N); D out where N is off.
    double bytes = (padded.k != shape.k ? m * (k + padded.k) : 0) + n * k + static_cast<double>(padded.n) * padded.k;
    int launches = 1;
    if (padded.n != shape.n) {
        bytes += 2 * m * (n + padded.n);
        ++launches;
    }
    const AnyTileConstants& model = kFp8AnyTileCost.any_tile;
    return launches * model.fixed_seconds + bytes / model.dram_bytes_per_second;
}

AnyTileTerms stage29_tile_terms(const GemmShape& shape, const Fp8Tile& tile, int sms) {
    const GemmShape in_k_tiles = fp8_shape_in_bf16_k_tiles(shape);
    const auto whole = [](double x) { return std::ceil(x - 1e-9); };
    const double stacks = whole(static_cast<double>(shape.m) / (tile.block_m * tile.cluster_m)) *
                          whole(static_cast<double>(shape.n) / tile.block_n);
    const double rounds = whole(stacks / std::min(stacks, std::floor(static_cast<double>(sms) / tile.cluster_m)));
    AnyTileTerms terms;
    terms.sm_k_tiles = rounds * in_k_tiles.k / 64;
    // The cluster's CTAs share B's rows (multicast); two consumers issue four k32 steps each.
    terms.step_bytes = (tile.block_m + static_cast<double>(tile.block_n) / tile.cluster_m) * 64 * 2;
    terms.step_macs = static_cast<double>(tile.block_m) * tile.block_n * 64;
    terms.step_wgmmas = 8;
    terms.dram_bytes =
        2.0 * (static_cast<double>(shape.m) * in_k_tiles.k + static_cast<double>(in_k_tiles.k) * shape.n) +
        4.0 * shape.m * shape.n;
    terms.sm_store_bytes = rounds * 4.0 * tile.block_m * tile.block_n;
    terms.sm_tiles = rounds;
    return terms;
}

bool stage29_stores_from_registers(const Fp8Tile& tile) {
    // 128 rows: a consumer each 64 rows of the tile's columns; 64: the consumers split them.
    const int columns = tile.block_m == 64 ? tile.block_n / 2 : tile.block_n;
    return columns % 64 != 0;
}

Fp8Terms stage29_fp8_terms(const GemmShape& shape, const Fp8Tile& tile) {
    return Fp8Terms{2, static_cast<double>(tile.block_m) * tile.block_n / 2, static_cast<double>(shape.m) * shape.n};
}

void launch_fp8_track_plan(const Fp8TrackPlan& plan, const GemmProblem& problem, Fp8Scaling scaling,
                           const Fp8Operands& operands, __nv_bfloat16* d, cudaStream_t stream) {
    const auto launch = [&](const GemmProblem& on, const Fp8Operands& with, __nv_bfloat16* into) {
        if (plan.stage == 31) return launch_fp8_any_tile_plan(plan.plan, on, scaling, with, into, stream);
        launch_fp8_tile(*plan.tile, on, scaling, with, into, stream);
    };
    if (plan.padding == Fp8Padding::none) return launch(problem, operands, d);
    const Fp8PaddedProblem padded =
        pad_fp8_problem(problem, scaling, operands, d, plan.padding == Fp8Padding::k_and_n, stream);
    launch(padded.problem, padded.operands, padded.d);
    copy_fp8_d_out(problem, padded, d, stream);
}

void launch_fp8_track(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands, __nv_bfloat16* d,
                      cudaStream_t stream) {
    launch_fp8_track_plan(fp8_track_plan(problem.shape, fp8_tiles_gpu_here(), sm_count_here()), problem, scaling,
                          operands, d, stream);
}

}  // namespace sgemm
