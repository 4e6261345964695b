#include "measuring/sm_clock.hpp"

#include <stdexcept>
#include <vector>

namespace sgemm {
namespace {

// SM ids run below %nsmid, which may exceed the SM count (ids can have gaps); no GPU so
// far has more than a few hundred.
constexpr int kMaxSmIds = 1024;
// Two blocks for every possible SM id, so that every SM gets at least one: the stamp's
// blocks are tiny and spread over the SMs as they are handed out.
constexpr int kStampBlocks = 2 * kMaxSmIds;

__global__ void stamp_kernel(ulonglong2* stamps) {
    unsigned sm_id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm_id));
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    const unsigned long long cycles = clock64();
    if (sm_id < kMaxSmIds) stamps[sm_id] = make_ulonglong2(cycles, now);  // one 16-byte store
}

}  // namespace

SmClockStamps::SmClockStamps(int slots) : slots_(slots), stamps_(static_cast<std::size_t>(slots) * kMaxSmIds) {}

void SmClockStamps::stamp(int slot, cudaStream_t stream) const {
    if (slot < 0 || slot >= slots_) throw std::out_of_range("SmClockStamps::stamp: no such slot");
    ulonglong2* const stamps = stamps_.data() + static_cast<std::size_t>(slot) * kMaxSmIds;
    CUDA_CHECK(cudaMemsetAsync(stamps, 0, sizeof(ulonglong2) * kMaxSmIds, stream));
    stamp_kernel<<<kStampBlocks, 32, 0, stream>>>(stamps);
    CUDA_CHECK(cudaGetLastError());
}

std::optional<double> SmClockStamps::mhz_between(int from, int to) const {
    if (from < 0 || to < 0 || from >= slots_ || to >= slots_)
        throw std::out_of_range("SmClockStamps::mhz_between: no such slot");
    std::vector<ulonglong2> first(kMaxSmIds), last(kMaxSmIds);
    CUDA_CHECK(cudaMemcpy(first.data(), stamps_.data() + static_cast<std::size_t>(from) * kMaxSmIds,
                          sizeof(ulonglong2) * kMaxSmIds, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(last.data(), stamps_.data() + static_cast<std::size_t>(to) * kMaxSmIds,
                          sizeof(ulonglong2) * kMaxSmIds, cudaMemcpyDeviceToHost));
    double sum_mhz = 0.0;
    int both = 0, stamped = 0;
    for (int sm = 0; sm < kMaxSmIds; ++sm) {
        const bool in_first = first[sm].y != 0, in_last = last[sm].y != 0;
        stamped += in_first || in_last;
        if (!in_first || !in_last || last[sm].y <= first[sm].y) continue;
        sum_mhz += 1e3 * double(last[sm].x - first[sm].x) / double(last[sm].y - first[sm].y);
        ++both;
    }
    if (both == 0 || 2 * both < stamped) return std::nullopt;
    return sum_mhz / both;
}

}  // namespace sgemm
