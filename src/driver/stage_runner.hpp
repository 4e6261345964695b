// Runs one stage on one problem: memory check, inputs, verification, timing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "driver/stage.hpp"
#include "gpu/cublas_gemm.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_info.hpp"
#include "measuring/sm_clock.hpp"
#include "measuring/timing.hpp"
#include "verification/input_data.hpp"
#include "verification/verification.hpp"

namespace sgemm {

struct RunSettings {
    GemmProblem problem;
    std::uint64_t seed = 0;
    InputData data = InputData::uniform;
    bool verify = true;
    TimingSettings timing;
    COutput c_output = COutput::fp32;  // C's type (--c-type); bf16 only on stages with launch_bf16_c
    std::optional<Fp8Scaling> fp8_scaling;  // FP8 stages (--scaling); empty: the stage's default
};

// The throughput a stage is measured against besides cuBLAS: the ceiling of the unit it
// runs on, measured at start-up (ceilings.hpp): FFMA for fp32 stages, mma.sync for bf16,
// wgmma on its input type for the Hopper stages, bf16 or e4m3 (measured when the first of
// them runs).
struct Ceiling {
    const char* name = "";   // for the reader: "FFMA ceiling"
    std::string_view key;    // its name in ceilings.csv and results.csv: kFfmaCeiling
    double tflops = 0.0;     // 0 where it cannot be measured
    std::optional<double> clock_mhz;  // the SM clock of its fastest launch (sm_clock.hpp)
};

struct StageResult {
    const Stage* stage = nullptr;
    GemmProblem problem;
    std::uint64_t seed = 0;
    InputData data = InputData::uniform;
    std::optional<Verification> verification;  // empty when verification was skipped
    InterleavedTiming timing;
    Ceiling ceiling;  // of the unit the stage runs on
    COutput c_output = COutput::fp32;
    KernelChoice kernel;  // whose kernel ran it (a track's choice)
    std::optional<Fp8Scaling> fp8_scaling;  // FP8 runs: the operands' scaling

    bool passed() const { return !verification || verification->stage.passed(); }

    // The stage's TFLOPS over its ceiling's; empty where the ceiling was not measured.
    std::optional<double> fraction_of_ceiling() const;
    // That fraction scaled to the clock the stage ran at: what it does per clock against
    // what the unit does per clock. Empty unless both clocks were read.
    std::optional<double> fraction_of_ceiling_at_its_clock() const;
};

double tflops(const GemmShape& shape, double milliseconds);

// Device memory one run needs, in bytes (inputs, outputs, the float64 reference when
// verifying, and the L2 flush buffer).
std::size_t device_bytes_needed(const GemmProblem& problem, bool verify, std::size_t l2_bytes);
// The bytes one launch reads and writes at the least (A and B at the stage's precision,
// C once, twice with beta != 0): what the graph method's operand sets are counted in
// (timing.hpp). Its further sets, a few hundred MB at most, are not in device_bytes_needed.
std::size_t operand_bytes(const GemmProblem& problem, Precision precision);
// Host memory the verification copies need.
std::size_t host_bytes_needed(const GemmProblem& problem, bool verify);

// A GEMM that is not one of the stages (sgemm_survey's cuBLASLt kernels, sgemm_accuracy's
// cuBLAS paths), with the stages' signature but state of its own.
using Bf16Gemm = std::function<void(const GemmProblem& problem, const __nv_bfloat16* a,
                                    const __nv_bfloat16* b, float* c, cudaStream_t stream)>;
using Fp32Gemm = std::function<void(const GemmProblem& problem, const float* a, const float* b, float* c,
                                    cudaStream_t stream)>;
using Fp8Gemm = std::function<void(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                                   __nv_bfloat16* d, cudaStream_t stream)>;

class Fp8Inputs;  // verification/fp8_inputs.hpp

class StageRunner {
public:
    explicit StageRunner(const DeviceInfo& device);

    // FP8 stages run the FP8 problem (fp8_runs.cpp) against cuBLASLt.
    StageResult run(const Stage& stage, const RunSettings& settings) const;
    // `gemm` in place of the stage's own launcher (a bf16 stage's for a Bf16Gemm, an fp32
    // stage's for an Fp32Gemm), verified and timed as the stage is.
    StageResult run(const Stage& stage, const Bf16Gemm& gemm, const RunSettings& settings) const;
    StageResult run(const Stage& stage, const Fp32Gemm& gemm, const RunSettings& settings) const;
    // `gemm` in place of an FP8 stage's launcher, checked and timed against cuBLASLt as it is.
    StageResult run(const Stage& stage, const Fp8Gemm& gemm, const RunSettings& settings) const;
    // The same on inputs made before for the settings' problem, scaling, seed and data, so that
    // many runs of one shape share them (they are quantized on the host: seconds at layer sizes).
    StageResult run(const Stage& stage, const Fp8Gemm& gemm, const RunSettings& settings,
                    const Fp8Inputs& inputs) const;

    // Launches the stage (or, with `cublas`, the cuBLAS call it is timed against) once to
    // warm up, then once between cudaProfilerStart and cudaProfilerStop, so that a profiler
    // started with profiling off sees that launch alone.
    void profile_once(const Stage& stage, const RunSettings& settings, bool cublas = false) const;

    Ceiling ceiling(Precision precision) const;
    const Cublas& cublas() const { return cublas_; }
    // The stream the runs and cublas() use.
    cudaStream_t stream() const { return stream_.get(); }
    // The ceiling of the unit `stage` runs `shape` on: wgmma's on bf16 or e4m3 for the Hopper
    // stages; a track's, that of the stage whose kernel it chooses.
    Ceiling ceiling(const Stage& stage, const GemmShape& shape) const;

private:
    struct Launches;
    Launches launches(const Stage& stage, const Bf16Gemm& bf16_gemm, const Fp32Gemm& fp32_gemm,
                      const GemmProblem& problem, const GemmInputs& inputs) const;
    StageResult run_with(const Stage& stage, const Bf16Gemm& bf16_gemm, const Fp32Gemm& fp32_gemm,
                         const RunSettings& settings) const;
    // On `inputs` where given, else on inputs made for the run.
    StageResult run_fp8(const Stage& stage, const Fp8Gemm& gemm, const RunSettings& settings,
                        const Fp8Inputs* inputs) const;
    void profile_fp8_once(const Stage& stage, const RunSettings& settings, bool cublaslt) const;
    // `launch` once to warm up, then once between cudaProfilerStart and cudaProfilerStop;
    // `prepare` (resetting C) before each, outside that window.
    void profile_launch(const std::function<void()>& prepare, const std::function<void()>& launch) const;

    DeviceInfo device_;
    CudaStream stream_;
    Cublas cublas_;
    SmClockStamps clock_{2};    // around every run's timed launches
    Ceiling ffma_ceiling_;      // measured at construction
    Ceiling mma_bf16_ceiling_;  // measured at construction where mma.sync runs (else 0 TFLOPS)
    // Measured when the first Hopper stage of their input type runs.
    mutable std::optional<Ceiling> wgmma_bf16_ceiling_, wgmma_fp8_ceiling_;
};

}  // namespace sgemm
