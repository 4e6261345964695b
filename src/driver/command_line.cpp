#include "driver/command_line.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <random>
#include <tuple>
#include <utility>

#include "driver/report.hpp"
#include "driver/stage_registry.hpp"
#include "verification/fp8_operands.hpp"

namespace sgemm {
namespace {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

int parse_positive(const std::string& text, const char* what) {
    long long value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, error] = std::from_chars(text.data(), end, value);
    if (error == std::errc::result_out_of_range || (error == std::errc{} && ptr == end && value > kMaxMatrixElements))
        throw UsageError(fmt::format("{} '{}' is too large", what, text));
    if (error != std::errc{} || ptr != end || value < 1)
        throw UsageError(fmt::format("{} must be a positive integer, got '{}'", what, text));
    return static_cast<int>(value);
}

const Stage* stage_numbered(const std::string& text) {
    int number = -1;
    const auto [ptr, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    return error == std::errc{} && ptr == text.data() + text.size() ? find_stage(number) : nullptr;
}

// A stage by its number, or a track by its name.
const Stage& parse_stage(const std::string& text) {
    const Stage* stage = stage_numbered(text);
    if (stage == nullptr) stage = find_track(text);
    if (stage == nullptr)
        throw UsageError(fmt::format("unknown stage or track '{}' (./sgemm --list shows them)", text));
    return *stage;
}

// "FIRST-LAST": both stages known, FIRST <= LAST.
std::pair<int, int> parse_stage_range(const std::string& text) {
    const std::size_t dash = text.find('-');
    int first = -1, last = -1;
    const Stage* const first_stage = stage_numbered(text.substr(0, dash));
    const Stage* const last_stage = stage_numbered(text.substr(dash + 1));
    if (first_stage == nullptr || last_stage == nullptr)
        throw UsageError(fmt::format("unknown stage range '{}' (./sgemm --list shows the stages)", text));
    first = first_stage->number;
    last = last_stage->number;
    if (first > last) throw UsageError(fmt::format("stage range '{}' runs backwards", text));
    return {first, last};
}

GemmShape parse_shape(const std::string& size, const std::string& m, const std::string& n,
                      const std::string& k) {
    const std::optional<int> square = size.empty() ? std::nullopt : std::optional(parse_positive(size, "size"));
    const auto dimension = [&](const std::string& text, const char* name) {
        if (!text.empty()) return parse_positive(text, name);
        if (square) return *square;
        throw UsageError(fmt::format("give a size (./sgemm <stage> <size>) or all of -m, -n, -k; {} is missing", name));
    };
    const GemmShape shape{dimension(m, "M"), dimension(n, "N"), dimension(k, "K")};
    const auto check = [](long long rows, long long cols, const char* name) {
        if (rows * cols > kMaxMatrixElements)
            throw UsageError(fmt::format("{} would have {}x{} elements; the kernels index with 32-bit "
                                         "integers, so each matrix must have fewer than 2^31",
                                         name, rows, cols));
    };
    check(shape.m, shape.k, "A");
    check(shape.k, shape.n, "B");
    check(shape.m, shape.n, "C");
    return shape;
}

std::string help_footer() {
    return "\nExamples:\n"
           "  ./sgemm 5 4096            stage 5 on a 4096x4096x4096 problem\n"
           "  ./sgemm all 4096          every stage, then a table\n"
           "  ./sgemm 3 -m 1000 -n 300 -k 77 --alpha 2 --beta 0.5\n"
           "  ./sgemm bf16 -m 384 -n 4096 -k 4096   the bf16 track: the kernel the dispatch chooses\n"
           "  ./sgemm fp8 -m 4096 -n 7168 -k 16384  the FP8 track, DeepSeek-V3's scales, against cuBLASLt\n"
           "  ./sgemm peak --csv c.csv  measure this GPU's FFMA, tensor-core and memory ceilings\n\n"
           "Stages and tracks:\n" + stage_list(nullptr, BuildTarget{});
}

}  // namespace

ParsedCommandLine parse_command_line(int argc, const char* const argv[]) {
    CLI::App app("sgemm: a runnable worklog of GEMM optimization. Runs a stage on "
                 "C = alpha*A*B + beta*C, checks it against a float64 reference and cuBLAS, and "
                 "times it against cuBLAS.",
                 "sgemm");
    app.footer(help_footer());

    std::string stage_text, size_text, m_text, n_text, k_text, csv_path;
    bool list = false;
    bool no_verify = false;
    bool profile = false;
    bool profile_cublas = false;
    int reps = 0;
    double time_budget = 1.0;
    std::string timing = "launches";
    std::optional<std::uint64_t> seed;
    std::string data = "uniform";
    std::string c_type = "fp32";
    std::string scaling;
    float alpha = 1.0f;
    float beta = 0.0f;

    app.add_option("stage", stage_text,
                   "stage number (0 = cuBLAS), a range such as 1-14, 'all', a track (fp32, bf16, fp32-tc, fp8: the "
                   "dispatch layer's choice of kernel), or 'peak' (measure this GPU's ceilings)");
    app.add_option("size", size_text, "N for an N x N x N problem");
    app.add_option("-m", m_text, "rows of A and C (overrides size)");
    app.add_option("-n", n_text, "columns of B and C (overrides size)");
    app.add_option("-k", k_text, "columns of A, rows of B (overrides size)");
    app.add_flag("--list", list, "list the stages and the tracks, and exit");
    app.add_option("--reps", reps, "timed repetitions (default: as many as fit --time-budget)")
        ->check(CLI::Range(1, 100000));
    app.add_option("--time-budget", time_budget, "seconds per timing measurement (default 1)")
        ->check(CLI::Range(0.001, 3600.0));
    app.add_option("--timing", timing,
                   fmt::format("how the stage and cuBLAS take turns: 'launches' (default: launch by "
                               "launch, at one shared clock), 'blocks' ({} s of each in turn, each "
                               "at its own clock) or 'graph' (CUDA graphs of launches back to back over "
                               "operands rotated past the L2, for launches under about 100 us; see "
                               "src/measuring/timing.hpp)", kBlockSeconds))
        ->check(CLI::IsMember(timing_method_names()));
    app.add_option("--seed", seed, "seed of the random inputs (default: random, printed)");
    app.add_option("--data", data,
                   "what A, B and C hold: 'uniform' in [-1, 1) (default), 'wide' (magnitudes "
                   "log-uniform over 1e-3 .. 1e3, random signs), 'exact' (integers in [-8, 8]: "
                   "every correct stage matches float64 exactly), or a kind that breaks numerical "
                   "code: 'graded' (A's columns and B's rows scaled by 2^-g and 2^g, g in 0 .. 40), "
                   "'outliers' (some rows of A, columns of B, with values 2^24 times the rest whose "
                   "partners are zero), 'subnormal' (A and C below 2^-126), 'extremes' (A near 2^-126, B near "
                   "2^126), 'special' (NaN, +-Inf and -0 scattered in A, B and C), 'cancelling' (pairs "
                   "of products along K that cancel to 2^-13 .. 2^-12 of themselves) or 'positive' (A and B "
                   "in [0, 1): sums that grow along K, their rounding errors of one sign); see "
                   "src/verification/input_data.hpp")
        ->check(CLI::IsMember(input_data_names()));
    app.add_option("--c-type", c_type,
                   "the type C is written (and read) in: 'fp32' (default) or 'bf16', as a transformer layer "
                   "writes it (stages 19, 20, 25 and 30 and the bf16 track, against cuBLAS writing bf16 C)")
        ->check(CLI::IsMember({"fp32", "bf16"}));
    app.add_option("--scaling", scaling,
                   "the FP8 stages' and track's scales (D = alpha A B^T + beta C, e4m3 A and B, bf16 D): "
                   "'tensor' (one a tensor), '1x128-128x128' (A one a row per 128 of K, B one a 128x128 block: "
                   "DeepSeek-V3's recipe; the default where the stage takes it) or '1x128-1x128'")
        ->check(CLI::IsMember({"tensor", "1x128-128x128", "1x128-1x128"}));
    app.add_option("--alpha", alpha, "alpha (default 1)");
    app.add_option("--beta", beta, "beta (default 0; non-zero makes C an input)");
    app.add_flag("--no-verify", no_verify, "skip verification, only time");
    app.add_option("--csv", csv_path, "append one row per stage to this CSV file (with peak: write the ceilings to it)");
    app.add_flag("--profile", profile,
                 "launch the stage once more between cudaProfilerStart and cudaProfilerStop, "
                 "for ncu --profile-from-start off; no check, no timing");
    app.add_flag("--profile-cublas", profile_cublas,
                 "as --profile, launching the cuBLAS call the stage is timed against instead");

    ParsedCommandLine parsed;
    if (argc <= 1) {
        parsed.outcome = ParsedCommandLine::Outcome::print_and_exit;
        parsed.text = app.help();
        return parsed;
    }
    try {
        app.parse(argc, argv);
        Request& request = parsed.request;
        request.list_stages = list;
        if (list) return parsed;
        if (stage_text.empty()) throw UsageError("no stage or track given (./sgemm --list shows them)");
        if (stage_text == "peak") {
            if (!size_text.empty() || !m_text.empty() || !n_text.empty() || !k_text.empty())
                throw UsageError("peak takes no size: it measures the GPU, not a problem");
            if (profile || profile_cublas) throw UsageError("--profile takes one stage, not 'peak'");
            request.peak = true;
            request.csv_path = csv_path;
            return parsed;
        }
        const bool range = stage_text.find('-') != std::string::npos && find_track(stage_text) == nullptr;
        request.run_all = stage_text == "all" || range;
        request.profile = profile || profile_cublas;
        request.profile_cublas = profile_cublas;
        if (request.profile && request.run_all) throw UsageError(fmt::format("--profile takes one stage, not '{}'", stage_text));
        if (stage_text == "all") {
            request.first_stage = all_stages().front().number;
            request.last_stage = all_stages().back().number;
        } else if (range) {
            std::tie(request.first_stage, request.last_stage) = parse_stage_range(stage_text);
        } else {
            request.stage = &parse_stage(stage_text);
        }
        RunSettings& settings = request.settings;
        settings.problem = GemmProblem{parse_shape(size_text, m_text, n_text, k_text), alpha, beta};
        settings.seed = seed ? *seed : std::random_device{}() % 1000000;
        settings.data = *input_data_named(data);
        settings.verify = !no_verify;
        const TimingMethod method = timing_method_named(timing);
        if (method == TimingMethod::blocks && reps > 0)
            throw UsageError("--reps counts launch-by-launch repetitions; --timing blocks is paced by --time-budget");
        settings.timing = TimingSettings{reps, time_budget, method};
        settings.c_output = c_type == "bf16" ? COutput::bf16 : COutput::fp32;
        if (!scaling.empty()) settings.fp8_scaling = parse_fp8_scaling(scaling);
        request.csv_path = csv_path;
        if (request.stage != nullptr) {
            if (settings.fp8_scaling && request.stage->precision != Precision::fp8)
                throw UsageError(fmt::format("--scaling is for the FP8 stages and the fp8 track; {} is {}",
                                             describe(*request.stage), to_string(request.stage->precision)));
            if (settings.fp8_scaling)
                if (const auto refusal = fp8_scaling_refusal(*request.stage, *settings.fp8_scaling))
                    throw UsageError(*refusal);
            if (const auto refusal = shape_refusal(*request.stage, settings.problem.shape))
                throw UsageError(*refusal);
            if (const auto refusal = c_output_refusal(*request.stage, settings.c_output, settings.problem.shape))
                throw UsageError(*refusal);
        }
    } catch (const CLI::CallForHelp&) {
        parsed.outcome = ParsedCommandLine::Outcome::print_and_exit;
        parsed.text = app.help();
    } catch (const CLI::ParseError& error) {
        parsed.outcome = ParsedCommandLine::Outcome::usage_error;
        parsed.text = fmt::format("{} (./sgemm --help for usage)", error.what());
    } catch (const UsageError& error) {
        parsed.outcome = ParsedCommandLine::Outcome::usage_error;
        parsed.text = error.what();
    }
    return parsed;
}

}  // namespace sgemm
