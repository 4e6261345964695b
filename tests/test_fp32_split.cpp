// The splits of FP32 values into 16-bit parts (kernels/common/fp32_split.cuh), on the host.
// Stage 21's three bf16 parts add up to the value exactly, each about 2^-8 of the one
// before; stage 22's scaling exponent brings a row's largest value into [2^14, 2^15), where
// two fp16 parts carry 22 bits of every value within 2^-17 of it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/fp32_split.cuh"

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
        const float scaled = std::ldexp(largest, f16_scaling_exponent(largest));
        ASSERT_GE(scaled, 16384.0f) << largest;
        ASSERT_LT(scaled, 32768.0f) << largest;
    }
    EXPECT_EQ(f16_scaling_exponent(0.0f), 0);
    EXPECT_EQ(f16_scaling_exponent(INFINITY), 0);
    EXPECT_EQ(f16_scaling_exponent(NAN), 0);
}

TEST(Fp16Split, TwoPartsCarry22BitsWithin2ToThe17OfTheLargest) {
    std::uint64_t state = 11;
    for (int i = 0; i < 200000; ++i) {
        // Scaled values from 2^-3 (2^-17 of a largest value near 2^14) to just under 2^15.
        const float x = random_float(state, -3, 14);
        const F16Parts parts = split_into_f16_parts(x);
        const double hi = __half2float(parts.hi), lo = __half2float(parts.lo);
        ASSERT_LE(std::fabs(hi + lo - x), std::ldexp(std::fabs(static_cast<double>(x)), -22)) << x;
        ASSERT_LE(std::fabs(lo), std::ldexp(std::fabs(hi), -11)) << x;
    }
}

TEST(Fp16Split, SmallIntegersAreTheirOwnHighPart) {
    for (const float x : {0.0f, 1.0f, -8.0f, 2047.0f}) {
        const F16Parts parts = split_into_f16_parts(x);
        EXPECT_EQ(__half2float(parts.hi), x);
        EXPECT_EQ(__half2float(parts.lo), 0.0f);
    }
}

}  // namespace
}  // namespace sgemm
