// Stage 21's split of an FP32 value into three bf16 parts (kernels/common/fp32_split.cuh),
// on the host: the parts add up to the value exactly, each about 2^-8 of the one before.
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

TEST(Fp32Split, PartsAddUpExactly) {
    std::uint64_t state = 1;
    for (int i = 0; i < 200000; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        // Random signs, exponents from 2^-100 to 2^100, every significand.
        const std::uint32_t exponent = 27 + static_cast<std::uint32_t>((state >> 33) % 201);
        const float x = from_bits(static_cast<std::uint32_t>(state >> 63) << 31 | exponent << 23 |
                                  static_cast<std::uint32_t>(state & 0x7FFFFF));
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

}  // namespace
}  // namespace sgemm
