// The FP32 track on CUDA cores (sgemm fp32): FP32 inputs, arithmetic and C, as SGEMM.
#pragma once

#include <string_view>
#include <vector>

#include "10_tuned.hpp"
#include "common/gemm_problem.hpp"
#include "dispatch/kernel_choice.hpp"

namespace sgemm {

// The model's constants (dispatch/fp32_fit.hpp holds the fitted ones): fixed times, the
// rates it takes as measured, and each tile's shares of an SM's FFMA rate.
struct Fp32ModelConstants {
    double launch_seconds;        // a launch, and whatever else each plan pays once
    double split_launch_seconds;  // the kernel that adds a split's parts
    double block_start_seconds;   // each wave of blocks: prologue and epilogue
    double float_load_fmas;       // a value loaded alone (rows off 16 bytes) costs as many FMAs
    double tile_value_seconds;    // each wave, for each value of a block's C tile: its pipeline's
                                  // fill and its stores, which grow with the tile (short K)
    double fmas_per_second_per_sm;
    double dram_bytes_per_second;
};

// The shares of an SM's FFMA rate a tile's blocks reach: `full` all together when the SM
// holds as many as it can, `alone` one block by itself.
struct Fp32TileShares {
    std::string_view tile;  // Stage10Tile::name
    double full, alone;
};

// What the model's time for a tile and a split of K on a shape is made of: the blocks
// (tiles of C times parts of K) dealt evenly to the SMs, the busiest SM running its own
// in waves of at most blocks_per_sm.
struct Fp32Terms {
    double block_fmas;     // a block's FMAs: its tile times its part of K
    double full_waves;     // on the busiest SM, waves of blocks_per_sm blocks
    double last_wave;      // the blocks of its last, partial wave (0: none)
    double blocks_per_sm;
    double dram_bytes;     // A, B and C once
    double split_bytes;    // the parts' sums written and read (0: K not split)
    // Rows off 16 bytes are loaded value by value: the values a block so loads a K step over
    // its FMAs a K step, 1 / block_n for A's (K not a multiple of 4) and 1 / block_m for
    // B's (N not a multiple of 4); 0 where rows load as float4s.
    double float_loads_per_fma;
    double block_values;  // a block's tile of C: block_m block_n
};

Fp32Terms fp32_terms(const GemmShape& shape, const Stage10Tile& tile, int parts, int sms);
double fp32_predicted_seconds(const Fp32Terms& terms, const Fp32TileShares& shares, const Fp32ModelConstants& model);

// Stage 10's kernel in one of its tiles, K split into `parts`, and the time the model
// predicts for it.
struct Fp32Plan {
    Stage10Tile tile;
    int parts;
    double seconds;
};

// The model's time for the shape in `tile`, K in `parts`, on a GPU of `sms` SMs, with the
// fitted constants.
double fp32_predicted_seconds(const GemmShape& shape, const Stage10Tile& tile, int parts, int sms);

// The splits of K the track weighs for a tile: 1 to kMaxParts parts of at least
// kMinStepsPerPart K steps each; given most_products_per_part, K whole or parts that sum at
// most that many products each (or kMaxParts, where K is longer than that many parts).
std::vector<int> fp32_parts_weighed(const GemmShape& shape, const Stage10Tile& tile, int most_products_per_part = 0);

// Of every tile and split of K stage 10 offers (fp32_parts_weighed), the one the model
// predicts fastest.
Fp32Plan fp32_plan(const GemmShape& shape, int sms, int most_products_per_part = 0);

// The blocks of each tile the model takes a GPU of `sms` SMs to run at once: its blocks_per_sm
// on each SM, for a GPU the model runs without (on one, stage10_tile_slots, the same on an H200).
Stage10Slots modelled_slots(int sms);

// Stage 10's own plan (the tile and split of K its launcher chooses by its rules, tuned_choice
// in 10_tuned.hpp) on a GPU of `sms` SMs that runs slots(tile) blocks at once, and the model's
// time for it.
Fp32Plan fp32_stage10_plan(const GemmShape& shape, int sms, const Stage10Slots& slots);

// The K values each thread sums in one chain in the tile, K in `parts`: a part's K steps, at
// most K (the zeros past K's end add nothing).
int fp32_chain(const GemmShape& shape, const Stage10Tile& tile, int parts);

// How much longer than stage 10's own plan's the track's chains may be: a sum's rounding error
// on data of both signs grows as the square root of its length, so that the track's error stays
// within 1.25x of stage 10's own launcher's, which matches SGEMM's or is below it on the
// accuracy table's problems (docs/notes/10_tuned.md).
constexpr double kFp32LongestChainOverOwn = 1.5625;  // 1.25^2

// The track's plan: stage 10's own, unless the model predicts another faster by more than the
// fitted margin (kFp32OwnPlanMargin), which is what the model cannot tell apart; of the plans
// whose chains are at most longest_chain_over_own times the own plan's.
Fp32Plan fp32_track_plan(const GemmShape& shape, int sms, const Stage10Slots& slots,
                         double longest_chain_over_own = kFp32LongestChainOverOwn);

// Stage 10's kernel in the plan's tile and split of K.
void launch_fp32_plan(const Fp32Plan& plan, const GemmProblem& problem, const float* a, const float* b, float* c,
                      cudaStream_t stream);

KernelChoice choose_fp32_kernel(const GemmShape& shape, int sms, const Stage10Slots& slots);

void launch_fp32_track(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream);

}  // namespace sgemm
