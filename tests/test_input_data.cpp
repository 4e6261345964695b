// What sgemm --data fills A, B and C with (src/verification/input_data.hpp), computed on
// the host by the same function the device runs.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "verification/input_data.hpp"

namespace sgemm {
namespace {

constexpr int kSamples = 200000;

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
        const float x = input_value(InputData::uniform, 7, i);
        ASSERT_GE(x, -1.0f);
        ASSERT_LT(x, 1.0f);
        ASSERT_EQ(std::ldexp(x, 23), std::trunc(std::ldexp(x, 23))) << x;
        low = std::fmin(low, x), high = std::fmax(high, x);
    }
    EXPECT_LT(low, -0.999f);
    EXPECT_GT(high, 0.999f);
    // The values sgemm drew before --data existed: same seed, same matrix.
    const std::uint64_t bits = mix_bits(mix_bits(7) ^ 3) >> 40;
    EXPECT_EQ(input_value(InputData::uniform, 7, 3), static_cast<float>(bits) * 0x1p-23f - 1.0f);
}

TEST(InputData, WideSpansSixDecadesWithBothSigns) {
    std::set<int> decades;
    int negative = 0;
    for (std::uint64_t i = 0; i < kSamples; ++i) {
        const float x = input_value(InputData::wide, 11, i);
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
        const float x = input_value(InputData::exact, 13, i);
        ASSERT_EQ(x, std::trunc(x));
        ASSERT_GE(x, -8.0f);
        ASSERT_LE(x, 8.0f);
        seen.insert(static_cast<int>(x));
    }
    EXPECT_EQ(seen.size(), 17u);
}

}  // namespace
}  // namespace sgemm
