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
//   graph: for launches too short for an event pair and a flush around each (under
//     about 100 us, where both add microseconds to either side and pull the ratio toward
//     100 %). Each kernel's launches are captured back to back into a CUDA graph, over
//     `copies` sets of operands in turn, enough to take them past twice the L2's size,
//     so that no launch finds its inputs in L2 and nothing but the kernels runs between
//     launches. The stage's graph and cuBLAS's alternate (the order flips every
//     repetition); a launch's time is its graph's over the launches in it. C is not
//     restored between the launches of a graph (beta != 0 sums on; the time is the same).
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

enum class TimingMethod { launches, blocks, graph };

std::string_view to_string(TimingMethod method);  // "launches", "blocks", "graph"

// Every method's name, for the command lines to check --timing against (CLI::IsMember).
std::vector<std::string> timing_method_names();

// The method of that name; the command lines check the name first, so any other name is
// a programming error and throws std::invalid_argument.
TimingMethod timing_method_named(std::string_view name);

struct TimingSettings {
    int reps = 0;                // launches, graph: 0 = as many as fit in the time budget
    double time_budget_s = 1.0;  // per measurement (stage and cuBLAS together)
    TimingMethod method = TimingMethod::launches;
};

struct InterleavedTiming {
    double stage_median_ms = 0.0;
    double cublas_median_ms = 0.0;
    int reps = 0;  // launches of the stage counted (graph: graphs)
    TimingMethod method = TimingMethod::launches;
    // The SM clock while each was timed (sm_clock.hpp). Launch by launch one pair of
    // stamps brackets both, so the two are the same. The stamps bracket the L2 flushes
    // between the launches too, which at small sizes (N = 1024) take longer than the
    // kernels: there the clock is mostly the flushes'.
    std::optional<double> stage_clock_mhz;
    std::optional<double> cublas_clock_mhz;
    int graph_launches = 0;  // graph: the launches in each graph, over graph_copies operand sets
    int graph_copies = 0;
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

// The graph's launches: between about kGraphMs of work and kMaxGraphLaunches launches, a
// whole number of rounds over the operand sets; at most kMaxGraphCopies sets.
constexpr double kGraphMs = 2.0;
constexpr int kMaxGraphLaunches = 512;
constexpr int kMaxGraphCopies = 64;

// A kernel's launch on operand set `copy` (0 .. copies - 1): the two that are timed, on
// `copies` sets (set 0 for launches and blocks; every set in turn for graph).
struct TimedKernels {
    std::function<void(int copy)> stage;
    std::function<void(int copy)> cublas;
    int copies = 1;
};

// The operand sets the graph method takes launches over: enough that their bytes reach
// twice the L2's, at most kMaxGraphCopies.
int graph_copies_for(std::size_t operand_bytes, std::size_t l2_bytes);

// `prepare` runs before every launch, outside the timed region (e.g. restoring C; not
// between a graph's launches). `clock` (two slots), when given, reads the SM clock over
// the launches that are counted.
InterleavedTiming time_interleaved(const TimedKernels& kernels,
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
