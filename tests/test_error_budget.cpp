// The checker every stage is judged by: it must pass correct results and catch a
// single wrong or unwritten element, and a systematic error hiding under the
// elementwise bound.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "verification/error_budget.hpp"

namespace sgemm {
namespace {

constexpr double kFp32UnitRoundoff = 0x1p-24;

// A plausible result of a K = 1024 GEMM: reference values, their magnitudes
// (|A||B| grows like K/4, the value like sqrt(K)/3), and the float result rounded
// from the reference, the best a stage could do.
struct Fixture {
    static constexpr int k = 1024;
    std::vector<double> reference, magnitude;
    std::vector<float> c;
    ErrorBudget budget{kFp32UnitRoundoff, k};

    explicit Fixture(std::size_t count = 4096) {
        std::mt19937 rng(7);
        std::normal_distribution<double> value(0.0, std::sqrt(k) / 3.0);
        for (std::size_t i = 0; i < count; ++i) {
            reference.push_back(value(rng));
            magnitude.push_back(k / 4.0);
            c.push_back(static_cast<float>(reference.back()));
        }
    }
    double elementwise_budget(std::size_t i) const { return budget.elementwise_factor() * magnitude[i]; }
};

TEST(ErrorBudget, CorrectlyRoundedResultPasses) {
    const Fixture f;
    const VerificationReport report = check_against_reference(f.c, f.reference, f.magnitude, f.budget);
    EXPECT_TRUE(report.passed());
    EXPECT_LT(report.worst_error_over_budget, 0.01);
    EXPECT_LT(report.normwise_relative_error, report.normwise_relative_budget);
}

TEST(ErrorBudget, OneElementJustPastItsBudgetFails) {
    Fixture f;
    const std::size_t bad = 1234;
    f.c[bad] = static_cast<float>(f.reference[bad] + 1.01 * f.elementwise_budget(bad));
    const VerificationReport report = check_against_reference(f.c, f.reference, f.magnitude, f.budget);
    EXPECT_FALSE(report.passed());
    ASSERT_TRUE(report.first_bad.has_value());
    EXPECT_EQ(report.first_bad->index, bad);
    EXPECT_GT(report.worst_error_over_budget, 1.0);
    EXPECT_EQ(report.worst.index, bad);
}

TEST(ErrorBudget, OneElementJustWithinItsBudgetPassesElementwise) {
    Fixture f;
    const std::size_t edge = 99;
    f.c[edge] = static_cast<float>(f.reference[edge] + 0.9 * f.elementwise_budget(edge));
    const VerificationReport report = check_against_reference(f.c, f.reference, f.magnitude, f.budget);
    EXPECT_FALSE(report.first_bad.has_value());
    EXPECT_NEAR(report.worst_error_over_budget, 0.9, 0.01);
}

// C written in bf16: the reference rounded to bf16's 8 significant bits (the best a stage
// could write) passes only with bf16's output rounding in the budget.
TEST(ErrorBudget, Bf16OutputRoundingIsInTheBudgetOnlyWhenAsked) {
    Fixture f;
    for (std::size_t i = 0; i < f.c.size(); ++i) {
        int exponent = 0;
        const double fraction = std::frexp(f.reference[i], &exponent);  // in [0.5, 1)
        f.c[i] = static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(fraction, 8)), exponent - 8));
    }
    EXPECT_FALSE(check_against_reference(f.c, f.reference, f.magnitude, f.budget).passed());
    ErrorBudget bf16_output = f.budget;
    bf16_output.output_unit_roundoff = kBf16UnitRoundoff;
    EXPECT_TRUE(check_against_reference(f.c, f.reference, f.magnitude, bf16_output).passed());
}

TEST(ErrorBudget, UnwrittenElementFails) {
    Fixture f;
    const std::size_t unwritten = f.c.size() - 1;
    f.c[unwritten] = std::numeric_limits<float>::quiet_NaN();  // the driver's poison
    const VerificationReport report = check_against_reference(f.c, f.reference, f.magnitude, f.budget);
    EXPECT_FALSE(report.passed());
    ASSERT_TRUE(report.first_bad.has_value());
    EXPECT_EQ(report.first_bad->index, unwritten);
    EXPECT_TRUE(std::isinf(report.worst_error_over_budget));
    EXPECT_EQ(report.wrong_class, 1u);  // NaN where a number is due; the norms leave it out
}

TEST(ErrorBudget, InfinityFails) {
    Fixture f;
    f.c[3] = std::numeric_limits<float>::infinity();
    EXPECT_FALSE(check_against_reference(f.c, f.reference, f.magnitude, f.budget).passed());
}

TEST(ErrorBudget, SystematicErrorUnderTheElementwiseBoundFailsNormwise) {
    // Every element off by 40 % of its elementwise budget, all in one direction: what
    // dropping a term of every dot product looks like at large K.
    Fixture f;
    for (std::size_t i = 0; i < f.c.size(); ++i)
        f.c[i] = static_cast<float>(f.reference[i] + 0.4 * f.elementwise_budget(i));
    const VerificationReport report = check_against_reference(f.c, f.reference, f.magnitude, f.budget);
    EXPECT_FALSE(report.first_bad.has_value());
    EXPECT_FALSE(report.normwise_ok);
    EXPECT_FALSE(report.passed());
}

TEST(ErrorBudget, ZeroMagnitudeDemandsZeroUpToUnderflow) {
    // alpha = beta = 0: the result must be 0, or within the underflow allowance of it.
    const std::vector<double> zeros(8, 0.0);
    std::vector<float> c(8, 0.0f);
    const ErrorBudget budget{kFp32UnitRoundoff, 16};
    EXPECT_TRUE(check_against_reference(c, zeros, zeros, budget).passed());
    c[5] = 1e-30f;
    const VerificationReport report = check_against_reference(c, zeros, zeros, budget);
    EXPECT_FALSE(report.passed());
    EXPECT_EQ(report.first_bad->index, 5u);
}

TEST(ErrorBudget, UnderflowAllowsTheSubnormalSpacingPerOperation) {
    // Products near FP32's bottom: a relative bound alone would ask for less than one
    // subnormal spacing, which no FP32 arithmetic can give.
    const ErrorBudget budget{kFp32UnitRoundoff, 16};
    const std::vector<double> reference{0x1p-140, 0x1p-140};
    const std::vector<double> magnitude{0x1p-140, 0x1p-140};
    const std::vector<float> c{static_cast<float>(0x1p-140 + 0x1p-149), static_cast<float>(0x1p-140 + 0x1p-144)};
    const VerificationReport report = check_against_reference(c, reference, magnitude, budget);
    EXPECT_DOUBLE_EQ(budget.elementwise_underflow(), 18 * 0x1p-149);
    ASSERT_TRUE(report.first_bad.has_value());
    EXPECT_EQ(report.first_bad->index, 1u);  // 2^-144 is past 18 spacings; one spacing is not
}

TEST(ErrorBudget, SpecialValuesMustHaveTheReferencesClass) {
    constexpr double kNan = std::numeric_limits<double>::quiet_NaN(), kInf = std::numeric_limits<double>::infinity();
    constexpr float kNanF = std::numeric_limits<float>::quiet_NaN(), kInfF = std::numeric_limits<float>::infinity();
    const std::vector<double> reference{kNan, kInf, -kInf, 1.0};
    const std::vector<double> magnitude{kNan, kInf, kInf, 1.0};
    const ErrorBudget budget{kFp32UnitRoundoff, 4};
    const VerificationReport right = check_against_reference(std::vector<float>{kNanF, kInfF, -kInfF, 1.0f}, reference,
                                                             magnitude, budget);
    EXPECT_TRUE(right.passed());
    EXPECT_EQ(right.non_finite, 3u);
    EXPECT_EQ(right.wrong_class, 0u);
    EXPECT_EQ(right.normwise_relative_error, 0.0);  // over the finite elements only
    // NaN for +Inf, the wrong infinity, a number for NaN: each is one wrong element.
    for (const auto& wrong : {std::vector<float>{kNanF, kNanF, -kInfF, 1.0f}, std::vector<float>{kNanF, kInfF, kInfF, 1.0f},
                              std::vector<float>{0.0f, kInfF, -kInfF, 1.0f}, std::vector<float>{kNanF, kInfF, -kInfF, kInfF}}) {
        const VerificationReport report = check_against_reference(wrong, reference, magnitude, budget);
        EXPECT_FALSE(report.passed());
        EXPECT_EQ(report.wrong_class, 1u);
        ASSERT_TRUE(report.first_bad.has_value());
        EXPECT_TRUE(std::isinf(report.worst_error_over_budget));
    }
}

TEST(ErrorBudget, WorstErrorOverMagnitude) {
    const std::vector<double> reference{1.0, 0.0, 2.0};
    const std::vector<double> magnitude{4.0, 8.0, 2.0};
    const std::vector<float> c{1.0f + 0x1p-20f, 0x1p-18f, 2.0f};
    const VerificationReport report = check_against_reference(c, reference, magnitude, ErrorBudget{kFp32UnitRoundoff, 8});
    EXPECT_DOUBLE_EQ(report.worst_error_over_magnitude, 0x1p-21);  // element 1: 2^-18 / 8
}

TEST(ErrorBudget, BudgetGrowsWithK) {
    const ErrorBudget small{kFp32UnitRoundoff, 64};
    const ErrorBudget large{kFp32UnitRoundoff, 8192};
    EXPECT_NEAR(small.elementwise_factor(), 66 * kFp32UnitRoundoff, 1e-10);  // gamma(n) ~ n u
    EXPECT_GT(large.elementwise_factor(), 100 * small.elementwise_factor());
    EXPECT_NEAR(large.normwise_factor(), (3 + std::sqrt(8192.0)) * kFp32UnitRoundoff, 1e-15);
}

// Sums kept in FP8 wgmma's 13-bit accumulator over all of K: gamma gives no bound from
// K u >= 1 on, and such a budget allows any finite value, a K block dropped among them. A
// measured factor (verify_fp8: cuBLASLt's error on the same operands) bounds both checks.
TEST(ErrorBudget, UnboundedWithoutAMeasuredFactorAndFailingWithOne) {
    ErrorBudget budget{0x1p-23, 8192};
    budget.block_terms = 8192;
    budget.block_unit_roundoff = kFp8MmaUnitRoundoff;
    budget.one_signed_block_errors = true;
    EXPECT_TRUE(std::isinf(budget.elementwise_factor()));
    EXPECT_TRUE(std::isinf(budget.normwise_factor()));
    EXPECT_FALSE(budget.bounded());

    // One K block of 64 left out: each element short by 1/64 of its magnitude.
    const std::vector<double> reference{100.0, -50.0, 25.0};
    const std::vector<double> magnitude{640.0, 640.0, 640.0};
    const std::vector<float> dropped_block{90.0f, -60.0f, 15.0f};
    const VerificationReport unbounded = check_against_reference(dropped_block, reference, magnitude, budget);
    EXPECT_TRUE(unbounded.passed());
    EXPECT_FALSE(unbounded.bounded);  // reported unbounded, never verified

    budget.measured_factor = 4 * 0x1p-10;  // four times an error of 2^-10 of W
    EXPECT_TRUE(budget.bounded());
    EXPECT_DOUBLE_EQ(budget.elementwise_factor(), 0x1p-8);
    EXPECT_DOUBLE_EQ(budget.normwise_factor(), 0x1p-8);
    const VerificationReport held = check_against_reference(dropped_block, reference, magnitude, budget);
    EXPECT_TRUE(held.bounded);
    EXPECT_FALSE(held.passed());
    const std::vector<float> within{101.0f, -51.0f, 24.0f};  // 1/640 of W: under 2^-8
    EXPECT_TRUE(check_against_reference(within, reference, magnitude, budget).passed());
}

TEST(ErrorBudget, MeasuredFactorLeavesAFiniteBudgetAlone) {
    ErrorBudget budget{kFp32UnitRoundoff, 64};
    budget.measured_factor = 1.0;
    EXPECT_NEAR(budget.elementwise_factor(), 66 * kFp32UnitRoundoff, 1e-10);
    EXPECT_TRUE(budget.bounded());
}

TEST(ErrorBudget, SizeMismatchThrows) {
    const std::vector<float> c(3);
    const std::vector<double> r(4);
    EXPECT_THROW(check_against_reference(c, r, r, ErrorBudget{kFp32UnitRoundoff, 1}),
                 std::invalid_argument);
}

TEST(ErrorBudget, NormwiseDifference) {
    const std::vector<float> y{3.0f, 4.0f};
    const std::vector<float> x{3.0f, 4.5f};
    EXPECT_NEAR(normwise_relative_difference(x, y), 0.1, 1e-12);
    // Elements not finite in both are left out.
    constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
    EXPECT_NEAR(normwise_relative_difference(std::vector<float>{3.0f, 4.5f, kNan}, std::vector<float>{3.0f, 4.0f, kNan}),
                0.1, 1e-12);
}

}  // namespace
}  // namespace sgemm
