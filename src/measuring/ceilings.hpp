// The ceilings of this GPU, measured rather than taken from a datasheet: what its
// arithmetic units do when nothing else holds them back (every warp of a full grid
// runs independent instructions on registers, or on a tile already in shared memory),
// and what its memories deliver to a kernel that only streams. The driver measures the
// two its stages are judged against at start-up (FFMA for fp32 stages, mma.sync bf16 for
// bf16 stages), and wgmma's for the Hopper stages, bf16 or e4m3, when the first of them
// runs; `sgemm peak` measures them all and writes ceilings.csv, from which the
// results scripts draw the roofline. Each kernel's result feeds a store that never
// happens (its condition is never true in practice), so the compiler cannot drop the
// work, and no input is zero.
#pragma once

#include <cuda_runtime.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/device_info.hpp"

namespace sgemm {

// Names of the ceilings: the `ceiling` column of ceilings.csv, and of results.csv for
// those that stages are measured against (FFMA, mma.sync bf16, the two wgmma).
inline constexpr std::string_view kFfmaCeiling = "fp32_ffma";
inline constexpr std::string_view kMmaSyncBf16Ceiling = "mma_sync_bf16";
inline constexpr std::string_view kMmaSyncBf16WarpLoopCeiling = "mma_sync_bf16_warp_loop";
inline constexpr std::string_view kMmaSyncBf16SustainedCeiling = "mma_sync_bf16_sustained";
inline constexpr std::string_view kMmaSyncTf32Ceiling = "mma_sync_tf32";
inline constexpr std::string_view kWgmmaBf16Ceiling = "wgmma_bf16";
inline constexpr std::string_view kWgmmaFp8Ceiling = "wgmma_fp8";
inline constexpr std::string_view kDramCeiling = "dram";
inline constexpr std::string_view kL2Ceiling = "l2";
inline constexpr std::string_view kSharedMemoryCeiling = "shared_memory";

// Why this GPU, or this binary, cannot run the instruction; nullopt when it can.
std::optional<std::string> mma_sync_refusal(const DeviceInfo& device);
// Launches a probe: whether the binary holds wgmma code for this GPU shows only there.
std::optional<std::string> wgmma_refusal(const DeviceInfo& device, cudaStream_t stream);

// A ceiling as its fastest launch measured it, with the SM clock that launch ran at
// (sm_clock.hpp; empty where it could not be read): a fraction of it taken at another
// clock can be scaled to that one.
struct ClockedValue {
    double value = 0.0;
    std::optional<double> clock_mhz;
};

// TFLOPS. The mma.sync ones need mma_sync_refusal() empty, the wgmma ones wgmma_refusal().
ClockedValue measure_ffma_tflops(const DeviceInfo& device, cudaStream_t stream);
ClockedValue measure_mma_sync_bf16_tflops(const DeviceInfo& device, cudaStream_t stream);
// Stage 14's warp loop on random operands from shared memory: its fastest launch, and the
// average after seconds back to back.
ClockedValue measure_mma_sync_bf16_warp_loop_tflops(const DeviceInfo& device, cudaStream_t stream);
double measure_mma_sync_bf16_sustained_tflops(const DeviceInfo& device, cudaStream_t stream);
ClockedValue measure_mma_sync_tf32_tflops(const DeviceInfo& device, cudaStream_t stream);
ClockedValue measure_wgmma_bf16_tflops(const DeviceInfo& device, cudaStream_t stream);
// The same kernel on e4m3 operands, k32 a step: FP8's ceiling.
ClockedValue measure_wgmma_fp8_tflops(const DeviceInfo& device, cudaStream_t stream);

// TB/s (10^12 bytes a second).
double measure_dram_copy_tbps(const DeviceInfo& device, cudaStream_t stream);  // read + written
double measure_l2_read_tbps(const DeviceInfo& device, cudaStream_t stream);
double measure_shared_memory_read_tbps(const DeviceInfo& device, cudaStream_t stream);

struct MeasuredCeiling {
    std::string_view name;         // one of the k...Ceiling names above
    std::string_view unit;         // "TFLOPS" or "TB/s"
    std::string description;       // what was measured, in a few words
    std::optional<double> value;   // empty when this GPU or build cannot run it
    std::optional<double> clock_mhz;  // the SM clock of the launch that measured it, where read
    std::string unavailable;       // then: why
};

// Every ceiling, in the order above; a few seconds (three of them the sustained one).
std::vector<MeasuredCeiling> measure_ceilings(const DeviceInfo& device, cudaStream_t stream);

}  // namespace sgemm
