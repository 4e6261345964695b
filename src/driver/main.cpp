// sgemm: run a GEMM stage (or all of them), verify it, time it against cuBLAS; or
// measure the GPU's ceilings (sgemm peak).
#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <vector>

#include "driver/command_line.hpp"
#include "driver/report.hpp"
#include "driver/stage_registry.hpp"
#include "gpu/build_target.hpp"

namespace sgemm {
namespace {

class FatalError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

void check_memory(const RunSettings& settings, const DeviceInfo& device) {
    const std::size_t needed = device_bytes_needed(settings.problem, settings.verify, device.l2_bytes);
    if (needed > device.free_memory_bytes)
        throw FatalError(fmt::format(
            "M={} N={} K={} needs {:.1f} GiB of GPU memory{}; the {} has {:.1f} GiB free",
            settings.problem.shape.m, settings.problem.shape.n, settings.problem.shape.k,
            needed / kGiB, settings.verify ? " with verification" : "", device.name,
            device.free_memory_bytes / kGiB));
    const std::size_t host_needed = host_bytes_needed(settings.problem, settings.verify);
    const std::size_t host_available = std::size_t(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGESIZE);
    if (host_needed > host_available)
        throw FatalError(fmt::format("verifying M={} N={} needs {:.1f} GiB of host memory, {:.1f} GiB "
                                     "available (--no-verify skips it)",
                                     settings.problem.shape.m, settings.problem.shape.n,
                                     host_needed / kGiB, host_available / kGiB));
}

std::vector<const Stage*> stages_to_run(const Request& request, const DeviceInfo& device) {
    if (!request.run_all) {
        if (const auto refusal = architecture_refusal(*request.stage, device.compute_capability,
                                                      build_target()))
            throw FatalError(*refusal);
        return {request.stage};
    }
    std::vector<const Stage*> stages;
    for (const Stage& stage : all_stages())
        if (stage.number >= request.first_stage && stage.number <= request.last_stage) stages.push_back(&stage);
    return stages;
}

// The reason `stage` is left out of an "all" run, if it is.
std::optional<std::string> skip_reason(const Stage& stage, const Request& request, const DeviceInfo& device) {
    if (auto refusal = architecture_refusal(stage, device.compute_capability, build_target()))
        return refusal;
    if (auto refusal = shape_refusal(stage, request.settings.problem.shape)) return refusal;
    if (request.settings.fp8_scaling)
        if (auto refusal = fp8_scaling_refusal(stage, *request.settings.fp8_scaling)) return refusal;
    return c_output_refusal(stage, request.settings.c_output, request.settings.problem.shape);
}

// `sgemm peak`: the ceilings table, and the ceilings' CSV when asked for.
int measure_peak(const Request& request, const DeviceInfo& device) {
    const CudaStream stream;
    fmt::print("measuring the ceilings of the {} (a few seconds) ...\n", device.name);
    std::fflush(stdout);
    const std::vector<MeasuredCeiling> ceilings = measure_ceilings(device, stream.get());
    fmt::print("{}", ceilings_table(device, ceilings));
    if (!request.csv_path.empty()) write_ceilings_csv(request.csv_path, to_ceiling_rows(ceilings, device));
    return 0;
}

int run(const Request& request) {
    if (request.list_stages) {
        try {
            const DeviceInfo device = query_device();
            fmt::print("{}", stage_list(&device, build_target()));
        } catch (const NoGpuError&) {
            fmt::print("{}", stage_list(nullptr, build_target()));
        }
        return 0;
    }

    const DeviceInfo device = query_device();
    if (const auto mismatch = build_mismatch(device)) throw FatalError(*mismatch);
    if (request.peak) return measure_peak(request, device);
    const std::vector<const Stage*> stages = stages_to_run(request, device);
    check_memory(request.settings, device);

    const StageRunner runner(device);
    if (request.profile) {
        runner.profile_once(*request.stage, request.settings, request.profile_cublas);
        fmt::print("profiled one launch of {}{} between cudaProfilerStart and cudaProfilerStop\n",
                   request.profile_cublas ? "the cuBLAS call timed against " : "", describe(*request.stage));
        return 0;
    }
    fmt::print("{}", run_header(device, runner.ceiling(Precision::fp32), runner.ceiling(Precision::bf16),
                                request.settings));
    std::vector<StageResult> results;
    for (const Stage* stage : stages) {
        if (const auto reason = skip_reason(*stage, request, device)) {
            fmt::print("{}", stage_skipped(*stage, *reason));
            continue;
        }
        fmt::print("{}", stage_started(*stage));
        std::fflush(stdout);
        results.push_back(runner.run(*stage, request.settings));
        fmt::print("{}", stage_report(results.back()));
        std::fflush(stdout);
    }
    if (request.run_all) fmt::print("{}", summary_table(results));

    if (!request.csv_path.empty()) {
        std::vector<ResultRow> rows;
        for (const StageResult& result : results) rows.push_back(to_result_row(result, device));
        append_csv_rows(request.csv_path, rows);
    }

    int status = 0;
    for (const StageResult& result : results) {
        if (result.passed()) continue;
        fmt::print(stderr, "sgemm: error: {}\n", first_bad_element(result));
        status = 1;
    }
    return status;
}

}  // namespace
}  // namespace sgemm

int main(int argc, char** argv) {
    using sgemm::ParsedCommandLine;
    const ParsedCommandLine parsed = sgemm::parse_command_line(argc, argv);
    switch (parsed.outcome) {
        case ParsedCommandLine::Outcome::print_and_exit:
            fmt::print("{}", parsed.text);
            return 0;
        case ParsedCommandLine::Outcome::usage_error:
            fmt::print(stderr, "sgemm: error: {}\n", parsed.text);
            return 2;
        case ParsedCommandLine::Outcome::run:
            break;
    }
    try {
        return sgemm::run(parsed.request);
    } catch (const std::exception& error) {
        fmt::print(stderr, "sgemm: error: {}\n", error.what());
        return 1;
    }
}
