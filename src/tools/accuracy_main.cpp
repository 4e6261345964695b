// sgemm_accuracy: how accurate and how fast each way of computing the FP32 problem is on
// this GPU (or with --fp8, the FP8 problem: below): cuBLAS SGEMM (CUDA cores), cuBLAS on tensor cores (TF32, and FP32 emulated
// with three bf16 parts a value), stage 10 (the tuned CUDA-core stage), the fp32 track (stage
// 10's kernel in the tile and split of K its model chooses), stages 21-24 (FP32 split
// into bf16 or fp16 parts on tensor cores) and stage 32 (tf32 parts, one launch). Each is
// verified against the float64 reference and timed against cuBLAS SGEMM exactly as sgemm
// runs a stage, at each problem (square sizes, and shapes M x N x K: stages 23 and 24 run
// their own kernels on few rows of A or a narrow C) and input kind (sgemm --data: by default every kind but
// exact, which every method gets exactly right), and written as one CSV row ("size": N, or
// MxNxK); scripts/accuracy.py makes the table. With --seconds S no problem (a size or shape,
// and a kind) starts after S seconds, and the CSV holds the problems that ran, each whole: a
// table can be measured in parts under a time limit.
// The errors, over the elements finite in the reference: normwise ||C - R||_F / ||R||_F,
// and the worst element's error over the magnitude its dot product carried,
// max |C_ij - R_ij| / (|alpha| |A||B| + |beta| |C0|)_ij, which cancellation in R_ij cannot
// inflate; and how many elements are NaN or +-Inf where the reference is not, or the
// other way round (wrong_class), of those that are NaN or +-Inf in the reference.
// With --fp8, the FP8 problem (kernels/common/fp8_problem.hpp) in each of its scalings: the fp8
// track and cuBLASLt, each against the float64 product of the quantized operands (and the
// track timed against cuBLASLt), and apart from them the quantization's own error, that
// float64 product against the one of the FP32 values quantized: three rows a problem, kind
// and scaling, their methods "track fp8 S", "cuBLASLt FP8 S" and "quantization S".
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "driver/report.hpp"
#include "driver/source_hashes.hpp"
#include "driver/stage_registry.hpp"
#include "driver/stage_runner.hpp"
#include "gpu/build_target.hpp"
#include "gpu/device_info.hpp"
#include "measuring/timing.hpp"
#include "tools/shape_text.hpp"
#include "tools/tool_main.hpp"
#include "verification/error_budget.hpp"
#include "verification/fp8_inputs.hpp"
#include "verification/fp8_verification.hpp"
#include "verification/input_data.hpp"

namespace sgemm {
namespace {

constexpr const char* kCsvHeader =
    "size,data,method,tflops,sgemm_tflops,ratio_to_sgemm,normwise_error,worst_element_error,wrong_class,non_finite,"
    "verified,timing,gpu,sources\n";

// A way of computing the FP32 problem: a stage, or cuBLAS on tensor cores standing in for
// stage 0. Those two miss the FP32 error budget by design: their rows are not failures.
struct Method {
    std::string name;
    const Stage* stage;
    Fp32Gemm gemm;  // empty: the stage itself
    bool held_to_fp32 = true;
};

// One CSV row (the columns of kCsvHeader).
std::string csv_row(const std::string& problem, const std::string& data, const std::string& method, double tflops,
                    double reference_tflops, double ratio, double normwise, double worst, std::size_t wrong_class,
                    std::size_t non_finite, const std::string& verified, const std::string& timing,
                    const std::string& gpu, std::string_view sources) {
    return fmt::format("{},{},\"{}\",{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{},{},{},{},\"{}\",{}\n", problem, data, method,
                       tflops, reference_tflops, ratio, normwise, worst, wrong_class, non_finite, verified, timing, gpu,
                       sources);
}

// The FP8 rows of one problem and input kind (--fp8): the track's, cuBLASLt's, the quantization's.
int write_fp8_rows(std::ofstream& csv, const StageRunner& runner, const DeviceInfo& device, const GemmShape& shape,
                   const std::string& data, const RunSettings& base) {
    const Stage& track = *find_track("fp8");
    int failures = 0;
    for (const Fp8Scaling scaling : {Fp8Scaling::tensor, Fp8Scaling::rows_and_blocks, Fp8Scaling::rows_and_rows}) {
        RunSettings settings = base;
        settings.fp8_scaling = scaling;
        const StageResult result = runner.run(track, settings);
        const ResultRow row = to_result_row(result, device);
        const Fp8Inputs inputs(settings.problem, scaling, settings.seed, settings.data, runner.stream());
        const QuantizationError quantization = fp8_quantization_error(settings.problem, inputs, runner.cublas(),
                                                                      runner.stream());
        const VerificationReport& own = result.verification->stage;
        const VerificationReport& cublaslt = result.verification->cublas;
        failures += !own.passed();
        const std::string name(to_string(scaling));
        fmt::print("{} {:<9} {:<14} {:7.1f} TFLOPS {:5.2f}x cuBLASLt  normwise {:.2e} (cuBLASLt {:.2e}, "
                   "quantization {:.2e})  {}\n",
                   shape_text(shape), data, name, row.tflops, row.ratio_to_cublas, own.normwise_relative_error,
                   cublaslt.normwise_relative_error, quantization.normwise,
                   own.passed() ? "within the FP8 budget" : "past the FP8 budget");
        std::fflush(stdout);
        const std::string problem = shape_text(shape);
        csv << csv_row(problem, data, "track fp8 " + name, row.tflops, row.cublas_tflops, row.ratio_to_cublas,
                       own.normwise_relative_error, own.worst_error_over_magnitude, own.wrong_class, own.non_finite,
                       own.passed() ? "true" : "false", row.timing, device.name, row.sources);
        // cuBLASLt's rows and the quantization's error measure none of the project's sources.
        csv << csv_row(problem, data, "cuBLASLt FP8 " + name, row.cublas_tflops, row.cublas_tflops, 1.0,
                       cublaslt.normwise_relative_error, cublaslt.worst_error_over_magnitude, cublaslt.wrong_class,
                       cublaslt.non_finite, cublaslt.passed() ? "true" : "false", row.timing, device.name,
                       sources_hash("0"));
        csv << csv_row(problem, data, "quantization " + name, 0.0, row.cublas_tflops, 0.0, quantization.normwise,
                       quantization.worst_over_magnitude, 0, 0, "-", row.timing, device.name, sources_hash("0"));
    }
    return failures;
}

int run(int argc, char** argv) {
    CLI::App app("sgemm_accuracy: the FP32 problem's accuracy and speed by cuBLAS SGEMM, cuBLAS on tensor "
                 "cores (TF32, BF16x9), stage 10, stages 21-24 and 32",
                 "sgemm_accuracy");
    std::vector<int> sizes{1024, 2500, 4096, 8192};
    std::vector<std::string> shape_texts;
    std::vector<std::string> data_kinds{"uniform",  "wide",    "graded",     "outliers", "subnormal",
                                        "extremes", "special", "cancelling", "positive"};
    std::string csv_path;
    double time_budget = 1.0;
    std::string timing = "launches";
    app.add_option("--sizes", sizes, "square sizes")->check(CLI::PositiveNumber);
    app.add_option("--shapes", shape_texts, "problems MxNxK, after the square sizes");
    app.add_option("--data", data_kinds, "input kinds, as sgemm --data")->check(CLI::IsMember(input_data_names()));
    app.add_option("--csv", csv_path, "write the rows to this file")->required();
    app.add_option("--time-budget", time_budget, "seconds per measurement, as in sgemm");
    double seconds = 0.0;
    app.add_option("--seconds", seconds,
                   "start no problem (a size or shape, and an input kind) after this many seconds, so that a run "
                   "under a time limit ends on its own: the CSV holds whole problems")
        ->check(CLI::PositiveNumber);
    app.add_option("--timing", timing, "how each and cuBLAS SGEMM take turns, as in sgemm")
        ->check(CLI::IsMember(timing_method_names()));
    std::vector<std::string> method_keys{"tf32", "bf16x9", "10", "fp32", "21", "22", "23", "24", "32", "fp32-tc"};
    app.add_option("--methods", method_keys,
                   "besides cuBLAS SGEMM: tf32, bf16x9 (cuBLAS on tensor cores), stages and the fp32 and fp32-tc tracks")
        ->check(CLI::IsMember({"tf32", "bf16x9", "10", "fp32", "21", "22", "23", "24", "32", "fp32-tc"}));
    bool fp8 = false;
    app.add_flag("--fp8", fp8,
                 "the FP8 problem instead: the fp8 track and cuBLASLt in each scaling, and the quantization's error");
    CLI11_PARSE(app, argc, argv);
    const auto chosen = [&method_keys](const std::string& key) {
        return std::find(method_keys.begin(), method_keys.end(), key) != method_keys.end();
    };

    const DeviceInfo device = query_device();
    const StageRunner runner(device);
    const Stage& sgemm = *find_stage(0);
    const auto on_tensor_cores = [&runner](Cublas::TensorCoreFp32 path) {
        return [&runner, path](const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t) {
            runner.cublas().gemm_fp32_on_tensor_cores(problem, a, b, c, path);
        };
    };
    std::vector<Method> methods{{"cuBLAS SGEMM", &sgemm, {}}};
    if (chosen("tf32"))
        methods.push_back({"cuBLAS TF32", &sgemm, on_tensor_cores(Cublas::TensorCoreFp32::tf32), false});
    if (chosen("bf16x9"))
        methods.push_back({"cuBLAS BF16x9", &sgemm, on_tensor_cores(Cublas::TensorCoreFp32::bf16x9), false});
    for (const Stage* stage : {find_stage(10), find_track("fp32"), find_stage(21), find_stage(22), find_stage(23),
                               find_stage(24), find_stage(32), find_track("fp32-tc")}) {
        if (!chosen(label(*stage))) continue;
        if (const auto refusal = architecture_refusal(*stage, device.compute_capability, build_target()))
            fmt::print("left out: {}\n", *refusal);
        else
            methods.push_back({stage->is_track() ? describe(*stage) : fmt::format("stage {} {}", stage->number, stage->name),
                               stage, {}});
    }

    std::vector<GemmShape> shapes;
    for (const int size : sizes) shapes.push_back(GemmShape{size, size, size});
    for (const std::string& text : shape_texts) shapes.push_back(parse_shape(text));

    std::ofstream csv(csv_path);
    csv << kCsvHeader;
    int failures = 0;
    // --seconds: start the next problem, or not where the time is up; the CSV is flushed after
    // each problem, whole.
    const auto start = std::chrono::steady_clock::now();
    const std::size_t problems = shapes.size() * data_kinds.size();
    std::size_t started = 0;
    const auto start_next_problem = [&] {
        const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
        if (seconds > 0.0 && elapsed.count() > seconds) return false;
        ++started;
        return true;
    };
    const auto report_cut = [&] {
        if (started < problems) fmt::print("--seconds {} up: {} of {} problems ran\n", seconds, started, problems);
    };
    if (fp8) {
        for (const GemmShape& shape : shapes)
            for (const std::string& data : data_kinds) {
                if (!start_next_problem()) break;
                RunSettings settings;
                settings.problem = GemmProblem{shape, 1.0f, 0.0f};
                settings.seed = 3000 + shape.m;
                settings.data = *input_data_named(data);
                settings.timing = TimingSettings{0, time_budget, timing_method_named(timing)};
                failures += write_fp8_rows(csv, runner, device, shape, data, settings);
                csv.flush();
            }
        report_cut();
        return failures == 0 ? 0 : 1;
    }
    for (const GemmShape& shape : shapes)
        for (const std::string& data : data_kinds) {
            if (!start_next_problem()) break;
            for (const Method& method : methods) {
                if (const auto refusal = shape_refusal(*method.stage, shape)) {
                    fmt::print("left out: {}\n", *refusal);
                    continue;
                }
                RunSettings settings;
                settings.problem = GemmProblem{shape, 1.0f, 0.0f};
                // Every method on a problem multiplies the same matrices.
                settings.seed = 3000 + shape.m;
                settings.data = *input_data_named(data);
                settings.timing = TimingSettings{0, time_budget, timing_method_named(timing)};
                const StageResult result = method.gemm ? runner.run(*method.stage, method.gemm, settings)
                                                       : runner.run(*method.stage, settings);
                const ResultRow row = to_result_row(result, device);
                const VerificationReport& report = result.verification->stage;
                const double worst = report.worst_error_over_magnitude;
                failures += method.held_to_fp32 && !report.passed();
                fmt::print("{} {:<9} {:<22} {:7.1f} TFLOPS  {:5.2f}x SGEMM  normwise {:.2e}  worst element {:.2e}  "
                           "wrong class {} of {}  {}\n",
                           shape_text(shape), data, method.name, row.tflops, row.ratio_to_cublas, report.normwise_relative_error,
                           worst, report.wrong_class, report.non_finite,
                           report.passed() ? "within the FP32 budget" : "past the FP32 budget");
                std::fflush(stdout);
                csv << csv_row(shape_text(shape), data, method.name, row.tflops, row.cublas_tflops, row.ratio_to_cublas,
                               report.normwise_relative_error, worst, report.wrong_class, report.non_finite,
                               report.passed() ? "true" : "false", row.timing, device.name, row.sources);
            }
            csv.flush();
        }
    report_cut();
    return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace sgemm

int main(int argc, char** argv) { return sgemm::run_reporting_errors("sgemm_accuracy", sgemm::run, argc, argv); }
