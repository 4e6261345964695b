#include "measuring/timing.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "gpu/device_buffer.hpp"

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

// Enqueues one timed launch: `prepare`, the L2 flush, then the kernel between two events.
class TimedLauncher {
public:
    TimedLauncher(const std::function<void()>& prepare, std::size_t l2_bytes, cudaStream_t stream)
        : prepare_(prepare), flush_buffer_(2 * l2_bytes), stream_(stream) {}

    void launch(const std::function<void()>& kernel, TimedLaunch& events) const {
        prepare_();
        CUDA_CHECK(cudaMemsetAsync(flush_buffer_.data(), 0, flush_buffer_.bytes(), stream_));
        CUDA_CHECK(cudaEventRecord(events.start.get(), stream_));
        kernel();
        CUDA_CHECK(cudaEventRecord(events.stop.get(), stream_));
        CUDA_CHECK(cudaGetLastError());
    }

private:
    const std::function<void()>& prepare_;
    DeviceBuffer<char> flush_buffer_;
    cudaStream_t stream_;
};

InterleavedTiming time_launch_by_launch(const std::function<void()>& stage,
                                        const std::function<void()>& cublas,
                                        const TimedLauncher& launcher, double first_pair_ms,
                                        const TimingSettings& settings, cudaStream_t stream,
                                        const SmClockStamps* clock) {
    const int reps = settings.reps > 0 ? settings.reps : reps_for_budget(first_pair_ms, settings.time_budget_s);
    std::vector<TimedLaunch> stage_events(reps);
    std::vector<TimedLaunch> cublas_events(reps);
    if (clock != nullptr) clock->stamp(0, stream);
    for (int rep = 0; rep < reps; ++rep) {
        if (rep % 2 == 0) {
            launcher.launch(stage, stage_events[rep]);
            launcher.launch(cublas, cublas_events[rep]);
        } else {
            launcher.launch(cublas, cublas_events[rep]);
            launcher.launch(stage, stage_events[rep]);
        }
    }
    if (clock != nullptr) clock->stamp(1, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));

    std::vector<double> stage_ms, cublas_ms;
    for (int rep = 0; rep < reps; ++rep) {
        stage_ms.push_back(elapsed_ms(stage_events[rep].start, stage_events[rep].stop));
        cublas_ms.push_back(elapsed_ms(cublas_events[rep].start, cublas_events[rep].stop));
    }
    const std::optional<double> clock_mhz = clock != nullptr ? clock->mhz_between(0, 1) : std::nullopt;
    return InterleavedTiming{median(stage_ms), median(cublas_ms), reps, TimingMethod::launches, clock_mhz, clock_mhz};
}

// Launches are enqueued in batches of about kBatchMs, so that the host checks the clock
// often enough for a block to end near its length, without a round trip per launch.
constexpr double kBatchMs = 20.0;
constexpr int kMaxBatch = 256;

// One block of one kernel: launches until kBlockSeconds have passed on the GPU and at least
// one launch started after kSettleSeconds. Appends the times of those that did to `counted`,
// and the SM clock from the first batch after kSettleSeconds on to `clocks`.
void time_block(const std::function<void()>& kernel, const TimedLauncher& launcher,
                std::vector<TimedLaunch>& events, std::vector<double>& counted, const SmClockStamps* clock,
                std::vector<double>& clocks, cudaStream_t stream) {
    const CudaEvent block_start;
    CUDA_CHECK(cudaEventRecord(block_start.get(), stream));
    const std::size_t counted_before = counted.size();
    bool stamped = false;
    int batch = 1;
    double block_ms = 0.0;
    while (block_ms < kBlockSeconds * 1e3 || counted.size() == counted_before) {
        if (clock != nullptr && !stamped && block_ms >= kSettleSeconds * 1e3) {
            clock->stamp(0, stream);
            stamped = true;
        }
        for (int i = 0; i < batch; ++i) launcher.launch(kernel, events[i]);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        for (int i = 0; i < batch; ++i)
            if (elapsed_ms(block_start, events[i].start) >= kSettleSeconds * 1e3)
                counted.push_back(elapsed_ms(events[i].start, events[i].stop));
        const double batch_ms = elapsed_ms(events[0].start, events[batch - 1].stop);
        block_ms = elapsed_ms(block_start, events[batch - 1].stop);
        batch = batch_ms > 0.0 ? std::clamp(static_cast<int>(kBatchMs * batch / batch_ms), 1, kMaxBatch) : kMaxBatch;
    }
    if (!stamped) return;
    clock->stamp(1, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (const auto mhz = clock->mhz_between(0, 1)) clocks.push_back(*mhz);
}

std::optional<double> mean(const std::vector<double>& values) {
    if (values.empty()) return std::nullopt;
    double sum = 0.0;
    for (const double value : values) sum += value;
    return sum / static_cast<double>(values.size());
}

InterleavedTiming time_in_blocks(const std::function<void()>& stage, const std::function<void()>& cublas,
                                 const TimedLauncher& launcher, const TimingSettings& settings,
                                 cudaStream_t stream, const SmClockStamps* clock) {
    std::vector<TimedLaunch> events(kMaxBatch);
    std::vector<double> stage_ms, cublas_ms, stage_mhz, cublas_mhz;
    for (int pair = 0; pair < blocks_per_kernel(settings.time_budget_s); ++pair) {
        // Stage first, then cuBLAS first: a drift over the run weighs on both alike.
        if (pair % 2 == 0) {
            time_block(stage, launcher, events, stage_ms, clock, stage_mhz, stream);
            time_block(cublas, launcher, events, cublas_ms, clock, cublas_mhz, stream);
        } else {
            time_block(cublas, launcher, events, cublas_ms, clock, cublas_mhz, stream);
            time_block(stage, launcher, events, stage_ms, clock, stage_mhz, stream);
        }
    }
    return InterleavedTiming{median(stage_ms), median(cublas_ms), static_cast<int>(stage_ms.size()),
                             TimingMethod::blocks, mean(stage_mhz), mean(cublas_mhz)};
}

}  // namespace

std::string_view to_string(TimingMethod method) {
    return method == TimingMethod::blocks ? "blocks" : "launches";
}

namespace {
constexpr TimingMethod kTimingMethods[] = {TimingMethod::launches, TimingMethod::blocks};
}  // namespace

std::vector<std::string> timing_method_names() {
    std::vector<std::string> names;
    for (const TimingMethod method : kTimingMethods) names.emplace_back(to_string(method));
    return names;
}

TimingMethod timing_method_named(std::string_view name) {
    for (const TimingMethod method : kTimingMethods)
        if (to_string(method) == name) return method;
    throw std::invalid_argument("no timing method is called '" + std::string(name) + "'");
}

int reps_for_budget(double pair_ms, double time_budget_s) {
    if (!(pair_ms > 0.0)) return kMaxAutoReps;
    const double fitting = time_budget_s * 1e3 / pair_ms;
    return static_cast<int>(std::clamp(std::floor(fitting), double(kMinAutoReps), double(kMaxAutoReps)));
}

int blocks_per_kernel(double time_budget_s) {
    return std::max(2, static_cast<int>(std::lround(time_budget_s / (2.0 * kBlockSeconds))));
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
                                   cudaStream_t stream, const SmClockStamps* clock) {
    const TimedLauncher launcher(prepare, l2_bytes, stream);

    // Warm-up (module loading, cuBLAS heuristics), then one timed pair to size the run.
    TimedLaunch warm_stage, warm_cublas;
    launcher.launch(stage, warm_stage);
    launcher.launch(cublas, warm_cublas);
    launcher.launch(stage, warm_stage);
    launcher.launch(cublas, warm_cublas);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (settings.method == TimingMethod::blocks) return time_in_blocks(stage, cublas, launcher, settings, stream, clock);
    const double first_pair_ms =
        elapsed_ms(warm_stage.start, warm_stage.stop) + elapsed_ms(warm_cublas.start, warm_cublas.stop);
    return time_launch_by_launch(stage, cublas, launcher, first_pair_ms, settings, stream, clock);
}

}  // namespace sgemm
