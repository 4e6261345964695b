// sgemm_tune: verifies and times candidate tile shapes of stage 10's, 14's or 20's kernel
// against cuBLAS at the stage's precision, like any stage, and writes one CSV row per
// candidate and problem (square sizes, or shapes M x N x K). scripts/tune.py runs it and
// picks the winner.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "driver/report.hpp"
#include "driver/stage_registry.hpp"
#include "driver/stage_runner.hpp"
#include "gpu/device_info.hpp"
#include "kernels/common/padded_launch.cuh"
#include "measuring/timing.hpp"
#include "tools/shape_text.hpp"
#include "tools/tool_main.hpp"
#include "tools/tuning_candidates.hpp"

namespace sgemm {
namespace {

int run(int argc, char** argv) {
    CLI::App app("sgemm_tune: time candidate tile shapes of stage 10, 14 or 20 against cuBLAS", "sgemm_tune");
    std::vector<int> sizes{4096, 8192};
    std::vector<std::string> shape_texts;
    std::string csv_path;
    double time_budget = 1.0;
    std::string timing = "launches";
    int stage_number = 10;
    app.add_option("--stage", stage_number, "the stage whose shapes to time (10, 14 or 20)")
        ->check(CLI::IsMember({10, 14, 20}));
    app.add_option("--sizes", sizes, "square sizes to time (multiples of 256)");
    app.add_option("--shapes", shape_texts, "problems MxNxK to time instead of the square sizes");
    app.add_option("--csv", csv_path, "write the rows to this file")->required();
    app.add_option("--time-budget", time_budget, "seconds per measurement");
    app.add_option("--timing", timing,
                   "how each candidate and cuBLAS take turns, as in sgemm: 'launches' (default) or 'blocks'")
        ->check(CLI::IsMember(timing_method_names()));
    CLI11_PARSE(app, argc, argv);

    const DeviceInfo device = query_device();
    const StageRunner runner(device);
    std::ofstream csv(csv_path);
    std::vector<GemmShape> shapes;
    for (const std::string& text : shape_texts) shapes.push_back(parse_shape(text));
    if (shapes.empty())
        for (const int size : sizes) shapes.push_back(GemmShape{size, size, size});
    csv << "config,group_rows,threads,shared_bytes,registers,m,n,k,median_ms,tflops,cublas_tflops,"
           "ratio_to_cublas,timing,verified,gpu\n";
    int failures = 0;
    const Stage& tuned = *find_stage(stage_number);
    std::vector<TuningCandidate> candidates = tuning_candidates(stage_number);
    // On shapes, the stage as built runs too: its choice, beside what it chooses from.
    if (!shapes.empty())
        candidates.push_back(TuningCandidate{fmt::format("stage {} as built", stage_number), 0, 0, 0, 0, tuned.launch,
                                             tuned.launch_bf16});
    for (const GemmShape& shape : shapes) {
        for (std::size_t i = 0; i < candidates.size(); ++i) {
            const TuningCandidate& c = candidates[i];
            if (!takes_as_is(shape, c.multiples)) {
                fmt::print("{}x{}x{} [{:2}/{}] {}: skipped, its kernel needs the sizes to be multiples of {}x{}x{}\n",
                           shape.m, shape.n, shape.k, i + 1, candidates.size(), c.name, c.multiples.m, c.multiples.n,
                           c.multiples.k);
                continue;
            }
            Stage stage = tuned;
            stage.launch = c.launch;
            stage.launch_bf16 = c.launch_bf16;
            RunSettings settings;
            settings.problem = GemmProblem{shape, 1.0f, 0.0f};
            settings.seed = 1000 + i;
            settings.timing = TimingSettings{0, time_budget, timing_method_named(timing)};
            const ResultRow row = to_result_row(runner.run(stage, settings), device);
            failures += row.verified != "true";
            fmt::print("{}x{}x{} [{:2}/{}] {} group {:2}: {:6.2f} TFLOPS, {:5.1f} % of cuBLAS, {} registers, {}\n",
                       shape.m, shape.n, shape.k, i + 1, candidates.size(), c.name, c.group_rows, row.tflops,
                       100 * row.ratio_to_cublas, c.registers, row.verified == "true" ? "PASS" : "FAIL");
            std::fflush(stdout);
            csv << fmt::format("\"{}\",{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{},{},\"{}\"\n", c.name,
                               c.group_rows, c.threads, c.shared_bytes, c.registers, shape.m, shape.n, shape.k,
                               row.median_ms, row.tflops, row.cublas_tflops, row.ratio_to_cublas,
                               row.timing, row.verified, row.gpu);
        }
    }
    return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace sgemm

int main(int argc, char** argv) { return sgemm::run_reporting_errors("sgemm_tune", sgemm::run, argc, argv); }
