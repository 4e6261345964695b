// sgemm_model: a track's cost model on shapes.
// --track bf16 (dispatch/bf16_cost.hpp): for each shape and each kernel the track weighs
// (stages 20, 25 and 14), the model's terms and its predicted time, and the kernel the track
// chooses. scripts/fit_bf16_cost.py fits the model's constants on these terms and the
// measured times of the same shapes. Stage 25's plan depends on what the GPU holds, which
// the tool asks the GPU it runs on, or takes from --gpu-as (what it printed on that GPU) to
// run without one.
// --track fp32 (dispatch/fp32.hpp): for each shape, plans of stage 10's kernel (each tile,
// in the split of K the model predicts best for it, in one part, and in twice and half as
// many; and stage 10's own plan), each plan's terms, its predicted time and whether the
// track chooses it; with --time, each plan timed against cuBLAS SGEMM by CUDA graphs, for
// scripts/fit_fp32_model.py. --sms models a GPU of that many SMs without asking one. Each
// row names the sources its time measures (stage 10's hash, driver/source_hashes.hpp), so
// that the fit refuses times of a kernel that has changed since.
// --track bf16-tiles (dispatch/bf16_tiles.hpp): for each shape, stage 30's plans that the
// model predicts within --within of its best (at most --most of them), each plan's terms,
// its predicted time and whether the chooser picks it; with --time, each timed against
// cuBLAS by --timing (each tile is verified by the GPU tests), for scripts/fit_bf16_tiles.py.
// --track fp8-tiles (dispatch/fp8_tiles.hpp): the same of stage 31's plans, timed against
// cuBLASLt in the recipe's scales.
// --track fp8 (stage 29's tiles, which the fp8 track weighs beside stage 31's plans): for each
// shape, each of stage 29's tiles as stage 31's model sees it and whether stage 29's own model
// chooses it; with --time, each timed against cuBLASLt in the recipe's scales, for
// scripts/fit_bf16_tiles.py --stage 29. Each row of these three names its stage's sources,
// as fp32's do.
// --track fp32-tc (dispatch/fp32_tc.hpp): for each shape, each kernel the track weighs that
// takes it as it is (stage 10's plan, stages 22, 23 and 24), its terms, predicted time and
// whether the track chooses it; with --time, each timed against cuBLAS SGEMM by CUDA graphs,
// for scripts/fit_fp32_tc_model.py; each row names its stage's sources, as fp32's do.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/bf16.hpp"
#include "dispatch/bf16_cost.hpp"
#include "dispatch/bf16_tiles.hpp"
#include "dispatch/fp8_tiles.hpp"
#include "22_split_fp16.hpp"
#include "23_split_in_registers.hpp"
#include "24_a_in_registers.hpp"
#include "29_fp8_tiles.hpp"
#include "dispatch/fp32.hpp"
#include "dispatch/fp8.hpp"
#include "dispatch/fp8_fit.hpp"
#include "dispatch/fp32_tc.hpp"
#include "dispatch/kernel_choice.hpp"
#include "driver/stage_registry.hpp"
#include "driver/source_hashes.hpp"
#include "driver/stage_runner.hpp"
#include "gpu/device_info.hpp"
#include "verification/fp8_inputs.hpp"
#include "measuring/timing.hpp"
#include "tools/shape_text.hpp"
#include "tools/tool_main.hpp"

namespace sgemm {
namespace {

// The plans the fit times for a shape: each tile in the split the model predicts best for
// it, in one part, and in twice and half as many parts (where the track weighs them), and in
// the split it predicts best of those whose chains the track takes (kFp32LongestChainOverOwn);
// and stage 10's own plan, which the track keeps unless another is predicted faster by a margin.
std::vector<Fp32Plan> fp32_plans_timed(const GemmShape& shape, int sms, const Fp32Plan& own) {
    std::vector<Fp32Plan> plans;
    const double longest_chain = kFp32LongestChainOverOwn * fp32_chain(shape, own.tile, own.parts);
    for (const Stage10Tile& tile : stage10_tiles()) {
        const auto seconds = [&](int parts) { return fp32_predicted_seconds(shape, tile, parts, sms); };
        const std::vector<int> weighed = fp32_parts_weighed(shape, tile);
        const auto faster = [&](int x, int y) { return seconds(x) < seconds(y); };
        const int best = *std::min_element(weighed.begin(), weighed.end(), faster);
        std::vector<int> timed{1, best, 2 * best, (best + 1) / 2};
        std::vector<int> taken;  // the splits whose chains the track takes
        std::copy_if(weighed.begin(), weighed.end(), std::back_inserter(taken),
                     [&](int parts) { return fp32_chain(shape, tile, parts) <= longest_chain; });
        if (!taken.empty()) timed.push_back(*std::min_element(taken.begin(), taken.end(), faster));
        if (own.tile.id == tile.id) timed.push_back(own.parts);
        std::sort(timed.begin(), timed.end());
        timed.erase(std::unique(timed.begin(), timed.end()), timed.end());
        for (const int parts : timed)
            if (std::find(weighed.begin(), weighed.end(), parts) != weighed.end())
                plans.push_back(Fp32Plan{tile, parts, seconds(parts)});
    }
    return plans;
}

// `slots`: the blocks of each tile the GPU runs at once, for stage 10's own plan (modelled_slots
// where --sms models a GPU without one).
void model_fp32(const std::vector<GemmShape>& shapes, int sms, const Stage10Slots& slots, bool time,
                double time_budget, std::ostream& csv) {
    csv << "m,n,k,tile,parts,block_m,block_n,block_k,blocks_per_sm,block_fmas,full_waves,last_wave,dram_bytes,"
           "split_bytes,float_loads_per_fma,predicted_us,chosen,own,median_ms,cublas_median_ms,timing,sources\n";
    std::optional<StageRunner> runner;
    if (time) runner.emplace(query_device());
    const Stage& track = *find_track("fp32");
    for (const GemmShape& shape : shapes) {
        const Fp32Plan chosen = fp32_track_plan(shape, sms, slots), own = fp32_stage10_plan(shape, sms, slots);
        for (const Fp32Plan& plan : fp32_plans_timed(shape, sms, own)) {
            const Fp32Terms t = fp32_terms(shape, plan.tile, plan.parts, sms);
            std::string measured = ",,";
            if (runner) {
                RunSettings settings;
                settings.problem = GemmProblem{shape, 1.0f, 0.0f};
                settings.seed = 1;
                settings.verify = false;  // every tile and split is verified by the GPU tests (Stage10Tiles)
                settings.timing = TimingSettings{0, time_budget, TimingMethod::graph};
                const StageResult result = runner->run(
                    track,
                    Fp32Gemm{[&plan](const GemmProblem& problem, const float* a, const float* b, float* c,
                                     cudaStream_t stream) {
                        launch_tuned_tile(plan.tile, plan.parts, problem, a, b, c, stream);
                    }},
                    settings);
                measured = fmt::format("{:.6g},{:.6g},{}", result.timing.stage_median_ms, result.timing.cublas_median_ms,
                                       to_string(result.timing.method));
                fmt::print("{}x{}x{} {}/{}: {:.1f} us predicted, {:.1f} us measured\n", shape.m, shape.n, shape.k,
                           plan.tile.name, plan.parts, plan.seconds * 1e6, result.timing.stage_median_ms * 1e3);
                std::fflush(stdout);
            }
            const auto is = [&plan](const Fp32Plan& other) {
                return plan.tile.id == other.tile.id && plan.parts == other.parts;
            };
            csv << fmt::format("{},{},{},{},{},{},{},{},{},{:.9g},{:g},{:g},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{},{}\n",
                               shape.m, shape.n, shape.k, plan.tile.name, plan.parts, plan.tile.block_m,
                               plan.tile.block_n, plan.tile.block_k, plan.tile.blocks_per_sm, t.block_fmas,
                               t.full_waves, t.last_wave, t.dram_bytes, t.split_bytes, t.float_loads_per_fma,
                               plan.seconds * 1e6, is(chosen) ? 1 : 0, is(own) ? 1 : 0, measured,
                               sources_hash("10"));
            csv.flush();
        }
    }
}

// The fp32-tc track's kernels on each shape, each timed (where `time`) as the fp32 plans are.
void model_fp32_tc(const std::vector<GemmShape>& shapes, int sms, bool time, double time_budget, std::ostream& csv) {
    csv << "m,n,k,kernel,split_values,bytes,products,predicted_us,chosen,median_ms,cublas_median_ms,timing,sources\n";
    std::optional<StageRunner> runner;
    if (time) runner.emplace(query_device());
    const Stage& track = *find_track("fp32-tc");
    for (const GemmShape& shape : shapes) {
        const KernelChoice chosen = choose_fp32_tc_kernel(shape, sms);
        const Fp32Plan stage10 = fp32_tc_stage10_plan(shape, sms);
        for (const int stage : {10, 22, 23, 24}) {
            if (stage != 10 && !split_kernel_takes(shape, stage)) continue;
            const Fp32TcTerms t = stage == 10 ? Fp32TcTerms{0.0, 0.0, 0.0} : fp32_tc_terms(shape, stage, sms);
            const double predicted = stage == 10 ? stage10.seconds : fp32_tc_predicted_seconds(shape, stage, sms);
            std::string measured = ",,";
            if (runner) {
                RunSettings settings;
                settings.problem = GemmProblem{shape, 1.0f, 0.0f};
                settings.seed = 1;
                settings.verify = false;  // each kernel is verified by the GPU tests
                settings.timing = TimingSettings{0, time_budget, TimingMethod::graph};
                const StageResult result = runner->run(
                    track,
                    Fp32Gemm{[&](const GemmProblem& problem, const float* a, const float* b, float* c,
                                 cudaStream_t stream) {
                        if (stage == 22) return launch_split_fp16(problem, a, b, c, stream, stage10.tile.id);
                        if (stage == 23) return launch_split_in_registers(problem, a, b, c, stream, stage10.tile.id);
                        if (stage == 24) return launch_a_in_registers(problem, a, b, c, stream, stage10.tile.id);
                        launch_fp32_plan(stage10, problem, a, b, c, stream);
                    }},
                    settings);
                measured = fmt::format("{:.6g},{:.6g},{}", result.timing.stage_median_ms, result.timing.cublas_median_ms,
                                       to_string(result.timing.method));
                fmt::print("{}x{}x{} stage {}: {:.1f} us predicted, {:.1f} us measured, SGEMM {:.1f} us\n", shape.m,
                           shape.n, shape.k, stage, predicted * 1e6, result.timing.stage_median_ms * 1e3,
                           result.timing.cublas_median_ms * 1e3);
                std::fflush(stdout);
            }
            csv << fmt::format("{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{}\n", shape.m, shape.n, shape.k, stage,
                               t.split_values, t.bytes, t.products, predicted * 1e6,
                               !chosen.padded && chosen.stage == stage ? 1 : 0, measured,
                               sources_hash(std::to_string(stage)));
            csv.flush();
        }
    }
}

// One shape's rows of a tile plan model: `candidates` (fastest predicted first, plan.tile an
// index into `tiles`), the best and those predicted within `within` of it, at most `most`;
// each timed by `time_plan` where given (a StageResult of the plan against its library).
using TimePlan = std::function<StageResult(const AnyTilePlan& plan)>;
void write_tile_plans(const GemmShape& shape, const std::vector<AnyTileCandidate>& candidates,
                      const std::vector<AnyTile>& tiles, double within, int most, const TimePlan& time_plan,
                      std::string_view sources, std::ostream& csv) {
    for (std::size_t i = 0; i < candidates.size() && static_cast<int>(i) < most; ++i) {
        const AnyTileCandidate& candidate = candidates[i];
        if (candidate.predicted_seconds > within * candidates.front().predicted_seconds) break;
        const AnyTilePlan& plan = candidate.plan;
        const AnyTile& tile = tiles[plan.tile];
        std::string measured = ",,";
        if (time_plan) {
            const StageResult result = time_plan(plan);
            measured = fmt::format("{:.6g},{:.6g},{}", result.timing.stage_median_ms, result.timing.cublas_median_ms,
                                   to_string(result.timing.method));
            fmt::print("{}x{}x{} tile {} ({}x{}{}, cluster {}, {} CTAs{}{}): {:.1f} us predicted, {:.1f} us "
                       "measured, its library {:.1f} us\n",
                       shape.m, shape.n, shape.k, plan.tile, tile.rows, tile.columns,
                       tile.weights_as_rows ? " swapped" : "", tile.cluster, plan.ctas,
                       plan.split_tail ? ", stream-K" : "",
                       plan.splits > 1 ? fmt::format(", K split {} ways", plan.splits) : "",
                       candidate.predicted_seconds * 1e6, result.timing.stage_median_ms * 1e3,
                       result.timing.cublas_median_ms * 1e3);
            std::fflush(stdout);
        }
        const AnyTileTerms& t = candidate.terms;
        csv << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},"
                           "{:.9g},{},{},{}\n",
                           shape.m, shape.n, shape.k, plan.tile, tile.weights_as_rows ? 1 : 0, tile.rows,
                           tile.columns, tile.consumers, tile.cluster, plan.ctas, plan.split_tail ? 1 : 0, plan.splits,
                           t.sm_k_tiles, t.step_bytes, t.step_macs, t.step_wgmmas, t.dram_bytes, t.sm_store_bytes,
                           t.sm_split_bytes, t.sm_cluster_split_bytes, candidate.predicted_seconds * 1e6, i == 0 ? 1 : 0,
                           measured, sources);
        csv.flush();
    }
}

constexpr const char* kTilePlansHeader =
    "m,n,k,tile,weights_as_rows,rows,columns,consumers,cluster,ctas,split_tail,splits,sm_k_tiles,step_bytes,"
    "step_macs,step_wgmmas,dram_bytes,sm_store_bytes,sm_split_bytes,sm_cluster_split_bytes,predicted_us,chosen,"
    "median_ms,cublas_median_ms,timing,sources\n";

RunSettings plan_timing_settings(const GemmShape& shape, double time_budget, TimingMethod timing) {
    RunSettings settings;
    settings.problem = GemmProblem{shape, 1.0f, 0.0f};
    settings.seed = 1;
    settings.verify = false;
    settings.timing = TimingSettings{0, time_budget, timing};
    return settings;
}

// Stage 30's plans on each shape, each timed (where `time`) against cuBLAS bf16.
void model_bf16_tiles(const std::vector<GemmShape>& shapes, bool time, double time_budget, TimingMethod timing,
                      double within, int most, std::ostream& csv) {
    csv << kTilePlansHeader;
    std::optional<StageRunner> runner;
    if (time) runner.emplace(query_device());
    const Stage& stage = *find_stage(30);
    const Bf16TilesGpu gpu = bf16_tiles_gpu_here();
    for (const GemmShape& shape : shapes) {
        TimePlan time_plan;
        if (runner)
            time_plan = [&](const AnyTilePlan& plan) {
                return runner->run(stage,
                                   Bf16Gemm{[plan](const GemmProblem& problem, const __nv_bfloat16* a,
                                                   const __nv_bfloat16* b, float* c, cudaStream_t stream) {
                                       launch_any_tile_plan(plan, problem, a, b, c, stream);
                                   }},
                                   plan_timing_settings(shape, time_budget, timing));
            };
        write_tile_plans(shape, any_tile_candidates(shape, gpu), any_tiles(), within, most, time_plan, sources_hash("30"),
                         csv);
    }
}

// Stage 29's tiles on each shape (the fp8 track weighs them): each tile as stage 31's model sees
// it (dispatch/fp8.hpp's stage29_tile_terms, predicted with kStage29Cost) and whether stage
// 29's own model chooses it; each timed (where `time`) against cuBLASLt in the recipe's
// scales, a shape's tiles on one set of inputs: the rows of --track fp8-tiles, with whether
// D leaves from registers, for scripts/fit_bf16_tiles.py --stage 29.
void model_fp8(const std::vector<GemmShape>& shapes, bool time, double time_budget, TimingMethod timing,
               std::ostream& csv) {
    csv << "m,n,k,tile,weights_as_rows,rows,columns,consumers,cluster,ctas,split_tail,splits,sm_k_tiles,step_bytes,"
           "step_macs,step_wgmmas,dram_bytes,sm_store_bytes,sm_split_bytes,sm_cluster_split_bytes,predicted_us,chosen,"
           "median_ms,cublas_median_ms,timing,direct_stores,sources\n";
    std::optional<StageRunner> runner;
    if (time) runner.emplace(query_device());
    const Stage& stage = *find_stage(29);
    const int sms = runner ? query_device().sm_count : 132;
    for (const GemmShape& shape : shapes) {
        RunSettings settings = plan_timing_settings(shape, time_budget, timing);
        settings.fp8_scaling = Fp8Scaling::rows_and_blocks;
        std::optional<Fp8Inputs> inputs;
        if (runner)
            inputs.emplace(settings.problem, *settings.fp8_scaling, settings.seed, settings.data, runner->stream());
        const Fp8Tile& chosen = fp8_tile_for(shape, sms);
        for (const Fp8Tile& tile : fp8_tiles()) {
            const AnyTileTerms t = stage29_tile_terms(shape, tile, sms);
            const bool direct = stage29_stores_from_registers(tile);
            const double predicted = fp8_predicted_seconds(t, stage29_fp8_terms(shape, tile), kStage29Cost, direct);
            std::string measured = ",,";
            if (runner) {
                const StageResult result = runner->run(
                    stage,
                    Fp8Gemm{[&tile](const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                                    __nv_bfloat16* d, cudaStream_t stream) {
                        launch_fp8_tile(tile, problem, scaling, operands, d, stream);
                    }},
                    settings, *inputs);
                measured = fmt::format("{:.6g},{:.6g},{}", result.timing.stage_median_ms,
                                       result.timing.cublas_median_ms, to_string(result.timing.method));
                fmt::print("{}x{}x{} tile {}: {:.1f} us predicted, {:.1f} us measured, its library {:.1f} us\n",
                           shape.m, shape.n, shape.k, tile.name, predicted * 1e6, result.timing.stage_median_ms * 1e3,
                           result.timing.cublas_median_ms * 1e3);
                std::fflush(stdout);
            }
            const double stacks = std::ceil(static_cast<double>(shape.m) / (tile.block_m * tile.cluster_m)) *
                                  std::ceil(static_cast<double>(shape.n) / tile.block_n);
            const double ctas = std::min(stacks, std::floor(static_cast<double>(sms) / tile.cluster_m)) * tile.cluster_m;
            csv << fmt::format("{},{},{},{},0,{},{},2,{},{},0,1,{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},0,0,{:.9g},{},{},{},{}\n",
                               shape.m, shape.n, shape.k, tile.name, tile.block_m, tile.block_n, tile.cluster_m, ctas,
                               t.sm_k_tiles, t.step_bytes, t.step_macs, t.step_wgmmas, t.dram_bytes, t.sm_store_bytes,
                               predicted * 1e6, &tile == &chosen ? 1 : 0, measured, direct ? 1 : 0, sources_hash("29"));
            csv.flush();
        }
    }
}

// Stage 31's plans on each shape: stage 30's model on the shape with K in blocks of 128, with
// stage 31's constants (dispatch/fp8_tiles.hpp), over stage 31's tiles; the terms are the
// model's (K counted in its K tiles), plan.tile stage 31's index. Each timed (where `time`)
// against cuBLASLt in the recipe's scales.
void model_fp8_tiles(const std::vector<GemmShape>& shapes, bool time, double time_budget, TimingMethod timing,
                     double within, int most, std::ostream& csv) {
    csv << kTilePlansHeader;
    std::optional<StageRunner> runner;
    if (time) runner.emplace(query_device());
    const Stage& stage = *find_stage(31);
    const Fp8TilesGpu& gpu = fp8_tiles_gpu_here();
    for (const GemmShape& shape : shapes) {
        const std::vector<AnyTileCandidate> candidates = fp8_any_tile_candidates(shape, gpu);
        RunSettings settings = plan_timing_settings(shape, time_budget, timing);
        settings.fp8_scaling = Fp8Scaling::rows_and_blocks;
        // One shape's plans on the same inputs, quantized on the host once (made for each plan,
        // the plans of seed 16's first 10 problems took 330 s).
        std::optional<Fp8Inputs> inputs;
        if (runner)
            inputs.emplace(settings.problem, *settings.fp8_scaling, settings.seed, settings.data, runner->stream());
        TimePlan time_plan;
        if (runner)
            time_plan = [&](const AnyTilePlan& plan) {
                return runner->run(stage,
                                   Fp8Gemm{[plan](const GemmProblem& problem, Fp8Scaling scaling,
                                                  const Fp8Operands& operands, __nv_bfloat16* d, cudaStream_t stream) {
                                       launch_fp8_any_tile_plan(plan, problem, scaling, operands, d, stream);
                                   }},
                                   settings, *inputs);
            };
        write_tile_plans(shape, candidates, fp8_any_tiles(), within, most, time_plan, sources_hash("31"), csv);
    }
}

int run(int argc, char** argv) {
    CLI::App app("sgemm_model: a track's cost model on shapes: terms, predicted times, choice", "sgemm_model");
    std::vector<std::string> shape_texts;
    std::string shapes_file, csv_path;
    std::vector<int> gpu_as;
    std::string track = "bf16";
    int sms = 0;
    bool time = false;
    double time_budget = 0.1;
    std::string timing = "graph";
    double within = 1.3;
    int most = 12;
    app.add_option("--track", track,
                   "the track whose model to run: bf16 (default), bf16-tiles, fp8, fp8-tiles, fp32 or fp32-tc")
        ->check(CLI::IsMember({"bf16", "bf16-tiles", "fp8", "fp8-tiles", "fp32", "fp32-tc"}));
    app.add_option("--timing", timing, "bf16-tiles, fp8, fp8-tiles --time: 'graph' (default) or 'launches'")
        ->check(CLI::IsMember({"graph", "launches"}));
    app.add_option("--within", within,
                   "bf16-tiles, fp8-tiles: the plans predicted within this factor of the best (default 1.3)");
    app.add_option("--most", most, "bf16-tiles, fp8-tiles: at most this many plans a shape (default 12)");
    app.add_option("--sms", sms, "fp32, fp32-tc: model a GPU of this many SMs, without asking a GPU")->check(CLI::PositiveNumber);
    app.add_flag("--time", time,
                 "fp32, fp32-tc, bf16-tiles, fp8-tiles: time each plan or kernel against cuBLAS (cuBLASLt for FP8) "
                 "on the GPU");
    app.add_option("--time-budget", time_budget, "--time: seconds per measurement");
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
    if (track == "fp8") {
        std::vector<GemmShape> shapes;
        for (const std::string& text : shape_texts) shapes.push_back(parse_shape(text));
        model_fp8(shapes, time, time_budget, timing_method_named(timing), csv);
        fmt::print("sgemm_model: stage 29's tiles, {} shapes -> {}\n", shapes.size(), csv_path);
        return 0;
    }
    if (track == "bf16-tiles" || track == "fp8-tiles") {
        std::vector<GemmShape> shapes;
        for (const std::string& text : shape_texts) shapes.push_back(parse_shape(text));
        const bool fp8 = track == "fp8-tiles";
        (fp8 ? model_fp8_tiles : model_bf16_tiles)(shapes, time, time_budget, timing_method_named(timing), within, most,
                                                   csv);
        fmt::print("sgemm_model: stage {}'s plans, {} shapes -> {}\n", fp8 ? 31 : 30, shapes.size(), csv_path);
        return 0;
    }
    if (track == "fp32" || track == "fp32-tc") {
        std::vector<GemmShape> shapes;
        for (const std::string& text : shape_texts) shapes.push_back(parse_shape(text));
        const int model_sms = sms > 0 ? sms : query_device().sm_count;
        if (track == "fp32")
            model_fp32(shapes, model_sms, sms > 0 ? modelled_slots(sms) : Stage10Slots(stage10_tile_slots), time,
                       time_budget, csv);
        else
            model_fp32_tc(shapes, model_sms, time, time_budget, csv);
        fmt::print("sgemm_model: the {} track on {} SMs, {} shapes -> {}\n", track, model_sms, shapes.size(), csv_path);
        return 0;
    }
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
