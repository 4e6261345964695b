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

// `launches` launches of one kernel back to back, on operand set i % copies for the i-th,
// captured into a CUDA graph (relaxed: the launchers may set kernel attributes and query
// occupancy while they are captured).
class LaunchGraph {
public:
    LaunchGraph(const std::function<void(int)>& kernel, int copies, int launches, cudaStream_t stream) {
        CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
        for (int i = 0; i < launches; ++i) kernel(i % copies);
        cudaGraph_t graph = nullptr;
        CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
        const cudaError_t instantiated = cudaGraphInstantiate(&exec_, graph, 0);
        CUDA_CHECK(cudaGraphDestroy(graph));
        CUDA_CHECK(instantiated);
    }
    ~LaunchGraph() { cudaGraphExecDestroy(exec_); }
    LaunchGraph(const LaunchGraph&) = delete;
    LaunchGraph& operator=(const LaunchGraph&) = delete;

    void launch(TimedLaunch& events, cudaStream_t stream) const {
        CUDA_CHECK(cudaEventRecord(events.start.get(), stream));
        CUDA_CHECK(cudaGraphLaunch(exec_, stream));
        CUDA_CHECK(cudaEventRecord(events.stop.get(), stream));
    }

private:
    cudaGraphExec_t exec_ = nullptr;
};

InterleavedTiming time_back_to_back(const TimedKernels& kernels, double first_pair_ms, const TimingSettings& settings,
                                    cudaStream_t stream, const SmClockStamps* clock) {
    // Sized by the slower of the two: the first pair (with its flushes) bounds a launch.
    const int rounds = std::clamp(static_cast<int>(std::ceil(kGraphMs / std::max(first_pair_ms / 2.0, 1e-3) /
                                                             kernels.copies)),
                                  1, std::max(1, kMaxGraphLaunches / kernels.copies));
    const int launches = rounds * kernels.copies;
    const LaunchGraph stage(kernels.stage, kernels.copies, launches, stream);
    const LaunchGraph cublas(kernels.cublas, kernels.copies, launches, stream);
    TimedLaunch warm;
    stage.launch(warm, stream);
    cublas.launch(warm, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const double graph_pair_ms = 2.0 * elapsed_ms(warm.start, warm.stop);
    const int reps = settings.reps > 0 ? settings.reps : reps_for_budget(graph_pair_ms, settings.time_budget_s);
    std::vector<TimedLaunch> stage_events(reps), cublas_events(reps);
    if (clock != nullptr) clock->stamp(0, stream);
    for (int rep = 0; rep < reps; ++rep) {
        if (rep % 2 == 0) {
            stage.launch(stage_events[rep], stream);
            cublas.launch(cublas_events[rep], stream);
        } else {
            cublas.launch(cublas_events[rep], stream);
            stage.launch(stage_events[rep], stream);
        }
    }
    if (clock != nullptr) clock->stamp(1, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<double> stage_ms, cublas_ms;
    for (int rep = 0; rep < reps; ++rep) {
        stage_ms.push_back(elapsed_ms(stage_events[rep].start, stage_events[rep].stop) / launches);
        cublas_ms.push_back(elapsed_ms(cublas_events[rep].start, cublas_events[rep].stop) / launches);
    }
    const std::optional<double> clock_mhz = clock != nullptr ? clock->mhz_between(0, 1) : std::nullopt;
    return InterleavedTiming{median(stage_ms), median(cublas_ms), reps, TimingMethod::graph, clock_mhz, clock_mhz,
                             launches, kernels.copies};
}

}  // namespace

std::string_view to_string(TimingMethod method) {
    switch (method) {
        case TimingMethod::blocks: return "blocks";
        case TimingMethod::graph: return "graph";
        case TimingMethod::launches: break;
    }
    return "launches";
}

namespace {
constexpr TimingMethod kTimingMethods[] = {TimingMethod::launches, TimingMethod::blocks, TimingMethod::graph};
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

int graph_copies_for(std::size_t operand_bytes, std::size_t l2_bytes) {
    if (operand_bytes == 0) return kMaxGraphCopies;
    const std::size_t needed = (2 * l2_bytes + operand_bytes - 1) / operand_bytes;
    return static_cast<int>(std::clamp<std::size_t>(needed, 1, kMaxGraphCopies));
}

InterleavedTiming time_interleaved(const TimedKernels& kernels, const std::function<void()>& prepare,
                                   const TimingSettings& settings, std::size_t l2_bytes,
                                   cudaStream_t stream, const SmClockStamps* clock) {
    const TimedLauncher launcher(prepare, l2_bytes, stream);
    const std::function<void()> stage = [&] { kernels.stage(0); };
    const std::function<void()> cublas = [&] { kernels.cublas(0); };

    // Warm-up (module loading, cuBLAS heuristics, workspaces), then one timed pair to size the run.
    TimedLaunch warm_stage, warm_cublas;
    launcher.launch(stage, warm_stage);
    launcher.launch(cublas, warm_cublas);
    launcher.launch(stage, warm_stage);
    launcher.launch(cublas, warm_cublas);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (settings.method == TimingMethod::blocks) return time_in_blocks(stage, cublas, launcher, settings, stream, clock);
    const double first_pair_ms =
        elapsed_ms(warm_stage.start, warm_stage.stop) + elapsed_ms(warm_cublas.start, warm_cublas.stop);
    if (settings.method == TimingMethod::graph) {
        for (int copy = 1; copy < kernels.copies; ++copy) {  // every set's first launch outside the graph
            kernels.stage(copy);
            kernels.cublas(copy);
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
        return time_back_to_back(kernels, first_pair_ms, settings, stream, clock);
    }
    return time_launch_by_launch(stage, cublas, launcher, first_pair_ms, settings, stream, clock);
}

}  // namespace sgemm
