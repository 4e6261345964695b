#include "timing.hpp"

#include <algorithm>
#include <cmath>

#include "device_buffer.hpp"

namespace sgemm {
namespace {

float elapsed_ms(const CudaEvent& start, const CudaEvent& stop) {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return ms;
}

// The events around one timed launch; read after the stream is synchronized.
struct TimedLaunch {
    CudaEvent start;
    CudaEvent stop;
};

}  // namespace

int reps_for_budget(double pair_ms, double time_budget_s) {
    if (!(pair_ms > 0.0)) return kMaxAutoReps;
    const double fitting = time_budget_s * 1e3 / pair_ms;
    return static_cast<int>(std::clamp(std::floor(fitting), double(kMinAutoReps), double(kMaxAutoReps)));
}

double median(std::vector<double> values) {
    if (values.empty()) return 0.0;
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

InterleavedTiming time_interleaved(const std::function<void()>& stage,
                                   const std::function<void()>& cublas,
                                   const std::function<void()>& prepare,
                                   const TimingSettings& settings, std::size_t l2_bytes,
                                   cudaStream_t stream) {
    DeviceBuffer<char> flush_buffer(2 * l2_bytes);
    const auto timed = [&](const std::function<void()>& launch, TimedLaunch& events) {
        prepare();
        CUDA_CHECK(cudaMemsetAsync(flush_buffer.data(), 0, flush_buffer.bytes(), stream));
        CUDA_CHECK(cudaEventRecord(events.start.get(), stream));
        launch();
        CUDA_CHECK(cudaEventRecord(events.stop.get(), stream));
        CUDA_CHECK(cudaGetLastError());
    };

    // Warm-up (module loading, cuBLAS heuristics), then one timed pair to size the run.
    TimedLaunch warm_stage, warm_cublas;
    timed(stage, warm_stage);
    timed(cublas, warm_cublas);
    timed(stage, warm_stage);
    timed(cublas, warm_cublas);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const int reps = settings.reps > 0
                         ? settings.reps
                         : reps_for_budget(elapsed_ms(warm_stage.start, warm_stage.stop) +
                                               elapsed_ms(warm_cublas.start, warm_cublas.stop),
                                           settings.time_budget_s);

    std::vector<TimedLaunch> stage_events(reps);
    std::vector<TimedLaunch> cublas_events(reps);
    for (int rep = 0; rep < reps; ++rep) {
        if (rep % 2 == 0) {
            timed(stage, stage_events[rep]);
            timed(cublas, cublas_events[rep]);
        } else {
            timed(cublas, cublas_events[rep]);
            timed(stage, stage_events[rep]);
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));

    std::vector<double> stage_ms, cublas_ms;
    for (int rep = 0; rep < reps; ++rep) {
        stage_ms.push_back(elapsed_ms(stage_events[rep].start, stage_events[rep].stop));
        cublas_ms.push_back(elapsed_ms(cublas_events[rep].start, cublas_events[rep].stop));
    }
    return InterleavedTiming{median(stage_ms), median(cublas_ms), reps};
}

}  // namespace sgemm
