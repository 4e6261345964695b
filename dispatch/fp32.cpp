// The FP32 track on CUDA cores: stage 10's kernel on every shape, in the tile and the split
// of K a cost model predicts fastest. Of the CUDA-core stages stage 10's kernel is the
// fastest (the README's table), the only one tuned for this GPU and built for any shape,
// and it comes in several tiles (10_tuned.hpp): 128 x 128 (the tuner's), blocks of 16-64
// rows by 256 columns, 128 x 64, 128 x 32 and 64 x 64. Stage 10's own launcher chooses
// among the first ones by rules; here every tile and every split of K is weighed.
//
// The model: the blocks (tiles of C times parts of K) are dealt evenly to the SMs, and the
// SM with the most runs them in waves of at most blocks_per_sm (what the tile's
// __launch_bounds__ asks an SM to hold). A block runs its K steps at the lesser of two
// rates: what one block alone reaches, and its share of what a full SM reaches:
//   rate = min(alone x ceiling, full x ceiling / blocks in the wave)
//   compute = sum over the waves on the busiest SM of (K steps a part x FMAs a step / rate
//             + a block's start)
//   seconds = launch + max(compute, DRAM bytes / DRAM rate) + (split: a launch more, and
//             the partial sums written and read)
// The FFMA ceiling and the DRAM rate are the H100's measured ones (ceilings.csv: 65.1
// TFLOPS, 2.83 TB/s). Of the tiles' shares of the ceiling, three come from device run 59 and
// the rest are set, not fitted:
// - 128 x 128 full, 0.73: stage 10's 47.5 TFLOPS at 4096 over the ceiling;
// - 128 x 128 alone, 0.365, as in a full SM: with K in 8 parts, 128 x 6144 x 4096 put
//   three blocks on some SMs, and the third, alone, took as long as the two before it
//   together (210 us against 170 us in 5 parts, two blocks an SM); 408 x 47 x 227 unsplit
//   took 37 us, 29 K steps of one block alone;
// - 128 x 32 alone, 0.19: 408 x 47 x 227 in 3 parts took 14.5 us, 5 steps;
// - 64 x 256 full, 0.55: 671 x 5888 x 17152 took 1.12x as long in it, whole K, as in 128 x
//   128 in 6 parts.
#include "dispatch/fp32.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sgemm {
namespace {

constexpr double kFmasPerSecondPerSm = 65.1e12 / 2 / 132;
constexpr double kDramBytesPerSecond = 2.83e12;
constexpr double kLaunchSeconds = 3e-6, kPartSumLaunchSeconds = 2e-6, kBlockStartSeconds = 1e-6;
// A part of K keeps at least this many K steps: fewer, and its loads are mostly prologue.
constexpr int kMinStepsPerPart = 4;
constexpr int kMaxParts = 64;

// The shares of the FFMA ceiling a tile's kernel reaches with an SM full of its blocks, and
// with one block alone on the SM.
struct CeilingShares {
    double full, alone;
};

CeilingShares ceiling_shares(const Stage10Tile& tile) {
    const std::string_view name = tile.name;
    if (name == "128x128") return {0.73, 0.365};
    if (name == "64x256") return {0.55, 0.365};                      // 8 x 16 outputs a thread, as 128 x 128
    if (name == "32x256" || name == "128x64") return {0.55, 0.25};   // 8 x 8
    if (name == "16x256") return {0.40, 0.15};                       // 4 x 8
    if (name == "128x32" || name == "64x64") return {0.50, 0.19};    // 8 x 4
    throw std::logic_error("the fp32 track's model has no shares for stage 10's tile " + std::string(name));
}

}  // namespace

double fp32_predicted_seconds(const GemmShape& shape, const Stage10Tile& tile, int parts, int sms) {
    const double m = shape.m, n = shape.n, k = shape.k;
    const double tiles = std::ceil(m / tile.block_m) * std::ceil(n / tile.block_n);
    const double steps = std::ceil(k / tile.block_k);
    const CeilingShares shares = ceiling_shares(tile);
    const double block_fmas = double(tile.block_m) * tile.block_n * tile.block_k * std::ceil(steps / parts);
    const auto wave_seconds = [&](double blocks) {
        const double rate = std::min(shares.alone, shares.full / blocks) * kFmasPerSecondPerSm;
        return block_fmas / rate + kBlockStartSeconds;
    };
    const double on_busiest = std::ceil(tiles * parts / sms);
    const double full_waves = std::floor(on_busiest / tile.blocks_per_sm);
    const double last_wave = on_busiest - full_waves * tile.blocks_per_sm;
    const double compute = full_waves * wave_seconds(tile.blocks_per_sm) + (last_wave > 0 ? wave_seconds(last_wave) : 0.0);
    const double dram = 4.0 * (m * k + k * n + m * n) / kDramBytesPerSecond;
    const double split = parts > 1 ? kPartSumLaunchSeconds + 4.0 * m * n * (2.0 * parts + 1) / kDramBytesPerSecond : 0.0;
    return kLaunchSeconds + std::max(compute, dram) + split;
}

Fp32Plan fp32_plan(const GemmShape& shape, int sms) {
    Fp32Plan best{stage10_tiles().front(), 1, 0.0};
    best.seconds = fp32_predicted_seconds(shape, best.tile, 1, sms);
    for (const Stage10Tile& tile : stage10_tiles()) {
        const int steps = (shape.k + tile.block_k - 1) / tile.block_k;
        for (int parts = 1; parts <= kMaxParts && (parts == 1 || steps / parts >= kMinStepsPerPart); ++parts) {
            const double seconds = fp32_predicted_seconds(shape, tile, parts, sms);
            if (seconds < best.seconds) best = Fp32Plan{tile, parts, seconds};
        }
    }
    return best;
}

KernelChoice choose_fp32_kernel(const GemmShape& shape, int sms) {
    return KernelChoice{10, false, fp32_plan(shape, sms).tile.name};
}

void launch_fp32_track(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream) {
    const Fp32Plan plan = fp32_plan(problem.shape, sm_count_here());
    launch_tuned_tile(plan.tile, plan.parts, problem, a, b, c, stream);
}

}  // namespace sgemm
