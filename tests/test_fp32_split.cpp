// The splits of FP32 values into 16-bit parts (kernels/common/fp32_split.cuh), on the host.
// Stage 21's three bf16 parts add up to the value exactly, each about 2^-8 of the one
// before, for every value down to 2^-124 of its row's largest once scaled; the scaling
// exponent brings a row's largest value into [2^14, 2^15), where stage 22's two fp16
// parts carry 22 bits of every value within 2^-28 of it, the range its check asks for.
// Stage 32's two tf32 parts (kernels/common/tf32_split.cuh) need no scaling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/fp32_split.cuh"
#include "common/tf32_split.cuh"

namespace sgemm {
namespace {

float from_bits(std::uint32_t bits) {
    float x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
}

// Random signs, exponents from 2^lowest_exponent to 2^highest_exponent, every significand.
float random_float(std::uint64_t& state, int lowest_exponent, int highest_exponent) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const int span = highest_exponent - lowest_exponent + 1;
    const auto exponent = static_cast<std::uint32_t>(127 + lowest_exponent + static_cast<int>((state >> 33) % span));
    return from_bits(static_cast<std::uint32_t>(state >> 63) << 31 | exponent << 23 |
                     static_cast<std::uint32_t>(state & 0x7FFFFF));
}

TEST(Fp32Split, PartsAddUpExactly) {
    std::uint64_t state = 1;
    for (int i = 0; i < 200000; ++i) {
        const float x = random_float(state, -100, 100);
        const Bf16Parts parts = split_into_bf16_parts(x);
        const float hi = __bfloat162float(parts.hi), mid = __bfloat162float(parts.mid),
                    lo = __bfloat162float(parts.lo);
        ASSERT_EQ(static_cast<double>(hi) + mid + lo, static_cast<double>(x)) << x;
        ASSERT_LE(std::fabs(mid), std::ldexp(std::fabs(hi), -8)) << x;
        ASSERT_LE(std::fabs(lo), std::ldexp(std::fabs(hi), -16)) << x;
    }
}

TEST(Fp32Split, SmallIntegersAndZeroAreTheirOwnHighPart) {
    for (const float x : {0.0f, 1.0f, -8.0f, 255.0f}) {
        const Bf16Parts parts = split_into_bf16_parts(x);
        EXPECT_EQ(__bfloat162float(parts.hi), x);
        EXPECT_EQ(__bfloat162float(parts.mid), 0.0f);
        EXPECT_EQ(__bfloat162float(parts.lo), 0.0f);
    }
}

TEST(Fp16Split, ScalingExponentBringsTheLargestValueIntoRange) {
    std::uint64_t state = 7;
    for (int i = 0; i < 100000; ++i) {
        const float largest = std::fabs(random_float(state, -126, 127));
        const float scaled = std::ldexp(largest, scaling_exponent(largest));
        ASSERT_GE(scaled, 16384.0f) << largest;
        ASSERT_LT(scaled, 32768.0f) << largest;
    }
    EXPECT_EQ(scaling_exponent(0.0f), 0);
    EXPECT_EQ(scaling_exponent(INFINITY), 0);
    EXPECT_EQ(scaling_exponent(NAN), 0);
}

// hi + 2^-11 lo, as the GEMM weighs the lo products.
double f16_sum(const F16Parts& parts) {
    return __half2float(parts.hi) + static_cast<double>(__half2float(parts.lo)) / kF16LoScale;
}

TEST(Fp16Split, TwoPartsCarry22BitsFrom2ToTheMinus14Up) {
    std::uint64_t state = 11;
    for (int i = 0; i < 200000; ++i) {
        // Scaled values from 2^-14 (fp16's smallest normal, 2^-28 of a largest value near
        // 2^14) to just under 2^15.
        const float x = random_float(state, -14, 14);
        const F16Parts parts = split_into_f16_parts(x);
        ASSERT_LE(std::fabs(f16_sum(parts) - x), std::ldexp(std::fabs(static_cast<double>(x)), -22)) << x;
        ASSERT_LE(std::fabs(__half2float(parts.lo)), std::fabs(__half2float(parts.hi))) << x;
    }
}

TEST(Fp16Split, BelowFp16sNormalsTheErrorIsAbsolute) {
    std::uint64_t state = 13;
    for (int i = 0; i < 100000; ++i) {
        const float x = random_float(state, -40, -15);
        ASSERT_LE(std::fabs(f16_sum(split_into_f16_parts(x)) - x), 0x1p-25) << x;
    }
}

// The check stage 22 makes of each row of A and column of B: where the smallest nonzero
// magnitude is at least 2^-28 of the largest, every value, scaled, keeps 22 bits.
TEST(Fp16Split, RowsThatPassTheCheckKeep22Bits) {
    std::uint64_t state = 17;
    for (int i = 0; i < 100000; ++i) {
        const float largest = std::fabs(random_float(state, -90, 127));
        int exponent;
        std::frexp(largest, &exponent);
        const float x = std::fmin(std::fabs(random_float(state, exponent - 29, exponent - 1)), largest);
        if (!fits_two_f16_parts(largest, x)) {
            ASSERT_LT(x, std::ldexp(largest, -28)) << x << " in a row up to " << largest;
            continue;
        }
        const float scaled = std::ldexp(x, scaling_exponent(largest));
        ASSERT_LE(std::fabs(f16_sum(split_into_f16_parts(scaled)) - scaled), std::ldexp(static_cast<double>(scaled), -22))
            << x << " in a row up to " << largest;
    }
    EXPECT_TRUE(fits_two_f16_parts(0.0f, INFINITY));  // a row of zeros
    EXPECT_TRUE(fits_two_f16_parts(1.0f, 0x1p-28f));
    EXPECT_FALSE(fits_two_f16_parts(1.0f, 0x1p-29f));
}

// Scaled, stage 21's parts stay normal, and so exact, down to 2^-124 of the largest,
// FP32's subnormals included.
TEST(Fp32Split, ScaledPartsAddUpExactlyDownTo2ToTheMinus124OfTheLargest) {
    std::uint64_t state = 19;
    for (int i = 0; i < 100000; ++i) {
        const float largest = std::fabs(random_float(state, -126, 127));
        int exponent;
        std::frexp(largest, &exponent);
        float x = std::fabs(random_float(state, std::max(exponent - 124, -126), exponent - 1));
        if (i % 4 == 0) x = from_bits(static_cast<std::uint32_t>(state >> 41));  // a subnormal
        if (x > largest || x < std::ldexp(largest, -124)) continue;
        const float scaled = std::ldexp(x, scaling_exponent(largest));
        const Bf16Parts parts = split_into_bf16_parts(scaled);
        ASSERT_EQ(static_cast<double>(__bfloat162float(parts.hi)) + __bfloat162float(parts.mid) + __bfloat162float(parts.lo),
                  static_cast<double>(scaled)) << x << " in a row up to " << largest;
    }
}

TEST(Fp16Split, SmallIntegersAreTheirOwnHighPart) {
    for (const float x : {0.0f, 1.0f, -8.0f, 2047.0f}) {
        const F16Parts parts = split_into_f16_parts(x);
        EXPECT_EQ(__half2float(parts.hi), x);
        EXPECT_EQ(__half2float(parts.lo), 0.0f);
    }
}

// Stage 32's tf32 parts (common/tf32_split.cuh): big and small are tf32 values (low 13 bits
// zero), small at most 2^-11 of x, together within 2^-22 of x, from 2^-103 to 2^114.
TEST(Tf32Split, TwoPartsCarry22BitsWithoutScaling) {
    std::uint64_t state = 7;
    for (int i = 0; i < 400000; ++i) {
        const float x = random_float(state, -103, 113);
        const Tf32Parts parts = split_into_tf32_parts(x);
        ASSERT_EQ(parts.big & 0x1FFFu, 0u) << x;
        ASSERT_EQ(parts.small & 0x1FFFu, 0u) << x;
        const double big = float_of_bits(parts.big), small = float_of_bits(parts.small);
        ASSERT_LE(std::fabs(small), std::ldexp(std::fabs(static_cast<double>(x)), -11)) << x;
        ASSERT_LE(std::fabs(big + small - x), std::ldexp(std::fabs(static_cast<double>(x)), -22)) << x;
    }
}

TEST(Tf32Split, TiesRoundAwayFromZero) {
    EXPECT_EQ(split_into_tf32_parts(1.0f).big, 0x3F800000u);
    EXPECT_EQ(split_into_tf32_parts(1.0f).small, 0u);
    EXPECT_EQ(split_into_tf32_parts(from_bits(0x3F801000u)).big, 0x3F802000u);  // 1 + 2^-11: a tie, up
    EXPECT_EQ(split_into_tf32_parts(from_bits(0xBF801000u)).big, 0xBF802000u);
    EXPECT_EQ(split_into_tf32_parts(from_bits(0x3F800FFFu)).big, 0x3F800000u);
    EXPECT_EQ(float_of_bits(split_into_tf32_parts(1.0f + std::ldexp(1.0f, -23)).small), std::ldexp(1.0f, -23));
    EXPECT_EQ(split_into_tf32_parts(0.0f).big, 0u);
    EXPECT_EQ(split_into_tf32_parts(0.0f).small, 0u);
}

}  // namespace
}  // namespace sgemm
