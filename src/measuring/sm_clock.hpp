// The SM clock a stretch of GPU work ran at, counted by the SMs themselves.
//
// Why: a GPU lowers its clock under some loads and at its power cap, by an amount that
// depends on the kernel (on the H100 the FFMA ceiling's register loop runs at 1980 MHz,
// the mma.sync one at about 1815, a GEMM of random bf16 at 700 W near 1500). A fraction
// of a ceiling measured at one clock, taken by a kernel that ran at another, mixes what
// the kernel does per clock with what the clock did; with both clocks known the two can
// be told apart.
//
// How: a stamp is a tiny kernel whose blocks record, on every SM they land on, the SM's
// cycle counter (clock64) and the GPU's nanosecond timer (globaltimer). Between two
// stamps in a stream, each SM's cycles over the time passed is the clock it ran at,
// whatever ran in between (idle, it counts the idle clock); the reading is their mean
// over the SMs stamped both times. Not NVML (what nvidia-smi shows), which samples the
// clock now and then: this count covers exactly the launches between the stamps, so it
// is the clock the work got. It is good to about 1 %: around the FFMA ceiling's 1 ms
// launch on an H100 whose top clock is 1980 MHz it read 1979-1995.
#pragma once

#include <cuda_runtime.h>

#include <optional>

#include "gpu/device_buffer.hpp"

namespace sgemm {

class SmClockStamps {
public:
    // Room for `slots` stamps.
    explicit SmClockStamps(int slots);

    // Enqueues stamp `slot` on `stream` (replacing what the slot held).
    void stamp(int slot, cudaStream_t stream) const;

    // Once the stream has passed both stamps (synchronize first): the mean SM clock in
    // MHz between them, or empty where fewer than half of the SMs stamped were stamped by
    // both, or no time passed.
    std::optional<double> mhz_between(int from, int to) const;

private:
    int slots_;
    DeviceBuffer<ulonglong2> stamps_;  // per slot, per SM id: (clock64, globaltimer), 0 where not stamped
};

}  // namespace sgemm
