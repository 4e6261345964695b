#include "microbenchmark.hpp"

#include <algorithm>
#include <vector>

#include "device_buffer.hpp"

namespace sgemm {

double fastest_launch_ms(const std::function<void()>& launch, cudaStream_t stream) {
    launch();
    CUDA_CHECK(cudaGetLastError());
    std::vector<CudaEvent> starts(kTimedLaunches), stops(kTimedLaunches);
    for (int run = 0; run < kTimedLaunches; ++run) {
        CUDA_CHECK(cudaEventRecord(starts[run].get(), stream));
        launch();
        CUDA_CHECK(cudaEventRecord(stops[run].get(), stream));
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    double fastest = 0.0;
    for (int run = 0; run < kTimedLaunches; ++run) {
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, starts[run].get(), stops[run].get()));
        fastest = run == 0 ? ms : std::min(fastest, double(ms));
    }
    return fastest;
}

}  // namespace sgemm
