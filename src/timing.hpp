// Timing a stage against cuBLAS, interleaved.
//
// Each repetition times one launch of the stage and one of cuBLAS with CUDA events
// (the order alternates between repetitions), so clock changes, heat and power
// limits hit both alike and their ratio is stable even when absolute numbers move.
// Before every timed launch the L2 cache is flushed (a write over twice its size),
// so small problems, whose inputs would otherwise stay in L2 from the previous
// launch, are measured as they run in an application, not as a cache artefact.
// The result is the median over the repetitions.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <vector>

namespace sgemm {

struct TimingSettings {
    int reps = 0;                // 0: as many as fit in the time budget
    double time_budget_s = 1.0;  // per measurement (stage and cuBLAS together)
};

struct InterleavedTiming {
    double stage_median_ms = 0.0;
    double cublas_median_ms = 0.0;
    int reps = 0;
};

constexpr int kMinAutoReps = 3;
constexpr int kMaxAutoReps = 200;

// `prepare` runs before every launch, outside the timed region (e.g. restoring C).
InterleavedTiming time_interleaved(const std::function<void()>& stage,
                                   const std::function<void()>& cublas,
                                   const std::function<void()>& prepare,
                                   const TimingSettings& settings, std::size_t l2_bytes,
                                   cudaStream_t stream);

// Repetitions that fit the budget given the time of one pair of launches.
int reps_for_budget(double pair_ms, double time_budget_s);

double median(std::vector<double> values);

}  // namespace sgemm
