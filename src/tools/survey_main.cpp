// sgemm_survey: what NVIDIA's own kernels reach on this GPU for the bf16 problem, beside
// bf16 stages (14 and 20 by default). It lists every cuBLASLt configuration for bf16 A and B with FP32 compute
// and C, names the kernel each launches, and screens them all (the mean launch over
// kScreenSeconds, after as long back to back, so that no kernel is screened in a burst
// before the power cap settles). Then the fastest few of each family, by name
// written for Hopper or later (wgmma) or before it (mma.sync, as stages 11-14), and the
// stages are verified and timed against cublasGemmEx exactly as sgemm runs a stage. scripts/survey.py
// runs it and writes the tables.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "driver/report.hpp"
#include "driver/stage_registry.hpp"
#include "driver/stage_runner.hpp"
#include "measuring/microbenchmark.hpp"
#include "measuring/timing.hpp"
#include "tools/cublaslt_kernels.hpp"
#include "tools/tool_main.hpp"
#include "verification/gemm_inputs.hpp"

namespace sgemm {
namespace {

constexpr double kScreenSeconds = 0.1;

// How many of each family's fastest kernels in the screen (each at its fastest
// configuration) are then verified and timed properly: a screen of 0.1 s is rough.
constexpr std::pair<const char*, int> kJudgedPerFamily[] = {{"before_hopper", 4}, {"hopper_or_later", 2}};

constexpr const char* kCsvHeader =
    "size,kind,family,kernel,config,tflops,cublas_tflops,ratio_to_cublas,fraction_of_ceiling,verified,timing,"
    "gpu,cublas_version\n";

std::string quoted(const std::string& text) { return '"' + text + '"'; }

std::string family_of(const CublasLtKernel& kernel) {
    return named_for_hopper_or_later(kernel.kernel_name) ? "hopper_or_later" : "before_hopper";
}

struct Screened {
    const CublasLtKernel* kernel;
    double tflops;
};

int run(int argc, char** argv) {
    CLI::App app("sgemm_survey: cuBLASLt's bf16 kernels on this GPU, and the fastest of each family "
                 "verified and timed beside a stage",
                 "sgemm_survey");
    std::vector<int> sizes{4096, 8192};
    std::vector<int> stage_numbers{14, 20};
    std::string csv_path;
    double time_budget = 1.0;
    std::string timing = "launches";
    app.add_option("--sizes", sizes, "square sizes")->check(CLI::PositiveNumber);
    app.add_option("--stage", stage_numbers,
                   "the bf16 stages to set beside them (default 14 20); the first one's ceiling is the "
                   "table's, and a stage this GPU or build cannot run is left out");
    app.add_option("--csv", csv_path, "write the rows to this file")->required();
    app.add_option("--time-budget", time_budget, "seconds per measurement, as in sgemm");
    app.add_option("--timing", timing, "how each kernel and cuBLAS take turns, as in sgemm: 'launches' or 'blocks'")
        ->check(CLI::IsMember(timing_method_names()));
    CLI11_PARSE(app, argc, argv);
    std::vector<const Stage*> stages;
    for (const int number : stage_numbers) {
        const Stage* stage = find_stage(number);
        if (stage == nullptr || stage->precision != Precision::bf16) {
            fmt::print(stderr, "sgemm_survey: stage {} is not a bf16 stage\n", number);
            return 2;
        }
        stages.push_back(stage);
    }
    const Stage* const stage = stages.front();  // whose ceiling every row is a fraction of

    const DeviceInfo device = query_device();
    const StageRunner runner(device);
    const CudaStream stream;
    std::ofstream csv(csv_path);
    csv << kCsvHeader;
    int failures = 0;
    for (const int size : sizes) {
        const GemmProblem problem{GemmShape{size, size, size}, 1.0f, 0.0f};
        const std::uint64_t seed = 2000 + size;
        const CublasLt cublaslt(problem);
        const std::string cublas_version = std::to_string(cublaslt.version());

        std::vector<CublasLtKernel> kernels;
        std::vector<Screened> screened;
        {
            const GemmInputs inputs(problem, Precision::bf16, seed, InputData::uniform, stream.get());
            DeviceBuffer<float> c(element_count_c(problem.shape));
            kernels = cublaslt.kernels(inputs.a_bf16(), inputs.b_bf16(), c.data(), stream.get());
            for (const CublasLtKernel& kernel : kernels) {
                const double ms = sustained_launch_ms(
                    [&] { cublaslt.gemm(kernel, inputs.a_bf16(), inputs.b_bf16(), c.data(), stream.get()); },
                    stream.get(), kScreenSeconds, kScreenSeconds);
                screened.push_back({&kernel, tflops(problem.shape, ms)});
            }
        }
        std::sort(screened.begin(), screened.end(), [](const Screened& x, const Screened& y) { return x.tflops > y.tflops; });
        fmt::print("N={}: {} cuBLASLt configurations, cuBLAS {}\n", size, kernels.size(), cublas_version);
        for (const Screened& s : screened)
            csv << fmt::format("{},screen,{},{},{},{:.6g},,,,unverified,,{},{}\n", size, family_of(*s.kernel),
                               quoted(s.kernel->kernel_name), quoted(s.kernel->config), s.tflops,
                               quoted(device.name), cublas_version);

        RunSettings settings;
        settings.problem = problem;
        settings.seed = seed;
        settings.timing = TimingSettings{0, time_budget, timing_method_named(timing)};
        const auto judged = [&](const std::string& family, const std::string& kernel, const std::string& config,
                                const StageResult& result) {
            const ResultRow row = to_result_row(result, device);
            // The fraction of the ceiling: a dash on the screen and an empty field where none was measured.
            const std::optional<double>& fraction = row.fraction_of_peak;
            fmt::print("N={} {:<16} {:7.1f} TFLOPS  {:5.1f} % of cuBLAS  {:>7} of the ceiling  {}  {}\n", size,
                       family, row.tflops, 100 * row.ratio_to_cublas,
                       fraction ? fmt::format("{:.1f} %", 100 * *fraction) : "–",
                       row.verified == "true" ? "PASS" : "FAIL", kernel);
            std::fflush(stdout);
            csv << fmt::format("{},judged,{},{},{},{:.6g},{:.6g},{:.6g},{},{},{},{},{}\n", size, family,
                               quoted(kernel), quoted(config), row.tflops, row.cublas_tflops, row.ratio_to_cublas,
                               fraction ? fmt::format("{:.6g}", *fraction) : "", row.verified, row.timing,
                               quoted(device.name), cublas_version);
            return row.verified == "true";
        };
        for (const Stage* beside : stages) {
            if (const auto refusal = architecture_refusal(*beside, device.compute_capability, build_target())) {
                fmt::print("N={} left out: {}\n", size, *refusal);
                continue;
            }
            failures += !judged("stage", fmt::format("stage {} {}", beside->number, beside->name), "",
                                runner.run(*stage, beside->launch_bf16, settings));
        }
        for (const auto& [family, count] : kJudgedPerFamily) {
            std::set<std::string> judged_kernels;  // each kernel once, at its best configuration
            bool any_passed = false;
            for (const Screened& s : screened) {
                if (family_of(*s.kernel) != family || judged_kernels.count(s.kernel->kernel_name) != 0) continue;
                if (static_cast<int>(judged_kernels.size()) == count) break;
                judged_kernels.insert(s.kernel->kernel_name);
                const CublasLtKernel& kernel = *s.kernel;
                const Bf16Gemm gemm = [&](const GemmProblem&, const __nv_bfloat16* a, const __nv_bfloat16* b,
                                          float* c, cudaStream_t run_stream) {
                    cublaslt.gemm(kernel, a, b, c, run_stream);
                };
                any_passed |= judged(family, kernel.kernel_name, kernel.config, runner.run(*stage, gemm, settings));
            }
            failures += !any_passed;  // none verified, or the library has none of this family here
        }
    }
    return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace sgemm

int main(int argc, char** argv) { return sgemm::run_reporting_errors("sgemm_survey", sgemm::run, argc, argv); }
