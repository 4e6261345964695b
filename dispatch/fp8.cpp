#include "dispatch/fp8.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "29_fp8_tiles.hpp"
#include "common/fp8_padded_launch.cuh"
#include "common/padded_launch.cuh"
#include "dispatch/fp8_fit.hpp"
#include "dispatch/fp8_tiles.hpp"

namespace sgemm {

// Stages 29 and 31 promote; 27 and 28 run stage 29's kernel in one tile; 26 does not promote.
// N off 8 or K off 16 on zero-padded copies, the plan chosen for the padded shape.
KernelChoice choose_fp8_kernel(const GemmShape& shape, Fp8Scaling) {
    const bool as_is = takes_as_is(shape, kFp8TmaMultiples);
    const Fp8TrackPlan plan =
        fp8_track_plan(padded_shape(shape, kFp8TmaMultiples), fp8_tiles_gpu_here(), sm_count_here());
    return KernelChoice{plan.stage, !as_is, plan.tile ? plan.tile->name : std::string_view{}};
}

Fp8TrackPlan fp8_track_plan(const GemmShape& shape, const Fp8TilesGpu& gpu, int sms) {
    Fp8TrackPlan fastest;
    for (const Fp8Tile& tile : fp8_tiles()) {
        const AnyTileTerms terms = stage29_tile_terms(shape, tile, sms);
        const double seconds = fp8_predicted_seconds(terms, stage29_fp8_terms(shape, tile), kStage29Cost,
                                                     stage29_stores_from_registers(tile));
        if (!fastest.tile || seconds < fastest.predicted_seconds) fastest = Fp8TrackPlan{29, &tile, {}, seconds};
    }
    const std::optional<AnyTileCandidate> stage31 = fastest_fp8_any_tile_plan(shape, gpu);
    if (stage31 && stage31->predicted_seconds < fastest.predicted_seconds)
        fastest = Fp8TrackPlan{31, nullptr, stage31->plan, stage31->predicted_seconds};
    return fastest;
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

namespace {

// On a shape the kernels take as it is.
void launch_fp8_track_plan(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                           __nv_bfloat16* d, cudaStream_t stream) {
    const Fp8TrackPlan plan = fp8_track_plan(problem.shape, fp8_tiles_gpu_here(), sm_count_here());
    if (plan.stage == 31) return launch_fp8_any_tile_plan(plan.plan, problem, scaling, operands, d, stream);
    launch_fp8_tile(*plan.tile, problem, scaling, operands, d, stream);
}

}  // namespace

void launch_fp8_track(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands, __nv_bfloat16* d,
                      cudaStream_t stream) {
    if (takes_as_is(problem.shape, kFp8TmaMultiples))
        return launch_fp8_track_plan(problem, scaling, operands, d, stream);
    launch_fp8_padded(problem, scaling, operands, d, stream, launch_fp8_track_plan);
}

}  // namespace sgemm
