#include "driver/report.hpp"

#include <fmt/format.h>

#include <optional>

#include "driver/source_hashes.hpp"
#include "driver/stage_registry.hpp"
#include "verification/fp8_operands.hpp"

namespace sgemm {
namespace {

// What the summary shows for a figure there is none of (a ceiling not measured, a check skipped).
constexpr const char* kNoFigure = "–";

double ratio_to_cublas(const StageResult& r) {
    return r.timing.cublas_median_ms / r.timing.stage_median_ms;
}

std::string verdict(const StageResult& r) {
    if (!r.verification) return "skipped";
    if (!r.verification->stage.passed()) return "FAIL";
    return r.verification->stage.bounded ? "PASS" : "UNBOUNDED (no finite budget: only NaN and Inf checked)";
}

std::string describe_element(const ElementError& e, int n) {
    return fmt::format("C[{}][{}] = {:.9g}, float64 reference {:.9g}, error {:.3g} > budget {:.3g}",
                       e.index / n, e.index % n, e.value, e.reference, e.error, e.budget);
}

// The SM clock over the timed launches, and the ceiling's fraction at that clock; empty
// where the clock could not be read.
std::string clock_report(const StageResult& r) {
    const InterleavedTiming& t = r.timing;
    if (!t.stage_clock_mhz) return "";
    std::string out =
        t.method == TimingMethod::blocks && t.cublas_clock_mhz
            ? fmt::format("  clock   SM {:.0f} MHz over the stage's timed turns, {:.0f} MHz over cuBLAS's",
                          *t.stage_clock_mhz, *t.cublas_clock_mhz)
            : fmt::format("  clock   SM {:.0f} MHz over the timed launches (the stage's and cuBLAS's)",
                          *t.stage_clock_mhz);
    if (const auto fraction = r.fraction_of_ceiling_at_its_clock())
        out += fmt::format("; the {} was measured at {:.0f} MHz: {:.1f} % of it scaled to the stage's clock",
                           r.ceiling.name, *r.ceiling.clock_mhz, 100.0 * *fraction);
    return out + "\n";
}

// How the run was timed, for the time line: "(median of N, <this>)".
std::string timing_words(const InterleavedTiming& t) {
    switch (t.method) {
        case TimingMethod::blocks: return fmt::format("in turns of {} s", kBlockSeconds);
        case TimingMethod::graph:
            return fmt::format("graphs of {} launches back to back over {} operand sets", t.graph_launches,
                               t.graph_copies);
        case TimingMethod::launches: break;
    }
    return "launch by launch";
}

// The stage's precision, and C's type where it is not FP32: "bf16", "bf16 (bf16 C)"; an FP8
// run's scaling: "fp8 1x128-128x128" (D is bf16).
std::string precision_words(const StageResult& r) {
    const std::string precision(to_string(r.stage->precision));
    if (r.fp8_scaling) return fmt::format("{} {}", precision, to_string(*r.fp8_scaling));
    return r.c_output == COutput::bf16 ? precision + " (bf16 C)" : precision;
}

// What the stage is timed and checked against: cuBLAS, or cuBLASLt for FP8 (its fast
// accumulation for a stage that does not promote).
std::string reference_name(const StageResult& r) {
    if (r.stage->precision != Precision::fp8) return "cuBLAS";
    const std::string name = r.stage->fp8_accumulation == Fp8Accumulation::promoted ? "cuBLASLt" : "cuBLASLt fast-accum";
    const int rows = cublaslt_d_rows(r.problem.shape.m);
    return rows == r.problem.shape.m ? name : fmt::format("{} (A padded to {} rows)", name, rows);
}

// "12.3 % of the wgmma ceiling (658 TFLOPS)", or nothing where the ceiling is not measured.
std::string ceiling_words(const StageResult& r) {
    const std::optional<double> fraction = r.fraction_of_ceiling();
    if (!fraction) return "";
    return fmt::format(", {:.1f} % of {} ({:.0f} TFLOPS)", 100.0 * *fraction, r.ceiling.name, r.ceiling.tflops);
}

}  // namespace

std::string stage_list(const DeviceInfo* device, const BuildTarget& build) {
    const auto line = [&](std::string_view id, std::string_view name, const Stage& stage) {
        const std::string arch = stage.needs_sm90a ? "sm_90a"
                                 : stage.min_compute_capability > 0
                                     ? fmt::format("sm_{}", stage.min_compute_capability)
                                     : "any";
        std::string out = fmt::format("{:>7}  {:<22} {:<9} {:<8} {:<22} {}\n", id, name, to_string(stage.precision),
                                      arch, stage.shape_rule.describe(), stage.summary);
        if (device == nullptr) return out;
        if (const auto refusal = architecture_refusal(stage, device->compute_capability, build))
            out += fmt::format("{:>7}  unavailable: {}\n", "", *refusal);
        return out;
    };
    std::string out = fmt::format("{:>7}  {:<22} {:<9} {:<8} {:<22} {}\n", "stage", "name", "precision", "min arch",
                                  "shape", "what it changes");
    for (const Stage& stage : all_stages()) out += line(std::to_string(stage.number), stage.name, stage);
    out += fmt::format("\n{:>7}  {:<22} {:<9} {:<8} {:<22} {}\n", "track", "", "precision", "min arch", "shape",
                       "which stage's kernel it runs (dispatch/)");
    for (const Stage& track : all_tracks()) out += line(track.name, "", track);
    return out;
}

std::string device_line(const DeviceInfo& device) {
    return fmt::format("{} (sm_{}, {} SMs, {:.0f} MHz, FP32 paper peak {:.1f} TFLOPS), driver {}, CUDA {}\n",
                       device.name, device.compute_capability, device.sm_count, device.clock_khz / 1e3,
                       device.fp32_peak_tflops(), device.driver_version, device.cuda_version);
}

std::string run_header(const DeviceInfo& device, const Ceiling& fp32, const Ceiling& bf16, const RunSettings& s) {
    const auto [m, n, k] = s.problem.shape;
    const std::string mma = bf16.tflops > 0.0 ? fmt::format(", mma.sync bf16 {:.0f} TFLOPS", bf16.tflops) : "";
    return fmt::format(
        "{}measured ceilings: FFMA {:.1f} TFLOPS{}\n"
        "problem M={} N={} K={}  alpha={:g} beta={:g}{}  data {}  seed {}  {}\n",
        device_line(device), fp32.tflops, mma, m, n, k, s.problem.alpha, s.problem.beta,
        s.c_output == COutput::bf16 ? "  C in bf16" : "", to_string(s.data), s.seed,
        s.verify ? "(replay with --seed)" : "(verification skipped)");
}

std::string stage_started(const Stage& stage) { return fmt::format("{} ...\n", describe(stage)); }

std::string stage_skipped(const Stage& stage, const std::string& reason) {
    return fmt::format("{}: skipped, {}\n", describe(stage), reason);
}

std::string stage_report(const StageResult& r) {
    const GemmShape& shape = r.problem.shape;
    std::string out;
    if (r.stage->is_track())
        out += fmt::format("  kernel  stage {}'s ({}){}{}\n", r.kernel.stage, find_stage(r.kernel.stage)->name,
                           r.kernel.padded ? ", on zero-padded copies of the operands" : "",
                           r.kernel.variant.empty() ? "" : fmt::format(", {}", r.kernel.variant));
    if (r.verification) {
        const Verification& v = *r.verification;
        const std::string special =
            v.stage.non_finite + v.stage.wrong_class == 0
                ? ""
                : fmt::format("; {} NaN or Inf due, {} elements of the wrong class (cuBLAS: {})", v.stage.non_finite,
                              v.stage.wrong_class, v.cublas.wrong_class);
        const std::string reference = reference_name(r);
        out += fmt::format(
            "  check   vs float64: normwise {:.2e} (budget {:.2e}), worst element {:.3f} of its "
            "budget; vs {}: normwise {:.2e}; {} vs float64: {:.2e}{}  {}\n",
            v.stage.normwise_relative_error, v.stage.normwise_relative_budget,
            v.stage.worst_error_over_budget, reference, v.difference_from_cublas, reference,
            v.cublas.normwise_relative_error, special, verdict(r));
    }
    out += fmt::format(
        "  time    {:.3f} ms  {:.2f} TFLOPS  | {} {} {:.3f} ms  {:.2f} TFLOPS | {:.1f} % of {}{}  (median of {}, {})\n",
        r.timing.stage_median_ms, tflops(shape, r.timing.stage_median_ms), reference_name(r), precision_words(r),
        r.timing.cublas_median_ms, tflops(shape, r.timing.cublas_median_ms), 100.0 * ratio_to_cublas(r),
        reference_name(r), ceiling_words(r), r.timing.reps, timing_words(r.timing));
    return out + clock_report(r);
}

std::string summary_table(std::span<const StageResult> results) {
    std::string out = fmt::format("\n{:>7}  {:<22} {:>5} {:>10} {:>8} {:>11} {:>11} {:>11}  {}\n", "stage",
                                  "name", "prec", "ms", "TFLOPS", "% cuBLAS", "% ceiling", "rel error", "check");
    for (const StageResult& r : results) {
        const std::string error =
            r.verification ? fmt::format("{:.2e}", r.verification->stage.normwise_relative_error) : kNoFigure;
        const std::optional<double> fraction = r.fraction_of_ceiling();
        const std::string of_ceiling = fraction ? fmt::format("{:.1f}%", 100.0 * *fraction) : kNoFigure;
        out += fmt::format("{:>7}  {:<22} {:>5} {:>10.3f} {:>8.2f} {:>10.1f}% {:>11} {:>11}  {}\n",
                           label(*r.stage), r.stage->is_track() ? "" : r.stage->name, to_string(r.stage->precision),
                           r.timing.stage_median_ms, tflops(r.problem.shape, r.timing.stage_median_ms),
                           100.0 * ratio_to_cublas(r), of_ceiling, error, verdict(r));
    }
    return out;
}

std::string first_bad_element(const StageResult& r) {
    const Verification& v = *r.verification;
    const std::string where =
        fmt::format("{} failed verification (data {}, seed {})", describe(*r.stage), to_string(r.data), r.seed);
    if (v.stage.first_bad) return fmt::format("{}: first bad element {}", where,
                                              describe_element(*v.stage.first_bad, r.problem.shape.n));
    return fmt::format("{}: normwise error {:.3e} exceeds budget {:.3e}", where,
                       v.stage.normwise_relative_error, v.stage.normwise_relative_budget);
}

ResultRow to_result_row(const StageResult& r, const DeviceInfo& device) {
    ResultRow row;
    row.stage = label(*r.stage);
    row.name = r.stage->name;
    row.precision = precision_words(r);
    row.m = r.problem.shape.m;
    row.n = r.problem.shape.n;
    row.k = r.problem.shape.k;
    row.alpha = r.problem.alpha;
    row.beta = r.problem.beta;
    row.median_ms = r.timing.stage_median_ms;
    row.tflops = tflops(r.problem.shape, r.timing.stage_median_ms);
    row.cublas_median_ms = r.timing.cublas_median_ms;
    row.cublas_tflops = tflops(r.problem.shape, r.timing.cublas_median_ms);
    row.ratio_to_cublas = ratio_to_cublas(r);
    row.fraction_of_peak = r.fraction_of_ceiling();
    row.ceiling = r.ceiling.key;
    if (r.verification) {
        row.rel_error_fp64 = r.verification->stage.normwise_relative_error;
        row.worst_error_over_budget = r.verification->stage.worst_error_over_budget;
        const VerificationReport& stage = r.verification->stage;
        row.verified = !stage.passed() ? "false" : stage.bounded ? "true" : "unbounded";
    } else {
        row.verified = "skipped";
    }
    row.gpu = device.name;
    row.driver = device.driver_version;
    row.cuda = device.cuda_version;
    row.timing = to_string(r.timing.method);
    row.reps = r.timing.reps;
    row.seed = r.seed;
    row.data = std::string(to_string(r.data));
    row.sm_clock_mhz = r.timing.stage_clock_mhz;
    row.cublas_sm_clock_mhz = r.timing.cublas_clock_mhz;
    row.ceiling_sm_clock_mhz = r.ceiling.clock_mhz;
    row.kernel = kernel_label(r.kernel);
    row.sources = std::string(sources_hash(row.stage));
    return row;
}

std::string ceilings_table(const DeviceInfo& device, std::span<const MeasuredCeiling> ceilings) {
    std::string out = fmt::format("{}\n{:<24} {:>14}  {}\n", device_line(device), "ceiling", "measured", "what");
    const auto find = [&](std::string_view name) -> const MeasuredCeiling* {
        for (const MeasuredCeiling& c : ceilings)
            if (c.name == name) return &c;
        return nullptr;
    };
    const auto value_of = [&](std::string_view name) {
        const MeasuredCeiling* const c = find(name);
        return c ? c->value : std::optional<double>{};
    };
    for (const MeasuredCeiling& c : ceilings) {
        if (!c.value) {
            out += fmt::format("{:<24} {:>14}  {}: not available, {}\n", c.name, "-", c.description, c.unavailable);
            continue;
        }
        std::string note;
        if (c.name == kFfmaCeiling)
            note = fmt::format(" ({:.0f} % of the paper peak)", 100.0 * *c.value / device.fp32_peak_tflops());
        if (c.name == kMmaSyncBf16SustainedCeiling && value_of(kMmaSyncBf16Ceiling))
            note = fmt::format(" ({:.0f} % of {})", 100.0 * *c.value / *value_of(kMmaSyncBf16Ceiling),
                               kMmaSyncBf16Ceiling);
        if (c.name == kMmaSyncBf16WarpLoopCeiling && c.clock_mhz) {
            const MeasuredCeiling* const registers = find(kMmaSyncBf16Ceiling);
            if (registers && registers->value && registers->clock_mhz)
                note = fmt::format(" ({:.1f} % of {} per clock)",
                                   100.0 * (*c.value / *c.clock_mhz) / (*registers->value / *registers->clock_mhz),
                                   kMmaSyncBf16Ceiling);
        }
        if (c.name == kSharedMemoryCeiling)  // the unit's width: bytes an SM delivers a clock
            note = fmt::format(" ({:.0f} bytes per SM per clock at {:.0f} MHz)",
                               *c.value * 1e12 / (device.sm_count * device.clock_khz * 1e3), device.clock_khz / 1e3);
        const std::string value = fmt::format("{:.{}f} {}", *c.value, c.unit == "TB/s" ? 2 : 1, c.unit);
        const std::string clock = c.clock_mhz ? fmt::format(" at {:.0f} MHz", *c.clock_mhz) : "";
        out += fmt::format("{:<24} {:>14}  {}{}{}\n", c.name, value, c.description, clock, note);
    }
    return out;
}

std::vector<CeilingRow> to_ceiling_rows(std::span<const MeasuredCeiling> ceilings, const DeviceInfo& device) {
    std::vector<CeilingRow> rows;
    for (const MeasuredCeiling& c : ceilings)
        if (c.value)
            rows.push_back(CeilingRow{std::string(c.name), std::string(c.unit), *c.value, device.name, c.clock_mhz});
    return rows;
}

}  // namespace sgemm
