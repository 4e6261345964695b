// The host's share of an FP8 run, over the host's threads: its inputs are quantized, and its
// float64 references' operands made, on the host (fp8_inputs.hpp, fp8_verification.cpp). A
// 7168 x 7168 operand took 0.6-1.0 s a pass on one thread of the build machine.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace sgemm {

// The threads host_chunks spreads over: the hardware's, at least one.
inline std::size_t host_threads() { return std::max<std::size_t>(1, std::thread::hardware_concurrency()); }

// body(chunk, begin, end) on [0, count) cut into at most host_threads() chunks, each a
// multiple of `grain` items long but the last, one thread a chunk. Every item lies in one
// chunk, so a body that writes only its own items' results gives the serial loop's results.
template <class Body>
void host_chunks(std::size_t count, std::size_t grain, Body body) {
    const std::size_t grains = (count + grain - 1) / grain;
    const std::size_t chunks = std::min(host_threads(), grains);
    if (chunks <= 1) {
        if (count > 0) body(std::size_t{0}, std::size_t{0}, count);
        return;
    }
    std::vector<std::thread> workers;
    workers.reserve(chunks);
    for (std::size_t chunk = 0; chunk < chunks; ++chunk)
        workers.emplace_back(body, chunk, std::min(count, grains * chunk / chunks * grain),
                             std::min(count, grains * (chunk + 1) / chunks * grain));
    for (std::thread& worker : workers) worker.join();
}

}  // namespace sgemm
