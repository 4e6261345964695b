#include "measuring/ceilings.hpp"

#include <functional>

namespace sgemm {
namespace {

using Measure = std::function<ClockedValue(const DeviceInfo&, cudaStream_t)>;

// A ceiling measured otherwise than by one fastest launch: no clock goes with it.
Measure without_clock(double (*measure)(const DeviceInfo&, cudaStream_t)) {
    return [measure](const DeviceInfo& device, cudaStream_t stream) {
        return ClockedValue{measure(device, stream), std::nullopt};
    };
}

}  // namespace

std::vector<MeasuredCeiling> measure_ceilings(const DeviceInfo& device, cudaStream_t stream) {
    std::vector<MeasuredCeiling> ceilings;
    std::vector<Measure> measures;
    const auto add = [&](std::string_view name, std::string_view unit, std::string description,
                         const std::optional<std::string>& refusal, Measure measure) {
        ceilings.push_back(
            MeasuredCeiling{name, unit, std::move(description), std::nullopt, std::nullopt, refusal.value_or("")});
        measures.push_back(refusal ? nullptr : std::move(measure));
    };
    const std::optional<std::string> mma_sync = mma_sync_refusal(device);
    const std::optional<std::string> wgmma = wgmma_refusal(device, stream);
    add(kFfmaCeiling, "TFLOPS", "FFMA on the CUDA cores, registers only", std::nullopt, measure_ffma_tflops);
    add(kMmaSyncBf16Ceiling, "TFLOPS", "mma.sync m16n8k16 bf16 -> FP32, registers only", mma_sync,
        measure_mma_sync_bf16_tflops);
    add(kMmaSyncBf16WarpLoopCeiling, "TFLOPS",
        "mma.sync m16n8k16 bf16 + ldmatrix (stage 14's warp loop, 8 warps an SM), random operands", mma_sync,
        measure_mma_sync_bf16_warp_loop_tflops);
    add(kMmaSyncBf16SustainedCeiling, "TFLOPS", "the same warp loop, after 2 s back to back", mma_sync,
        without_clock(measure_mma_sync_bf16_sustained_tflops));
    add(kMmaSyncTf32Ceiling, "TFLOPS", "mma.sync m16n8k8 tf32 -> FP32, registers only", mma_sync,
        measure_mma_sync_tf32_tflops);
    add(kWgmmaBf16Ceiling, "TFLOPS", "wgmma m64n256k16 bf16 -> FP32, A and B in shared memory", wgmma,
        measure_wgmma_bf16_tflops);
    add(kWgmmaFp8Ceiling, "TFLOPS", "wgmma m64n256k32 e4m3 -> FP32, A and B in shared memory", wgmma,
        measure_wgmma_fp8_tflops);
    add(kDramCeiling, "TB/s", "device-to-device copy, bytes read + written", std::nullopt,
        without_clock(measure_dram_copy_tbps));
    add(kL2Ceiling, "TB/s", "every SM re-reading a quarter of L2 (16-byte loads past L1)", std::nullopt,
        without_clock(measure_l2_read_tbps));
    add(kSharedMemoryCeiling, "TB/s", "every SM reading shared memory (16-byte loads, no bank conflicts)",
        std::nullopt, without_clock(measure_shared_memory_read_tbps));
    // The sustained one last: seconds at the power cap leave the GPU hot and its clock
    // low, which the fastest launch of another ceiling must not inherit.
    const auto measure = [&](bool sustained) {
        for (std::size_t i = 0; i < ceilings.size(); ++i)
            if (measures[i] && (ceilings[i].name == kMmaSyncBf16SustainedCeiling) == sustained) {
                const ClockedValue measured = measures[i](device, stream);
                ceilings[i].value = measured.value;
                ceilings[i].clock_mhz = measured.clock_mhz;
            }
    };
    measure(false);
    measure(true);
    return ceilings;
}

}  // namespace sgemm
