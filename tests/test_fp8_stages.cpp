// The FP8 stages (26-28) and the fp8 track against the float64 reference of their quantized
// operands, as tests/test_fp8_cublaslt.cpp holds cuBLASLt: bit for bit where the arithmetic is
// exact; within their budget where each block of A and B has its own magnitude (a scale
// applied to the wrong block is off by up to 2^16 there); and promotion: 16384 products of
// one sign pass the promoted budget where a stage promotes, and fail it in stage 26, which
// keeps the whole sum in the MMA (it stays within what its truncation can drop, at K = 512).
// Shapes with partial tiles and a partial last K block.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "29_fp8_tiles.hpp"
#include "31_fp8_any_tile.hpp"
#include "dispatch/bf16_tiles.hpp"
#include "dispatch/fp8.hpp"
#include "dispatch/fp8_tiles.hpp"
#include "dispatch/kernel_choice.hpp"
#include "driver/stage_registry.hpp"
#include "gpu/build_target.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_info.hpp"
#include "verification/error_budget.hpp"
#include "verification/fp8_operands.hpp"
#include "fp8_test_operands.hpp"
#include "skip_markers.hpp"

namespace sgemm {
namespace {

// D = alpha A B^T + beta D by `launch`, D starting as `d_in` (rounded to bf16), row-major,
// returned as doubles.
using Fp8Launch = std::function<void(const GemmProblem&, Fp8Scaling, const Fp8Operands&, __nv_bfloat16*)>;
std::vector<double> launched_d(const Fp8Launch& launch, const Fp8Operand& a, const Fp8Operand& b, Fp8Scaling scaling,
                               float alpha, float beta, const std::vector<float>& d_in) {
    const DeviceBuffer<std::uint8_t> a_values = to_device(a.values), b_values = to_device(b.values);
    const DeviceBuffer<float> a_scales = to_device(cublaslt_scales(a)), b_scales = to_device(cublaslt_scales(b));
    std::vector<__nv_bfloat16> d_host(d_in.size());
    for (std::size_t i = 0; i < d_in.size(); ++i) d_host[i] = __float2bfloat16_rn(d_in[i]);
    const DeviceBuffer<__nv_bfloat16> d = to_device(d_host);
    const GemmProblem problem{GemmShape{a.rows, b.rows, a.k}, alpha, beta};
    launch(problem, scaling, Fp8Operands{a_values.data(), b_values.data(), a_scales.data(), b_scales.data()}, d.data());
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(d_host.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost));
    std::vector<double> out(d_host.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = __bfloat162float(d_host[i]);
    return out;
}

// The same by FP8 `stage`.
std::vector<double> stage_d(const Stage& stage, const Fp8Operand& a, const Fp8Operand& b, Fp8Scaling scaling,
                            float alpha, float beta, const std::vector<float>& d_in) {
    return launched_d(
        [&](const GemmProblem& problem, Fp8Scaling s, const Fp8Operands& operands, __nv_bfloat16* d) {
            launch_fp8_stage(stage, problem, s, operands, d, nullptr);
        },
        a, b, scaling, alpha, beta, d_in);
}

// Every FP8 stage and the track, with each scaling it takes.
struct Fp8Run {
    const Stage* stage;
    Fp8Scaling scaling;
};
std::vector<Fp8Run> fp8_runs() {
    std::vector<Fp8Run> runs;
    std::vector<const Stage*> stages;
    for (const Stage& stage : all_stages())
        if (stage.precision == Precision::fp8) stages.push_back(&stage);
    stages.push_back(find_track("fp8"));
    for (const Stage* stage : stages)
        for (const Fp8Scaling scaling : {Fp8Scaling::tensor, Fp8Scaling::rows_and_blocks, Fp8Scaling::rows_and_rows})
            if (stage->takes(scaling)) runs.push_back({stage, scaling});
    return runs;
}

// The FP8 stages and the track are sm_90a code: they run on Hopper, from a build for it.
std::optional<std::string> fp8_stages_refusal() {
    return architecture_refusal(*find_track("fp8"), query_device().compute_capability, build_target());
}

std::string name(const Fp8Run& run) { return fmt::format("{}, {}", describe(*run.stage), to_string(run.scaling)); }

ErrorBudget budget_of(const Stage& stage, int k) {
    return stage.fp8_accumulation == Fp8Accumulation::promoted ? fp8_error_budget(k) : fp8_unpromoted_error_budget(k);
}

VerificationReport check(const std::vector<double>& d, const std::vector<double>& reference,
                         const std::vector<double>& magnitude, const ErrorBudget& budget) {
    const std::vector<float> d_float(d.begin(), d.end());  // bf16 values, exact in FP32
    return check_against_reference(d_float, reference, magnitude, budget);
}

// A and B with graded blocks (graded_operand) in the scaling's blocks, C uniform in [-1, 1)
// rounded to bf16, from `seed`.
struct GradedProblem {
    Fp8Operand a, b;
    std::vector<float> c;
};
GradedProblem graded_problem(const GemmShape& shape, Fp8Scaling scaling, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    Fp8Operand a = graded_operand(shape.m, shape.k, a_block(scaling), rng);
    Fp8Operand b = graded_operand(shape.n, shape.k, b_block(scaling), rng);
    std::vector<float> c(static_cast<std::size_t>(shape.m) * shape.n);
    for (float& value : c) value = __bfloat162float(__float2bfloat16_rn(uniform(rng)));
    return {std::move(a), std::move(b), std::move(c)};
}

// Small integers (-2..2), scales powers of two (2^-2 to 2^2): every partial sum is exact in
// the MMA's accumulator (at most 4 x 1040 in stage 26's, which sums all of K) and in FP32, so
// D is the float64 reference rounded to bf16, bit for bit. M, N and K off the tiles.
TEST(Fp8Stages, ExactWhereTheArithmeticIsExact) {
    SGEMM_SKIP_WITHOUT_GPU();
    SGEMM_SKIP_IF_REFUSED(fp8_stages_refusal());
    const int m = 300, n = 200, k = 1040;
    std::mt19937 rng(13);
    for (const Fp8Run& run : fp8_runs()) {
        const Fp8Operand a = exact_operand(m, k, a_block(run.scaling), 2, rng);
        const Fp8Operand b = exact_operand(n, k, b_block(run.scaling), 2, rng);
        const std::vector<double> expected = fp8_reference(a, b, 1.0, 0.0, {});
        const std::vector<double> d = stage_d(*run.stage, a, b, run.scaling, 1.0f, 0.0f, std::vector<float>(m * n, NAN));
        int wrong = 0;
        for (std::size_t i = 0; i < d.size(); ++i)
            if (d[i] != static_cast<double>(__bfloat162float(__float2bfloat16_rn(static_cast<float>(expected[i])))))
                ++wrong;
        EXPECT_EQ(wrong, 0) << name(run);
    }
}

// FP32 data in blocks of magnitudes 2^-8 to 2^8 (A's 1 x 128, B's 128 x 128 or 1 x 128, as the
// scaling cuts them; one magnitude a tensor for one scale a tensor), quantized as the recipe
// does, with alpha and beta.
TEST(Fp8Stages, BlockScalesApplyToTheirBlocks) {
    SGEMM_SKIP_WITHOUT_GPU();
    SGEMM_SKIP_IF_REFUSED(fp8_stages_refusal());
    const int m = 300, n = 264, k = 1040;
    for (const Fp8Run& run : fp8_runs()) {
        std::mt19937 rng(static_cast<unsigned>(run.scaling) + 7);
        std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
        const Fp8Operand a = graded_operand(m, k, a_block(run.scaling), rng);
        const Fp8Operand b = graded_operand(n, k, b_block(run.scaling), rng);
        std::vector<float> c(static_cast<std::size_t>(m) * n);
        for (float& value : c) value = __bfloat162float(__float2bfloat16_rn(uniform(rng)));
        const double alpha = 0.75, beta = -1.5;
        const VerificationReport report =
            check(stage_d(*run.stage, a, b, run.scaling, alpha, beta, c), fp8_reference(a, b, alpha, beta, c),
                  fp8_magnitude(a, b, alpha, beta, c), budget_of(*run.stage, k));
        EXPECT_TRUE(report.passed()) << name(run) << ": normwise " << report.normwise_relative_error << " (budget "
                                     << report.normwise_relative_budget << "), worst element "
                                     << report.worst_error_over_budget << " of its budget";
    }
}

// The fp8 track off the stages' multiples, N off 8 and K off 16 (and both, one token, K
// shorter than a K block, K odd: A's and B's rows on every byte), in each way it meets them
// (fp8_padded_launch.cuh): K as it is or A and B padded in K, D at its N (stage 31's plans
// that store it from registers); and B and D padded in N (B's 1 x 128 scales laid out again
// where N rounded up to 4 is not N rounded up to 8, D copied in for beta and out, N odd and
// even). Graded blocks, alpha and beta, every scaling; and the track's own choice.
TEST(Fp8Stages, TheTrackTakesNOff8AndKOff16InEachPadding) {
    SGEMM_SKIP_WITHOUT_GPU();
    SGEMM_SKIP_IF_REFUSED(fp8_stages_refusal());
    const Stage& track = *find_track("fp8");
    for (const GemmShape shape : {GemmShape{300, 201, 1040}, GemmShape{300, 264, 1000}, GemmShape{130, 203, 1000},
                                  GemmShape{1, 13, 40}, GemmShape{77, 1001, 2040}, GemmShape{65, 202, 1000},
                                  GemmShape{129, 203, 1001}, GemmShape{33, 77, 77}, GemmShape{1000, 390, 4099}})
        for (const Fp8Scaling scaling : {Fp8Scaling::tensor, Fp8Scaling::rows_and_blocks, Fp8Scaling::rows_and_rows}) {
            const auto [a, b, c] = graded_problem(shape, scaling, static_cast<unsigned>(scaling) + 11);
            const double alpha = 0.75, beta = -1.5;
            const std::vector<double> reference = fp8_reference(a, b, alpha, beta, c);
            const std::vector<double> magnitude = fp8_magnitude(a, b, alpha, beta, c);
            const auto expect_passed = [&](const std::vector<double>& d, const std::string& how) {
                const VerificationReport report = check(d, reference, magnitude, budget_of(track, shape.k));
                EXPECT_TRUE(report.passed()) << shape.m << " x " << shape.n << " x " << shape.k << ", "
                                             << to_string(scaling) << ", " << how << ": normwise "
                                             << report.normwise_relative_error << " (budget "
                                             << report.normwise_relative_budget << "), worst element "
                                             << report.worst_error_over_budget << " of its budget";
            };
            expect_passed(stage_d(track, a, b, scaling, alpha, beta, c), "the track's choice");
            std::vector<Fp8Padding> paddings{shape.k % 16 == 0 ? Fp8Padding::none : Fp8Padding::k};
            if (shape.n % 8 != 0) paddings.push_back(Fp8Padding::k_and_n);
            for (const Fp8Padding padding : paddings) {
                const Fp8TrackPlan plan = fp8_track_plan_in(shape, padding, fp8_tiles_gpu_here(), sm_count_here());
                const std::vector<double> d = launched_d(
                    [&](const GemmProblem& problem, Fp8Scaling s, const Fp8Operands& operands, __nv_bfloat16* out) {
                        launch_fp8_track_plan(plan, problem, s, operands, out, nullptr);
                    },
                    a, b, scaling, alpha, beta, c);
                expect_passed(d, fmt::format("stage {} padded {}", plan.stage, static_cast<int>(padding)));
            }
        }
}

// 16384 products of one sign (values in [0, 1)): the promoted budget holds every stage that
// promotes, and fails stage 26, which keeps the whole sum in the MMA (its own budget has no
// bound at this K: fp8_unpromoted_error_budget).
TEST(Fp8Stages, PromotionIsWhatMeetsThePromotedBudget) {
    SGEMM_SKIP_WITHOUT_GPU();
    SGEMM_SKIP_IF_REFUSED(fp8_stages_refusal());
    const int m = 128, n = 128, k = 16384;
    for (const Fp8Run& run : fp8_runs()) {
        std::mt19937 rng(5);
        const Fp8Operand a = one_signed_operand(m, k, a_block(run.scaling), rng);
        const Fp8Operand b = one_signed_operand(n, k, b_block(run.scaling), rng);
        const std::vector<double> d = stage_d(*run.stage, a, b, run.scaling, 1.0f, 0.0f,
                                              std::vector<float>(static_cast<std::size_t>(m) * n, NAN));
        const VerificationReport promoted = check(d, fp8_reference(a, b, 1.0, 0.0, {}), fp8_magnitude(a, b, 1.0, 0.0, {}),
                                                  fp8_error_budget(k));
        if (run.stage->fp8_accumulation == Fp8Accumulation::promoted)
            EXPECT_TRUE(promoted.passed()) << name(run) << " promotes, yet: normwise "
                                           << promoted.normwise_relative_error << " (budget "
                                           << promoted.normwise_relative_budget << ")";
        else
            EXPECT_FALSE(promoted.passed()) << name(run) << " keeps its sums in the MMA, yet: normwise "
                                            << promoted.normwise_relative_error << " (budget "
                                            << promoted.normwise_relative_budget << ")";
    }
}

// Stage 26 keeps all of K in the MMA's accumulator, which truncates: each addition drops less
// than a unit in the last place of the partial sum, at most 2^-13 of it (14 significant bits:
// kFp8MmaUnitRoundoff). On products of one sign the partial sums grow about evenly from 0 to
// the whole sum, half of it on average, so the K additions drop at most
//     K x 2^-13 x 1/2 = 512 / 16384 = 2^-5 = 3.1 % of |A||B|
// at K = 512, and D's rounding to bf16 up to 2^-8 = 0.4 % more: 3.5 % in all (|A||B| is the
// reference here). A correct stage drops about a quarter of the first term: 0.25 normwise at
// K = 16384 on the H100 (error_budget.hpp), which a truncation that drops a like share at each
// addition scales linearly in K to 0.8 % here. A stage that drops or counts twice one K block
// of 128 is off by 128 / 512 = 25 % of every element, one wgmma's 32 of K by 6.25 %: both fail.
// (The budget stage 26 claims, gamma(K) at 2^-13, is 6.7 % here and 100 % at K = 4096.)
TEST(Fp8Stages, UnpromotedStageDropsNoMoreThanItsTruncation) {
    SGEMM_SKIP_WITHOUT_GPU();
    SGEMM_SKIP_IF_REFUSED(fp8_stages_refusal());
    const int m = 128, n = 128, k = 512;
    const double bound = k / 2.0 * kFp8MmaUnitRoundoff + kBf16UnitRoundoff;
    for (const Fp8Run& run : fp8_runs()) {
        if (run.stage->fp8_accumulation == Fp8Accumulation::promoted) continue;
        std::mt19937 rng(6);
        const Fp8Operand a = one_signed_operand(m, k, Fp8Block::tensor, rng);
        const Fp8Operand b = one_signed_operand(n, k, Fp8Block::tensor, rng);
        const std::vector<double> d = stage_d(*run.stage, a, b, run.scaling, 1.0f, 0.0f,
                                              std::vector<float>(static_cast<std::size_t>(m) * n, NAN));
        // Held to `bound`, not to the budget's verdict: the report's errors over |A||B|.
        const VerificationReport report = check(d, fp8_reference(a, b, 1.0, 0.0, {}),
                                                fp8_magnitude(a, b, 1.0, 0.0, {}), fp8_unpromoted_error_budget(k));
        EXPECT_EQ(report.wrong_class, 0u) << name(run) << ": NaN or Inf where D is finite (an element unwritten)";
        EXPECT_LE(report.worst_error_over_magnitude, bound)
            << name(run) << ": an element off by " << report.worst_error_over_magnitude << " of |A||B| (bound "
            << bound << ", normwise " << report.normwise_relative_error << ")";
    }
}

// Stage 29's kernel in each of its tiles, chosen or not (the fp8 track weighs them all): more
// tiles than the GPU holds with the last row and column partly outside D and a short last K
// block; one token; K shorter than a K block. Graded blocks, alpha and beta, every scaling.
TEST(Fp8Tiles, EveryTileMeetsThePromotedBudget) {
    SGEMM_SKIP_WITHOUT_GPU();
    SGEMM_SKIP_IF_REFUSED(fp8_stages_refusal());
    for (const Fp8Tile& tile : fp8_tiles()) {
        const std::vector<GemmShape> shapes{
            GemmShape{tile.block_m * tile.cluster_m * 12 + 8, tile.block_n * 12 - 8, 272},
            GemmShape{1, 264, 144}, GemmShape{tile.block_m + 8, tile.block_n + 16, 48}};
        for (const GemmShape& shape : shapes)
            for (const Fp8Scaling scaling :
                 {Fp8Scaling::tensor, Fp8Scaling::rows_and_blocks, Fp8Scaling::rows_and_rows}) {
                const auto [a, b, c] = graded_problem(shape, scaling, 29);
                const double alpha = 0.75, beta = -1.5;
                const VerificationReport report = check(
                    launched_d(
                        [&](const GemmProblem& problem, Fp8Scaling s, const Fp8Operands& operands, __nv_bfloat16* d) {
                            launch_fp8_tile(tile, problem, s, operands, d, nullptr);
                        },
                        a, b, scaling, alpha, beta, c),
                    fp8_reference(a, b, alpha, beta, c), fp8_magnitude(a, b, alpha, beta, c),
                    fp8_error_budget(shape.k));
                EXPECT_TRUE(report.passed())
                    << tile.name << ", " << shape.m << " x " << shape.n << " x " << shape.k << ", "
                    << to_string(scaling) << ": normwise " << report.normwise_relative_error << " (budget "
                    << report.normwise_relative_budget << "), worst element " << report.worst_error_over_budget
                    << " of its budget";
            }
    }
}

// Stage 31's kernel in every tile it is compiled for, in each plan stage 30's model weighs
// for it (whole tiles, stream-K where there is a tail to share out, K split 2-8 ways over a
// cluster where the tiles are few), as AnyTiles.EveryTileAndPlanMatchesFloat64 runs stage
// 30's: more tiles than the GPU holds, the last row and column of tiles partly outside D,
// with a short last K block; four tiles partly outside D on a deep K (the splits); one token;
// K shorter than a K block; N odd and N off 4 (D not through TMA: from registers, or out of
// shared memory by the threads where unswapped). Graded blocks (a scale applied to another block is off by up
// to 2^16), alpha and beta; the recipe's scales everywhere, every scaling on the deep K.
TEST(Fp8AnyTiles, EveryTileAndPlanMeetsThePromotedBudget) {
    SGEMM_SKIP_WITHOUT_GPU();
    SGEMM_SKIP_IF_REFUSED(fp8_stages_refusal());
    const Fp8TilesGpu& gpu = fp8_tiles_gpu_here();
    for (int index = 0; index < static_cast<int>(fp8_any_tiles().size()); ++index) {
        const AnyTile& tile = fp8_any_tiles()[index];
        const auto shape_of = [&](int row_extent, int column_extent, int k) {
            return tile.weights_as_rows ? GemmShape{column_extent, row_extent, k} : GemmShape{row_extent, column_extent, k};
        };
        const std::vector<Fp8Scaling> recipe{Fp8Scaling::rows_and_blocks};
        const std::vector<Fp8Scaling> every{Fp8Scaling::rows_and_blocks, Fp8Scaling::tensor,
                                            Fp8Scaling::rows_and_rows};
        const std::vector<std::pair<GemmShape, std::vector<Fp8Scaling>>> cases{
            {shape_of(tile.rows * tile.cluster * 11 + 8, tile.columns * 13 - 8, 272), recipe},
            {shape_of(tile.rows * 2 - 8, tile.columns * 2 - 16, 1040), every},
            {GemmShape{1, 264, 144}, recipe},
            {shape_of(tile.rows + 8, tile.columns + 16, 48), recipe},
            {shape_of(tile.rows * 2 + 3, tile.columns * 2 + 3, 1040), every},
            {shape_of(tile.rows * 2 + 2, tile.columns * 2 + 2, 400), recipe}};
        for (const auto& [shape, scalings] : cases)
            for (const Fp8Scaling scaling : scalings) {
                const auto [a, b, c] = graded_problem(shape, scaling, 31);
                const double alpha = 0.75, beta = -1.5;
                const std::vector<double> reference = fp8_reference(a, b, alpha, beta, c);
                const std::vector<double> magnitude = fp8_magnitude(a, b, alpha, beta, c);
                for (const AnyTileCandidate& candidate :
                     any_tile_plans(fp8_shape_in_bf16_k_tiles(shape), tile, index, gpu.resident[index])) {
                    const AnyTilePlan plan = candidate.plan;
                    const VerificationReport report = check(
                        launched_d(
                            [&](const GemmProblem& problem, Fp8Scaling s, const Fp8Operands& operands, __nv_bfloat16* d) {
                                launch_fp8_any_tile_plan(plan, problem, s, operands, d, nullptr);
                            },
                            a, b, scaling, alpha, beta, c),
                        reference, magnitude, fp8_error_budget(shape.k));
                    EXPECT_TRUE(report.passed())
                        << "tile " << index << " (" << tile.rows << " x " << tile.columns
                        << (tile.weights_as_rows ? " swapped" : "") << ", cluster " << tile.cluster << "), "
                        << plan.ctas << " CTAs" << (plan.split_tail ? " stream-K" : "") << ", K split " << plan.splits
                        << " ways, " << shape.m << " x " << shape.n << " x " << shape.k << ", "
                        << to_string(scaling) << ": normwise " << report.normwise_relative_error << " (budget "
                        << report.normwise_relative_budget << "), worst element " << report.worst_error_over_budget
                        << " of its budget";
                }
            }
    }
}

}  // namespace
}  // namespace sgemm
