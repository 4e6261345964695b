#include "measuring/microbenchmark.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "measuring/sm_clock.hpp"

namespace sgemm {

namespace {

// Launch `run` of kTimedLaunches lies between clock stamps `run` and `run + 1`.
FastestLaunch fastest_launch(const std::function<void()>& launch, cudaStream_t stream,
                             const SmClockStamps* clock) {
    launch();
    CUDA_CHECK(cudaGetLastError());
    std::vector<CudaEvent> starts(kTimedLaunches), stops(kTimedLaunches);
    if (clock != nullptr) clock->stamp(0, stream);
    for (int run = 0; run < kTimedLaunches; ++run) {
        CUDA_CHECK(cudaEventRecord(starts[run].get(), stream));
        launch();
        CUDA_CHECK(cudaEventRecord(stops[run].get(), stream));
        if (clock != nullptr) clock->stamp(run + 1, stream);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    FastestLaunch fastest;
    for (int run = 0; run < kTimedLaunches; ++run) {
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, starts[run].get(), stops[run].get()));
        if (run > 0 && ms >= fastest.ms) continue;
        fastest.ms = ms;
        if (clock != nullptr) fastest.clock_mhz = clock->mhz_between(run, run + 1);
    }
    return fastest;
}

}  // namespace

double fastest_launch_ms(const std::function<void()>& launch, cudaStream_t stream) {
    return fastest_launch(launch, stream, nullptr).ms;
}

FastestLaunch fastest_launch_with_clock(const std::function<void()>& launch, cudaStream_t stream) {
    const SmClockStamps clock(kTimedLaunches + 1);
    return fastest_launch(launch, stream, &clock);
}

double sustained_launch_ms(const std::function<void()>& launch, cudaStream_t stream, double warm_seconds,
                           double measured_seconds) {
    constexpr double kBatchMs = 100.0;  // launches between the host's looks at the time
    CudaEvent start, stop;
    const auto batch_ms = [&](int launches) {
        CUDA_CHECK(cudaEventRecord(start.get(), stream));
        for (int i = 0; i < launches; ++i) launch();
        CUDA_CHECK(cudaEventRecord(stop.get(), stream));
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventSynchronize(stop.get()));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
        return double(ms);
    };
    const auto launches_in = [](double ms, double ms_per_launch) { return std::max(1, int(ms / ms_per_launch)); };
    double ms_per_launch = batch_ms(1);
    const auto warm_start = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - warm_start).count() < warm_seconds) {
        const int launches = launches_in(kBatchMs, ms_per_launch);
        ms_per_launch = batch_ms(launches) / launches;
    }
    const int launches = launches_in(measured_seconds * 1e3, ms_per_launch);
    return batch_ms(launches) / launches;
}

}  // namespace sgemm
