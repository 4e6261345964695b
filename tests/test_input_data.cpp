// What sgemm --data fills A, B and C with (src/verification/input_data.hpp), computed on
// the host by the same function the device runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "verification/input_data.hpp"

namespace sgemm {
namespace {

constexpr int kSamples = 200000;

// Element i of a 1000-column matrix of `operand`.
float value_at(InputData data, std::uint64_t seed, std::uint64_t i, Operand operand = Operand::a) {
    constexpr std::uint64_t kColumns = 1000;
    return input_value(data, seed, MatrixElement{operand, i / kColumns, i % kColumns, kSamples / kColumns, kColumns});
}

TEST(InputData, NamesRoundTrip) {
    for (const std::string& name : input_data_names()) {
        const auto data = input_data_named(name);
        ASSERT_TRUE(data.has_value()) << name;
        EXPECT_EQ(to_string(*data), name);
    }
    EXPECT_FALSE(input_data_named("normal").has_value());
}

TEST(InputData, UniformIsInMinusOneToOneOnTheTwoToTheMinus23Grid) {
    float low = 1.0f, high = -1.0f;
    for (std::uint64_t i = 0; i < kSamples; ++i) {
        const float x = value_at(InputData::uniform, 7, i);
        ASSERT_GE(x, -1.0f);
        ASSERT_LT(x, 1.0f);
        ASSERT_EQ(std::ldexp(x, 23), std::trunc(std::ldexp(x, 23))) << x;
        low = std::fmin(low, x), high = std::fmax(high, x);
    }
    EXPECT_LT(low, -0.999f);
    EXPECT_GT(high, 0.999f);
    // The values sgemm drew before --data existed: same seed, same matrix.
    const std::uint64_t bits = mix_bits(mix_bits(7) ^ 3) >> 40;
    EXPECT_EQ(value_at(InputData::uniform, 7, 3), static_cast<float>(bits) * 0x1p-23f - 1.0f);
}

TEST(InputData, WideSpansSixDecadesWithBothSigns) {
    std::set<int> decades;
    int negative = 0;
    for (std::uint64_t i = 0; i < kSamples; ++i) {
        const float x = value_at(InputData::wide, 11, i);
        const float magnitude = std::fabs(x);
        ASSERT_GE(magnitude, 0.999e-3f) << x;
        ASSERT_LE(magnitude, 1.001e3f) << x;
        decades.insert(static_cast<int>(std::floor(std::log10(magnitude))));
        negative += x < 0.0f;
    }
    EXPECT_EQ(decades, (std::set<int>{-3, -2, -1, 0, 1, 2}));
    EXPECT_NEAR(negative, kSamples / 2, kSamples / 50);
}

TEST(InputData, ExactIsEveryIntegerFromMinusEightToEight) {
    std::set<int> seen;
    for (std::uint64_t i = 0; i < kSamples; ++i) {
        const float x = value_at(InputData::exact, 13, i);
        ASSERT_EQ(x, std::trunc(x));
        ASSERT_GE(x, -8.0f);
        ASSERT_LE(x, 8.0f);
        seen.insert(static_cast<int>(x));
    }
    EXPECT_EQ(seen.size(), 17u);
}

// graded: A's column k is 2^-g(k) times a uniform value, B's row k 2^g(k) times one, g
// covering 0 .. 40: each product has a uniform product's size.
TEST(InputData, GradedScalesAAndBInverselyAlongK) {
    std::set<int> exponents;
    for (std::uint64_t k = 0; k < 4096; ++k) {
        const int g = graded_exponent(k);
        exponents.insert(g);
        const float a = input_value(InputData::graded, 1, MatrixElement{Operand::a, 5, k, 8, 4096});
        const float b = input_value(InputData::graded, 2, MatrixElement{Operand::b, k, 9, 4096, 16});
        ASSERT_LT(std::fabs(a), std::ldexp(1.0f, -g)) << k;
        ASSERT_LT(std::fabs(b), std::ldexp(1.0f, g)) << k;
        ASSERT_EQ(std::fabs(a) * std::ldexp(1.0f, g), std::fabs(input_value(InputData::uniform, 1, MatrixElement{Operand::a, 5, k, 8, 4096})));
    }
    EXPECT_EQ(exponents.size(), 41u);
    EXPECT_EQ(*exponents.begin(), 0);
    EXPECT_EQ(*exponents.rbegin(), 40);
}

// outliers: where A holds its outliers B's row is zero, and the other way round; only
// one row of A in 8 (column of B) holds them.
TEST(InputData, OutliersMeetZeros) {
    int in_a = 0, in_b = 0, rows_with_outliers = 0;
    for (std::uint64_t row = 0; row < 64; ++row) rows_with_outliers += holds_outliers(row);
    EXPECT_NEAR(rows_with_outliers, 8, 5);
    for (std::uint64_t k = 0; k < 8192; ++k)
        for (const std::uint64_t line : {0ull, 1ull, 2ull, 3ull, 4ull, 5ull, 6ull, 7ull, 8ull}) {
            const float a = input_value(InputData::outliers, 1, MatrixElement{Operand::a, line, k, 16, 8192});
            const float b = input_value(InputData::outliers, 2, MatrixElement{Operand::b, k, line, 8192, 16});
            const float a_uniform = std::fabs(input_value(InputData::uniform, 1, MatrixElement{Operand::a, line, k, 16, 8192}));
            const float b_uniform = std::fabs(input_value(InputData::uniform, 2, MatrixElement{Operand::b, k, line, 8192, 16}));
            const float scale = holds_outliers(line) ? 0x1p24f : 1.0f;
            switch (outlier_role(k)) {
                case OutlierRole::in_a:
                    in_a += line == 0;
                    ASSERT_EQ(b, 0.0f);
                    ASSERT_EQ(std::fabs(a), scale * a_uniform);
                    break;
                case OutlierRole::in_b:
                    in_b += line == 0;
                    ASSERT_EQ(a, 0.0f);
                    ASSERT_EQ(std::fabs(b), scale * b_uniform);
                    break;
                case OutlierRole::none:
                    ASSERT_EQ(std::fabs(a), a_uniform);
                    ASSERT_EQ(std::fabs(b), b_uniform);
            }
        }
    EXPECT_NEAR(in_a, 8192 / 128, 24);
    EXPECT_NEAR(in_b, 8192 / 128, 24);
}

// subnormal: A and C below FP32's smallest normal, with 1 .. 23 significant bits; B uniform.
TEST(InputData, SubnormalFillsFp32sBottomBinades) {
    std::set<int> binades;
    for (std::uint64_t i = 0; i < kSamples; ++i) {
        const float a = value_at(InputData::subnormal, 3, i, Operand::a);
        ASSERT_EQ(std::fpclassify(a), FP_SUBNORMAL) << a;
        binades.insert(std::ilogb(a));
        ASSERT_EQ(std::fpclassify(value_at(InputData::subnormal, 3, i, Operand::c)), FP_SUBNORMAL);
        ASSERT_LT(std::fabs(value_at(InputData::subnormal, 3, i, Operand::b)), 1.0f);
    }
    EXPECT_EQ(binades.size(), 23u);  // 2^-149 .. 2^-127
}

// extremes: A's magnitudes in [2^-126, 2^-118), B's in [2^118, 2^126): products near 1.
TEST(InputData, ExtremesSitNearFp32sLimits) {
    for (std::uint64_t i = 0; i < kSamples; ++i) {
        const float a = std::fabs(value_at(InputData::extremes, 5, i, Operand::a));
        const float b = std::fabs(value_at(InputData::extremes, 5, i, Operand::b));
        ASSERT_GE(a, 0x1p-126f);
        ASSERT_LE(a, 0x1p-118f);
        ASSERT_GE(b, 0x1p118f);
        ASSERT_LE(b, 0x1p126f);
        ASSERT_TRUE(std::isfinite(a * b * 4096.0f));
    }
}

// special: about eight NaN, +Inf and -Inf a matrix, -0 one element in 64, and uniform
// values otherwise.
TEST(InputData, SpecialScattersNanInfinitiesAndNegativeZeros) {
    int nan = 0, plus = 0, minus = 0, negative_zero = 0;
    for (std::uint64_t i = 0; i < kSamples; ++i) {
        const float x = value_at(InputData::special, 9, i);
        if (std::isnan(x)) ++nan;
        else if (std::isinf(x)) (x > 0 ? plus : minus) += 1;
        else if (x == 0.0f && std::signbit(x)) ++negative_zero;
        else ASSERT_LT(std::fabs(x), 1.0f);
    }
    for (const int count : {nan, plus, minus}) {
        EXPECT_GE(count, 1);
        EXPECT_LE(count, 24);
    }
    EXPECT_NEAR(negative_zero, kSamples / 64, kSamples / 320);
    // A tiny matrix: at most one element in 16 of each.
    int tiny_special = 0;
    for (std::uint64_t i = 0; i < 16000; ++i)
        tiny_special += !std::isfinite(input_value(InputData::special, i, MatrixElement{Operand::a, 0, 0, 1, 1}));
    EXPECT_NEAR(tiny_special, 3000, 300);
}

// cancelling: along K in pairs, A's two values equal, B's opposite and 2^-13 .. 2^-12 apart
// in magnitude, so that a pair's products cancel to that fraction of themselves.
TEST(InputData, CancellingPairsAlongK) {
    constexpr std::uint64_t kRows = 100, kColumns = 64;
    for (std::uint64_t row = 0; row < kRows; ++row)
        for (std::uint64_t k = 0; k + 1 < kColumns; k += 2) {
            const auto a = [&](std::uint64_t kk) {
                return input_value(InputData::cancelling, 5, MatrixElement{Operand::a, row, kk, kRows, kColumns});
            };
            const auto b = [&](std::uint64_t kk) {  // B is K x N: row kk of B, column `row`
                return input_value(InputData::cancelling, 6, MatrixElement{Operand::b, kk, row, kColumns, kRows});
            };
            EXPECT_EQ(a(k), a(k + 1));
            EXPECT_NE(a(k), a(k + 2));
            const double first = b(k), second = b(k + 1), apart = std::fabs(first + second);
            EXPECT_LE(apart, 0x1p-12 * std::fabs(first) * 1.0001) << first << " " << second;
            EXPECT_GE(apart, 0x1p-13 * std::fabs(first) * 0.9999) << first << " " << second;
        }
}

// positive: A's and B's values in [0, 1) on the 2^-24 grid, spread over it; C's uniform, of
// both signs.
TEST(InputData, PositiveIsInZeroToOneForAAndB) {
    for (const Operand operand : {Operand::a, Operand::b}) {
        float low = 1.0f, high = 0.0f;
        for (std::uint64_t i = 0; i < kSamples; ++i) {
            const float x = value_at(InputData::positive, 13, i, operand);
            ASSERT_GE(x, 0.0f) << x;
            ASSERT_LT(x, 1.0f) << x;
            ASSERT_EQ(x, std::ldexp(std::floor(std::ldexp(x, 24)), -24)) << x;
            low = std::min(low, x);
            high = std::max(high, x);
        }
        EXPECT_LT(low, 0.001f);
        EXPECT_GT(high, 0.999f);
    }
    int negative = 0;
    for (std::uint64_t i = 0; i < kSamples; ++i) negative += value_at(InputData::positive, 13, i, Operand::c) < 0.0f;
    EXPECT_NEAR(negative, kSamples / 2, kSamples / 50);
}

}  // namespace
}  // namespace sgemm
