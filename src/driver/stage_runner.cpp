#include "driver/stage_runner.hpp"

#include <cuda_profiler_api.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "driver/stage_registry.hpp"
#include "measuring/ceilings.hpp"

namespace sgemm {

double tflops(const GemmShape& shape, double milliseconds) {
    return 2.0 * shape.m * double(shape.n) * shape.k / (milliseconds * 1e-3) / 1e12;
}

std::size_t device_bytes_needed(const GemmProblem& problem, bool verify, std::size_t l2_bytes) {
    const std::size_t a = element_count_a(problem.shape);
    const std::size_t b = element_count_b(problem.shape);
    const std::size_t c = element_count_c(problem.shape);
    const std::size_t c_copies = problem.beta != 0.0f ? 2 : 1;  // output (+ initial C)
    // (+ bf16 copies of A and B for bf16 stages)
    std::size_t bytes = sizeof(float) * (a + b + c_copies * c) + sizeof(__nv_bfloat16) * (a + b) + 2 * l2_bytes;
    // Verification: stage and cuBLAS results one after the other, then A, B, C in float64.
    if (verify) bytes += sizeof(float) * c + sizeof(double) * (a + b + c);
    return bytes;
}

std::size_t operand_bytes(const GemmProblem& problem, Precision precision) {
    const std::size_t input_bytes = precision == Precision::bf16 ? sizeof(__nv_bfloat16) : sizeof(float);
    const std::size_t c_passes = problem.beta != 0.0f ? 2 : 1;  // written (+ read)
    return input_bytes * (element_count_a(problem.shape) + element_count_b(problem.shape)) +
           sizeof(float) * c_passes * element_count_c(problem.shape);
}

std::size_t host_bytes_needed(const GemmProblem& problem, bool verify) {
    // Two float results and two float64 references (value and magnitude) of C.
    return verify ? element_count_c(problem.shape) * (2 * sizeof(float) + 2 * sizeof(double)) : 0;
}

// The stage's launch and cuBLAS's at the stage's precision, both on the same inputs.
struct StageRunner::Launches {
    GemmLaunch stage;
    GemmLaunch cublas;
};

std::optional<double> StageResult::fraction_of_ceiling() const {
    if (ceiling.tflops <= 0.0) return std::nullopt;
    return tflops(problem.shape, timing.stage_median_ms) / ceiling.tflops;
}

std::optional<double> StageResult::fraction_of_ceiling_at_its_clock() const {
    const std::optional<double> fraction = fraction_of_ceiling();
    if (!fraction || !timing.stage_clock_mhz || !ceiling.clock_mhz) return std::nullopt;
    return *fraction * *ceiling.clock_mhz / *timing.stage_clock_mhz;
}

namespace {

Ceiling to_ceiling(const char* name, std::string_view key, const ClockedValue& measured) {
    return Ceiling{name, key, measured.value, measured.clock_mhz};
}

}  // namespace

StageRunner::StageRunner(const DeviceInfo& device)
    : device_(device),
      cublas_(stream_.get()),
      ffma_ceiling_(to_ceiling("FFMA ceiling", kFfmaCeiling, measure_ffma_tflops(device, stream_.get()))),
      mma_bf16_ceiling_(to_ceiling("mma.sync ceiling", kMmaSyncBf16Ceiling,
                                   mma_sync_refusal(device)
                                       ? ClockedValue{}
                                       : measure_mma_sync_bf16_tflops(device, stream_.get()))) {}

Ceiling StageRunner::ceiling(Precision precision) const {
    return precision == Precision::bf16 ? mma_bf16_ceiling_ : ffma_ceiling_;
}

Ceiling StageRunner::ceiling(const Stage& stage, const GemmShape& shape) const {
    if (stage.is_track()) return ceiling(*find_stage(stage.choose(shape).stage), shape);
    if (!stage.needs_sm90a) return ceiling(stage.precision);
    const bool fp8 = stage.precision == Precision::fp8;
    std::optional<Ceiling>& wgmma = fp8 ? wgmma_fp8_ceiling_ : wgmma_bf16_ceiling_;
    if (!wgmma) {
        const auto measure = fp8 ? measure_wgmma_fp8_tflops : measure_wgmma_bf16_tflops;
        wgmma = to_ceiling(fp8 ? "FP8 wgmma ceiling" : "wgmma ceiling", fp8 ? kWgmmaFp8Ceiling : kWgmmaBf16Ceiling,
                           wgmma_refusal(device_, stream_.get()) ? ClockedValue{} : measure(device_, stream_.get()));
    }
    return *wgmma;
}

// A replacement GEMM, when given, stands in for the stage's launcher.
StageRunner::Launches StageRunner::launches(const Stage& stage, const Bf16Gemm& bf16_gemm, const Fp32Gemm& fp32_gemm,
                                            const GemmProblem& problem, const GemmInputs& inputs) const {
    const cudaStream_t stream = stream_.get();
    // cuBLAS at the stage's precision, and the stage itself (stage 0 is cuBLAS).
    GemmLaunch launch_cublas = [this, &stage, problem, &inputs](void* c) {
        if (inputs.c_output() == COutput::bf16)
            cublas_.gemm_bf16(problem, inputs.a_bf16(), inputs.b_bf16(), static_cast<__nv_bfloat16*>(c));
        else if (stage.precision == Precision::bf16)
            cublas_.gemm_bf16(problem, inputs.a_bf16(), inputs.b_bf16(), static_cast<float*>(c));
        else
            cublas_.sgemm(problem, inputs.a(), inputs.b(), static_cast<float*>(c));
    };
    GemmLaunch launch = [&stage, bf16_gemm, fp32_gemm, problem, &inputs, stream, launch_cublas](void* c) {
        const StageOperands operands{inputs.a(), inputs.b(), inputs.a_bf16(), inputs.b_bf16()};
        if (bf16_gemm)
            bf16_gemm(problem, inputs.a_bf16(), inputs.b_bf16(), static_cast<float*>(c), stream);
        else if (fp32_gemm)
            fp32_gemm(problem, inputs.a(), inputs.b(), static_cast<float*>(c), stream);
        else if (stage.is_cublas())
            launch_cublas(c);
        else if (inputs.c_output() == COutput::bf16)
            launch_stage(stage, problem, operands, static_cast<__nv_bfloat16*>(c), stream);
        else
            launch_stage(stage, problem, operands, static_cast<float*>(c), stream);
    };
    return Launches{std::move(launch), std::move(launch_cublas)};
}

void StageRunner::profile_once(const Stage& stage, const RunSettings& settings, bool cublas) const {
    if (stage.precision == Precision::fp8) return profile_fp8_once(stage, settings, cublas);
    const cudaStream_t stream = stream_.get();
    const GemmInputs inputs(settings.problem, stage.precision, settings.seed, settings.data, stream,
                            settings.c_output);
    const Launches launches_of_problem = launches(stage, Bf16Gemm{}, Fp32Gemm{}, settings.problem, inputs);
    const GemmLaunch& launch = cublas ? launches_of_problem.cublas : launches_of_problem.stage;
    DeviceBuffer<float> c(element_count_c(settings.problem.shape));
    profile_launch([&] { inputs.reset_output(c.data(), stream); }, [&] { launch(c.data()); });
}

void StageRunner::profile_launch(const std::function<void()>& prepare, const std::function<void()>& launch) const {
    const cudaStream_t stream = stream_.get();
    prepare();
    launch();  // warm-up: module loading, cuBLAS heuristics
    prepare();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaProfilerStart());
    launch();
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaProfilerStop());
}

StageResult StageRunner::run(const Stage& stage, const RunSettings& settings) const {
    if (stage.precision == Precision::fp8) return run_fp8(stage, Fp8Gemm{}, settings, nullptr);
    return run_with(stage, Bf16Gemm{}, Fp32Gemm{}, settings);
}

StageResult StageRunner::run(const Stage& stage, const Bf16Gemm& gemm, const RunSettings& settings) const {
    if (stage.precision != Precision::bf16)
        throw std::invalid_argument("a bf16 GEMM needs a bf16 stage to stand in for");
    return run_with(stage, gemm, Fp32Gemm{}, settings);
}

StageResult StageRunner::run(const Stage& stage, const Fp32Gemm& gemm, const RunSettings& settings) const {
    if (stage.precision != Precision::fp32)
        throw std::invalid_argument("an fp32 GEMM needs an fp32 stage to stand in for");
    return run_with(stage, Bf16Gemm{}, gemm, settings);
}

StageResult StageRunner::run(const Stage& stage, const Fp8Gemm& gemm, const RunSettings& settings) const {
    if (stage.precision != Precision::fp8)
        throw std::invalid_argument("an FP8 GEMM needs an FP8 stage to stand in for");
    return run_fp8(stage, gemm, settings, nullptr);
}

StageResult StageRunner::run(const Stage& stage, const Fp8Gemm& gemm, const RunSettings& settings,
                             const Fp8Inputs& inputs) const {
    if (stage.precision != Precision::fp8)
        throw std::invalid_argument("an FP8 GEMM needs an FP8 stage to stand in for");
    return run_fp8(stage, gemm, settings, &inputs);
}

StageResult StageRunner::run_with(const Stage& stage, const Bf16Gemm& bf16_gemm, const Fp32Gemm& fp32_gemm,
                                  const RunSettings& settings) const {
    const GemmProblem& problem = settings.problem;
    const cudaStream_t stream = stream_.get();
    const GemmInputs inputs(problem, stage.precision, settings.seed, settings.data, stream, settings.c_output);
    const Launches launches_of_run = launches(stage, bf16_gemm, fp32_gemm, problem, inputs);
    const GemmLaunch& launch = launches_of_run.stage;
    const GemmLaunch& launch_cublas = launches_of_run.cublas;

    StageResult result{&stage,           problem,          settings.seed,
                       settings.data,    std::nullopt,     {},
                       ceiling(stage, problem.shape),      settings.c_output,
                       kernel_choice(stage, problem.shape), std::nullopt};
    if (settings.verify)
        result.verification = verify_against_references(problem, stage.precision, inputs, launch,
                                                        launch_cublas, cublas_, stream);

    // Each operand set: its inputs, the two launches on them, and a C for each. The first
    // is the run's; the graph method takes its launches over more (timing.hpp), the same
    // inputs again, so that back-to-back launches find none of them in L2.
    struct OperandSet {
        const GemmInputs& inputs;
        const Launches& launches;
        DeviceBuffer<float> stage_c;
        DeviceBuffer<float> cublas_c;
    };
    const int copies = settings.timing.method == TimingMethod::graph
                           ? graph_copies_for(operand_bytes(problem, stage.precision), device_.l2_bytes)
                           : 1;
    std::vector<std::unique_ptr<GemmInputs>> more_inputs;
    std::vector<std::unique_ptr<Launches>> more_launches;
    std::vector<OperandSet> sets;
    for (int copy = 0; copy < copies; ++copy) {
        if (copy > 0) {
            more_inputs.push_back(
                std::make_unique<GemmInputs>(problem, stage.precision, settings.seed, settings.data, stream,
                                             settings.c_output));
            more_launches.push_back(
                std::make_unique<Launches>(launches(stage, bf16_gemm, fp32_gemm, problem, *more_inputs.back())));
        }
        const GemmInputs& set_inputs = copy == 0 ? inputs : *more_inputs.back();
        sets.push_back(OperandSet{set_inputs, copy == 0 ? launches_of_run : *more_launches.back(),
                                  DeviceBuffer<float>(element_count_c(problem.shape)),
                                  DeviceBuffer<float>(element_count_c(problem.shape))});
        set_inputs.reset_output(sets.back().stage_c.data(), stream);
        set_inputs.reset_output(sets.back().cublas_c.data(), stream);
    }
    // With beta != 0 every launch must start from the same C (restored outside the
    // timed region); with beta == 0 C is not read and needs no reset.
    const bool restore_c = problem.beta != 0.0f;
    result.timing = time_interleaved(
        TimedKernels{[&](int copy) { sets[copy].launches.stage(sets[copy].stage_c.data()); },
                     [&](int copy) { sets[copy].launches.cublas(sets[copy].cublas_c.data()); }, copies},
        [&] {
            if (!restore_c) return;
            inputs.reset_output(sets[0].stage_c.data(), stream);
            inputs.reset_output(sets[0].cublas_c.data(), stream);
        },
        settings.timing, device_.l2_bytes, stream, &clock_);
    return result;
}

}  // namespace sgemm
