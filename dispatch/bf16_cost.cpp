#include "dispatch/bf16_cost.hpp"

#include <algorithm>

#include "14_multistage.hpp"
#include "20_hopper_tuned.hpp"
#include "common/padded_launch.cuh"
#include "dispatch/padding_cost.hpp"

namespace sgemm {
namespace {

constexpr int kStepK = 64;
constexpr GemmShape kTmaMultiples{1, 8, 8};

double ceil_div(double a, double b) { return static_cast<double>(static_cast<long long>((a + b - 1) / b)); }

// A and B read once, C written once: the least any kernel moves.
double least_dram_bytes(const GemmShape& s) {
    return 2.0 * (static_cast<double>(s.m) * s.k + static_cast<double>(s.k) * s.n) + 4.0 * s.m * s.n;
}

}  // namespace

double predicted_seconds(const CostTerms& t, const CostConstants& c) {
    const double step_seconds = std::max(t.step_bytes / c.load_bytes_per_second, t.step_macs / c.macs_per_second);
    return c.fixed_seconds +
           std::max(t.dram_bytes / c.dram_bytes_per_second, t.sm_steps * step_seconds) +
           t.split_bytes / c.split_bytes_per_second + t.copy_bytes / c.copy_bytes_per_second;
}

// Stage 20 is persistent and shares leftover tiles out by K (stream-K), so its K steps
// spread evenly over the SMs, at least one each; a tile's B slabs are multicast
// to the cluster's CTAs. Where C has fewer tiles than the GPU has SMs, each tile's K is
// shared by up to SMs / tiles of them, each of which leaves a partial tile for the one
// that finishes it.
CostTerms stage20_terms(const GemmShape& shape, int sms) {
    const HopperTile tile = hopper_tuned_tile(shape, sms);
    const double tiles = ceil_div(shape.m, tile.block_m) * ceil_div(shape.n, tile.block_n);
    const double k_steps = ceil_div(shape.k, kStepK);
    const double tile_bytes = 4.0 * tile.block_m * tile.block_n;
    CostTerms terms;
    terms.dram_bytes = least_dram_bytes(shape);
    terms.sm_steps = std::max(tiles * k_steps / sms, 1.0);
    terms.step_bytes = (tile.block_m + static_cast<double>(tile.block_n) / tile.cluster_m) * kStepK * 2;
    terms.step_macs = static_cast<double>(tile.block_m) * tile.block_n * kStepK;
    terms.split_bytes = tiles < sms ? std::min(ceil_div(sms, tiles), k_steps) * tile_bytes : 0;
    return terms;
}

CostTerms stage20_padded_terms(const GemmShape& shape, int sms) {
    CostTerms terms = stage20_terms(padded_shape(shape, kTmaMultiples), sms);
    terms.copy_bytes = static_cast<double>(padded_copy_bytes(shape, kTmaMultiples, 2));
    return terms;
}

// Stage 25 runs one wave of CTAs (or more, unsplit, where C has more tiles than the GPU
// holds), each a tile over its part of K; B is read once for each token tile. A split
// CTA writes its partial tile into shared memory and reads a tile's worth from the
// cluster's.
CostTerms stage25_terms(const GemmShape& shape, const ResidentCtas& resident) {
    const FewTokensPlan plan = few_tokens_plan(shape, resident);
    const double token_tiles = ceil_div(shape.m, plan.tokens);
    const double waves = ceil_div(token_tiles * ceil_div(shape.n, plan.columns) * plan.splits, std::max(resident[1], 1));
    CostTerms terms;
    terms.dram_bytes = least_dram_bytes(shape) + 2.0 * shape.k * shape.n * (token_tiles - 1);
    terms.sm_steps = waves * ceil_div(ceil_div(shape.k, kStepK), plan.splits);
    terms.step_bytes = (static_cast<double>(plan.columns) + plan.tokens) * kStepK * 2;
    terms.step_macs = static_cast<double>(plan.columns) * plan.tokens * kStepK;
    terms.split_bytes = plan.splits > 1 ? 2.0 * 4 * plan.columns * plan.tokens : 0;
    return terms;
}

// Stage 14 runs a grid of tiles, one or two at a time on an SM, sharing its tensor cores,
// so an SM goes through the K steps of all the tiles it is given; tiles split along K
// (the tail, or all of them where they are few) each leave `parts` partial tiles, which a
// second kernel adds up.
CostTerms stage14_terms(const GemmShape& shape, int sms) {
    const MultistagePlan plan = multistage_plan(shape, sms);
    const double tiles = ceil_div(shape.m, plan.block_m) * ceil_div(shape.n, plan.block_n);
    const double k_steps = ceil_div(shape.k, kStepK);
    const double split_tiles = tiles - plan.full_tiles;
    CostTerms terms;
    terms.dram_bytes = least_dram_bytes(shape);
    terms.sm_steps = ceil_div(plan.full_tiles, sms) * k_steps +
                     ceil_div(split_tiles * plan.parts, sms) * ceil_div(k_steps, plan.parts);
    terms.step_bytes = (static_cast<double>(plan.block_m) + plan.block_n) * kStepK * 2;
    terms.step_macs = static_cast<double>(plan.block_m) * plan.block_n * kStepK;
    terms.split_bytes = plan.parts > 1 ? 4.0 * plan.parts * plan.block_m * plan.block_n : 0;
    return terms;
}

}  // namespace sgemm
