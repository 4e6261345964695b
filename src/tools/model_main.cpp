// sgemm_model: the bf16 track's cost model (dispatch/bf16_cost.hpp) on shapes: for each
// shape and each kernel the track weighs (stages 20, 25 and 14), the model's terms and its
// predicted time, and the kernel the track chooses. scripts/fit_bf16_cost.py fits the
// model's constants on these terms and the measured times of the same shapes. Stage 25's
// plan depends on what the GPU holds, which the tool asks the GPU it runs on, or takes
// from --gpu-as (what it printed on that GPU) to run without one.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "dispatch/bf16.hpp"
#include "dispatch/bf16_cost.hpp"
#include "dispatch/kernel_choice.hpp"
#include "tools/shape_text.hpp"
#include "tools/tool_main.hpp"

namespace sgemm {
namespace {

int run(int argc, char** argv) {
    CLI::App app("sgemm_model: the bf16 track's cost model on shapes: terms, predicted times, choice", "sgemm_model");
    std::vector<std::string> shape_texts;
    std::string shapes_file, csv_path;
    std::vector<int> gpu_as;
    app.add_option("--shapes", shape_texts, "problems MxNxK");
    app.add_option("--shapes-from", shapes_file, "a file of problems, one MxNxK a line");
    app.add_option("--csv", csv_path, "write the rows to this file")->required();
    app.add_option("--gpu-as", gpu_as,
                   "SMS R1 .. R8: model a Hopper GPU of SMS SMs that holds R1 .. R8 of stage 25's CTAs in clusters "
                   "of 1-8 (what the tool prints on it), without asking a GPU")
        ->expected(1 + kMaxFewTokensSplits);
    CLI11_PARSE(app, argc, argv);
    if (!shapes_file.empty()) {
        std::ifstream in(shapes_file);
        if (!in) throw std::runtime_error("cannot read " + shapes_file);
        for (std::string line; std::getline(in, line);)
            if (!line.empty()) shape_texts.push_back(line);
    }
    std::ofstream csv(csv_path);
    csv << "m,n,k,kernel,dram_bytes,sm_steps,step_bytes,step_macs,split_bytes,copy_bytes,predicted_us,chosen\n";
    Bf16Gpu gpu;
    if (gpu_as.empty()) {
        gpu = bf16_gpu_here();
    } else {
        gpu.hopper = true;
        gpu.sms = gpu_as[0];
        std::copy(gpu_as.begin() + 1, gpu_as.end(), gpu.few_tokens.begin() + 1);
    }
    fmt::print("sgemm_model: {} SMs; stage 25's CTAs held at once in clusters of 1-{}: {}\n", gpu.sms,
               kMaxFewTokensSplits, fmt::join(gpu.few_tokens.begin() + 1, gpu.few_tokens.end(), " "));
    for (const std::string& text : shape_texts) {
        const GemmShape shape = parse_shape(text);
        const KernelChoice choice = choose_bf16_kernel(shape, gpu);
        for (const Bf16Candidate& candidate : bf16_candidates(shape, gpu))
            csv << fmt::format("{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{}\n", shape.m, shape.n, shape.k,
                               candidate.stage, candidate.terms.dram_bytes, candidate.terms.sm_steps,
                               candidate.terms.step_bytes, candidate.terms.step_macs, candidate.terms.split_bytes,
                               candidate.terms.copy_bytes, candidate.predicted_seconds * 1e6, candidate.stage == choice.stage ? 1 : 0);
    }
    fmt::print("sgemm_model: {} shapes -> {}\n", shape_texts.size(), csv_path);
    return 0;
}

}  // namespace
}  // namespace sgemm

int main(int argc, char** argv) { return sgemm::run_reporting_errors("sgemm_model", sgemm::run, argc, argv); }
