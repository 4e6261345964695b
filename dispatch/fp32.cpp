// The FP32 track on CUDA cores: stage 10's kernel on every shape, in the tile and the split
// of K a cost model predicts fastest. Of the CUDA-core stages stage 10's kernel is the
// fastest (the README's table), the only one tuned for this GPU and built for any shape,
// and it comes in several tiles (10_tuned.hpp): 128 x 128 (the tuner's), blocks of 16-64
// rows by 256 columns, 128 x 64, 128 x 32 and 64 x 64. Stage 10's own launcher chooses
// among the first ones by rules; here every tile and every split of K is weighed, and stage
// 10's own plan is kept unless the model predicts another faster by more than a margin, where
// the model's best plans lie so close together that what it lacks would decide. On the H200
// (fitted on seed 71) it runs 32 x 256 on large problems, where that tile took 0.76-0.95x the
// tuner's tile's time, and at the squares, where it ran within 0.3 % of it at 4096 and 1 %
// faster at 8192 (docs/notes/10_tuned.md). The margin is fitted with the constants (scripts/fit_fp32_model.py):
// the one whose choices ran fastest over the fit's problems where stage 10's own plan was
// among the plans timed.
// And the track sums no chain much longer than stage 10's own plan does (kFp32LongestChainOverOwn):
// a plan that splits K less (or in a tile of deeper K steps) sums longer chains in each
// thread, and at 2500^3 the fastest plan's, three times as long, had 1.7x SGEMM's error.
//
// The model (fp32_terms, fp32_predicted_seconds): the blocks (tiles of C times parts of K)
// are dealt evenly to the SMs, and the SM with the most runs them in waves of at most
// blocks_per_sm (what the tile's __launch_bounds__ asks an SM to hold). A block runs its K
// steps at the lesser of two rates: what one block alone reaches, and its share of what a
// full SM reaches:
//   rate = min(alone, full / blocks in the wave) x an SM's FFMA rate
//   compute = sum over the waves on the busiest SM of (a block's FMAs / rate + a start)
//   a start = fixed + seconds a value x the block's tile of C (block_m x block_n)
//   seconds = launch + max(compute, DRAM bytes / DRAM rate) + (split: a launch more, and
//             the partial sums written and read at DRAM's rate)
// Where K (N) is not a multiple of 4, A's (B's) rows start off 16 bytes and the kernel loads
// each of their values alone: each such load costs a fitted number of FMA times, so a tile
// that loads more values an FMA (a narrow one) loses more. (Padded copies, to load float4s, did not pay:
// docs/notes/10_tuned.md.)
// A wave's start grows with the tile: its pipeline's fill and its stores of C. At short K it
// is much of a block's time, and without that term the model rated 128 x 128 blocks too fast
// there (667 x 8060 x 49: 0.72x SGEMM where 64 x 64 ran 0.975x; docs/notes/10_tuned.md).
// The FFMA and DRAM rates are the GPU's measured ceilings; the fixed times, the shares and
// the cost of a value loaded alone are fitted on measured times of every tile in several
// splits of K on a draw of problems (scripts/fit_fp32_model.py, which writes
// dispatch/fp32_fit.hpp).
#include "dispatch/fp32.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>

#include "dispatch/fp32_fit.hpp"

namespace sgemm {
namespace {

// A part of K keeps at least this many K steps: fewer, and its loads are mostly prologue.
constexpr int kMinStepsPerPart = 4;
constexpr int kMaxParts = 64;

const Fp32TileShares& shares_of(const Stage10Tile& tile) {
    for (const Fp32TileShares& shares : kFp32TileShares)
        if (shares.tile == tile.name) return shares;
    throw std::logic_error("the fp32 track's model has no shares for stage 10's tile " + std::string(tile.name));
}

}  // namespace

Fp32Terms fp32_terms(const GemmShape& shape, const Stage10Tile& tile, int parts, int sms) {
    const double m = shape.m, n = shape.n, k = shape.k;
    const double tiles = std::ceil(m / tile.block_m) * std::ceil(n / tile.block_n);
    const double steps = std::ceil(k / tile.block_k);
    const double on_busiest = std::ceil(tiles * parts / sms);
    const double full_waves = std::floor(on_busiest / tile.blocks_per_sm);
    return Fp32Terms{double(tile.block_m) * tile.block_n * tile.block_k * std::ceil(steps / parts),
                     full_waves,
                     on_busiest - full_waves * tile.blocks_per_sm,
                     double(tile.blocks_per_sm),
                     4.0 * (m * k + k * n + m * n),
                     parts > 1 ? 4.0 * m * n * (2.0 * parts + 1) : 0.0,
                     (shape.k % 4 != 0 ? 1.0 / tile.block_n : 0.0) + (shape.n % 4 != 0 ? 1.0 / tile.block_m : 0.0),
                     double(tile.block_m) * tile.block_n};
}

double fp32_predicted_seconds(const Fp32Terms& terms, const Fp32TileShares& shares, const Fp32ModelConstants& model) {
    const double fma_times = terms.block_fmas * (1.0 + model.float_load_fmas * terms.float_loads_per_fma);
    const auto wave_seconds = [&](double blocks) {
        const double rate = std::min(shares.alone, shares.full / blocks) * model.fmas_per_second_per_sm;
        return fma_times / rate + model.block_start_seconds + model.tile_value_seconds * terms.block_values;
    };
    const double compute = terms.full_waves * wave_seconds(terms.blocks_per_sm) +
                           (terms.last_wave > 0 ? wave_seconds(terms.last_wave) : 0.0);
    const double split =
        terms.split_bytes > 0 ? model.split_launch_seconds + terms.split_bytes / model.dram_bytes_per_second : 0.0;
    return model.launch_seconds + std::max(compute, terms.dram_bytes / model.dram_bytes_per_second) + split;
}

double fp32_predicted_seconds(const GemmShape& shape, const Stage10Tile& tile, int parts, int sms) {
    return fp32_predicted_seconds(fp32_terms(shape, tile, parts, sms), shares_of(tile), kFp32Model);
}

std::vector<int> fp32_parts_weighed(const GemmShape& shape, const Stage10Tile& tile, int most_products_per_part) {
    const int steps = (shape.k + tile.block_k - 1) / tile.block_k;
    const auto short_enough = [&](int p) {
        return most_products_per_part == 0 || (steps + p - 1) / p * tile.block_k <= most_products_per_part ||
               p == kMaxParts;
    };
    std::vector<int> parts{1};
    for (int p = 2; p <= kMaxParts && steps / p >= kMinStepsPerPart; ++p)
        if (short_enough(p)) parts.push_back(p);
    return parts;
}

namespace {

// Of every tile and split of K stage 10 offers (fp32_parts_weighed) that `allowed` takes, the
// one the model predicts fastest; `first` where it takes none.
template <class Allowed>
Fp32Plan fastest_plan(const GemmShape& shape, int sms, int most_products_per_part, const Fp32Plan& first,
                      const Allowed& allowed) {
    Fp32Plan best = first;
    for (const Stage10Tile& tile : stage10_tiles()) {
        const Fp32TileShares& shares = shares_of(tile);
        for (const int parts : fp32_parts_weighed(shape, tile, most_products_per_part)) {
            if (!allowed(tile, parts)) continue;
            const double seconds = fp32_predicted_seconds(fp32_terms(shape, tile, parts, sms), shares, kFp32Model);
            if (seconds < best.seconds) best = Fp32Plan{tile, parts, seconds};
        }
    }
    return best;
}

}  // namespace

Fp32Plan fp32_plan(const GemmShape& shape, int sms, int most_products_per_part) {
    const Stage10Tile& first = stage10_tiles().front();
    return fastest_plan(shape, sms, most_products_per_part,
                        Fp32Plan{first, 1, fp32_predicted_seconds(shape, first, 1, sms)},
                        [](const Stage10Tile&, int) { return true; });
}

int fp32_chain(const GemmShape& shape, const Stage10Tile& tile, int parts) {
    const int steps = (shape.k + tile.block_k - 1) / tile.block_k;
    return std::min((steps + parts - 1) / parts * tile.block_k, shape.k);  // the K tail's zeros add nothing
}

Stage10Slots modelled_slots(int sms) {
    return [sms](const Stage10Tile& tile) { return tile.blocks_per_sm * sms; };
}

Fp32Plan fp32_stage10_plan(const GemmShape& shape, int sms, const Stage10Slots& slots) {
    const Stage10Choice own = tuned_choice(shape, slots);
    return Fp32Plan{own.tile, own.parts, fp32_predicted_seconds(shape, own.tile, own.parts, sms)};
}

Fp32Plan fp32_track_plan(const GemmShape& shape, int sms, const Stage10Slots& slots, double longest_chain_over_own) {
    const Fp32Plan own = fp32_stage10_plan(shape, sms, slots);
    const double longest_chain = longest_chain_over_own * fp32_chain(shape, own.tile, own.parts);
    const Fp32Plan fastest = fastest_plan(shape, sms, 0, own, [&](const Stage10Tile& tile, int parts) {
        return fp32_chain(shape, tile, parts) <= longest_chain;
    });
    return fastest.seconds * (1.0 + kFp32OwnPlanMargin) < own.seconds ? fastest : own;
}

KernelChoice choose_fp32_kernel(const GemmShape& shape, int sms, const Stage10Slots& slots) {
    return KernelChoice{10, false, fp32_track_plan(shape, sms, slots).tile.name};
}

void launch_fp32_plan(const Fp32Plan& plan, const GemmProblem& problem, const float* a, const float* b, float* c,
                      cudaStream_t stream) {
    launch_tuned_tile(plan.tile, plan.parts, problem, a, b, c, stream);
}

void launch_fp32_track(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream) {
    launch_fp32_plan(fp32_track_plan(problem.shape, sm_count_here(), stage10_tile_slots), problem, a, b, c, stream);
}

}  // namespace sgemm
