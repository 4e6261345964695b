// Timing a stage against cuBLAS, in the same process, taking turns.
//
// Every launch is timed alone with CUDA events, and before each the L2 cache is flushed
// (a write over twice its size), so small problems, whose inputs would otherwise stay in
// L2 from the previous launch, are measured as they run in an application, not as a
// cache artefact. Each figure is the median of the counted launches.
//
// How the two take turns (TimingMethod) decides what their ratio means on a GPU that
// holds a power cap by lowering its clock, as the H100 does:
//   launches: one launch of each, alternately (the order flips every repetition). Slow
//     drift (heat, clock) hits both alike. But the power control takes about 0.1 s to
//     settle after a change of kernel, longer than a launch, so both run at one clock
//     set by their mix: the ratio is work per clock.
//   blocks: kBlockSeconds of launches of one, then of the other (stage, cuBLAS, cuBLAS,
//     stage, ...), counting only the launches that start after the first
//     kSettleSeconds of a block. Each then runs at the clock its own power draw allows,
//     as in an application that calls it back to back: the ratio is work per joule at
//     the cap. A kernel that draws less power per clock than cuBLAS scores higher here.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "measuring/sm_clock.hpp"

namespace sgemm {

enum class TimingMethod { launches, blocks };

std::string_view to_string(TimingMethod method);  // "launches", "blocks"

// Every method's name, for the command lines to check --timing against (CLI::IsMember).
std::vector<std::string> timing_method_names();

// The method of that name; the command lines check the name first, so any other name is
// a programming error and throws std::invalid_argument.
TimingMethod timing_method_named(std::string_view name);

struct TimingSettings {
    int reps = 0;                // launches: 0 = as many as fit in the time budget
    double time_budget_s = 1.0;  // per measurement (stage and cuBLAS together)
    TimingMethod method = TimingMethod::launches;
};

struct InterleavedTiming {
    double stage_median_ms = 0.0;
    double cublas_median_ms = 0.0;
    int reps = 0;  // launches of the stage counted
    TimingMethod method = TimingMethod::launches;
    // The SM clock while each was timed (sm_clock.hpp). Launch by launch one pair of
    // stamps brackets both, so the two are the same. The stamps bracket the L2 flushes
    // between the launches too, which at small sizes (N = 1024) take longer than the
    // kernels: there the clock is mostly the flushes'.
    std::optional<double> stage_clock_mhz;
    std::optional<double> cublas_clock_mhz;
};

// Launch by launch, the budget sets the repetitions: a measurement lasts the budget, long
// beside the power control's settling time, so that short launches are not timed as a
// burst at the clock the GPU had before. The cap bounds only the events' memory.
constexpr int kMinAutoReps = 3;
constexpr int kMaxAutoReps = 20000;

// The H100's power control settles within about 0.1 s of a change of kernel (measured:
// blocks of 0.05 s still read like launch by launch, blocks of 0.2 s like 2 s ones).
constexpr double kBlockSeconds = 0.5;
constexpr double kSettleSeconds = 0.2;

// `prepare` runs before every launch, outside the timed region (e.g. restoring C).
// `clock` (two slots), when given, reads the SM clock over the launches that are counted.
InterleavedTiming time_interleaved(const std::function<void()>& stage,
                                   const std::function<void()>& cublas,
                                   const std::function<void()>& prepare,
                                   const TimingSettings& settings, std::size_t l2_bytes,
                                   cudaStream_t stream, const SmClockStamps* clock = nullptr);

// Repetitions that fit the budget given the time of one pair of launches.
int reps_for_budget(double pair_ms, double time_budget_s);

// Blocks of each kernel for a time budget: at least two, so that each kernel runs once
// before and once after the other.
int blocks_per_kernel(double time_budget_s);

double median(std::vector<double> values);

}  // namespace sgemm
