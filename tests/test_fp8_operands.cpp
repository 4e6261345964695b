// The FP8 operands (verification/fp8_operands.hpp): e4m3 rounding, the recipe's block scales,
// the float64 reference of the dequantized operands, and the scales' layout for cuBLASLt.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "verification/error_budget.hpp"
#include "verification/fp8_operands.hpp"
#include "verification/host_parallel.hpp"

namespace sgemm {
namespace {

TEST(E4m3, EveryCodeRoundTrips) {
    for (int code = 0; code < 256; ++code) {
        const double value = e4m3_to_double(static_cast<std::uint8_t>(code));
        if ((code & 0x7f) == 0x7f) {
            EXPECT_TRUE(std::isnan(value)) << code;
            continue;
        }
        EXPECT_EQ(double_to_e4m3(value), code) << value;
    }
    EXPECT_EQ(e4m3_to_double(0x7e), 448.0);
    EXPECT_EQ(e4m3_to_double(0x01), std::ldexp(1.0, -9));  // the smallest subnormal
    EXPECT_EQ(e4m3_to_double(0x08), std::ldexp(1.0, -6));  // the smallest normal
}

TEST(E4m3, RoundsToNearestTiesToEvenAndSaturates) {
    EXPECT_EQ(e4m3_to_double(double_to_e4m3(1.0625)), 1.0);    // halfway 1 and 1.125: to even (1.0)
    EXPECT_EQ(e4m3_to_double(double_to_e4m3(1.1875)), 1.25);   // halfway 1.125 and 1.25: to even
    EXPECT_EQ(e4m3_to_double(double_to_e4m3(1.07)), 1.125);
    EXPECT_EQ(e4m3_to_double(double_to_e4m3(440.0)), 448.0);
    EXPECT_EQ(e4m3_to_double(double_to_e4m3(1e6)), 448.0);
    EXPECT_EQ(e4m3_to_double(double_to_e4m3(-INFINITY)), -448.0);
    EXPECT_TRUE(std::isnan(e4m3_to_double(double_to_e4m3(NAN))));
    EXPECT_EQ(e4m3_to_double(double_to_e4m3(std::ldexp(1.0, -11))), 0.0);  // under half the smallest
    EXPECT_EQ(e4m3_to_double(double_to_e4m3(std::ldexp(3.0, -10))), std::ldexp(1.0, -8));  // 1.5 quanta: to even
}

// FP32 data whose blocks (1 x 128 or 128 x 128) each have their own magnitude, 2^-8 to 2^8:
// a value scaled by another block's scale would be off by up to 2^16.
std::vector<float> graded_blocks(int rows, int k, Fp8Block block, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> exponent(-8, 8);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    const int block_rows = block == Fp8Block::block_128x128 ? 128 : 1;
    const int row_blocks = (rows + block_rows - 1) / block_rows, k_blocks = (k + 127) / 128;
    std::vector<int> exponents(static_cast<std::size_t>(row_blocks) * k_blocks);
    for (int& e : exponents) e = exponent(rng);
    std::vector<float> x(static_cast<std::size_t>(rows) * k);
    for (int row = 0; row < rows; ++row)
        for (int column = 0; column < k; ++column)
            x[static_cast<std::size_t>(row) * k + column] =
                std::ldexp(uniform(rng), exponents[static_cast<std::size_t>(row / block_rows) * k_blocks + column / 128]);
    return x;
}

TEST(Fp8Quantize, EachBlockHasItsOwnScale) {
    for (const Fp8Block block : {Fp8Block::row_128, Fp8Block::block_128x128}) {
        const int rows = 200, k = 300;
        const std::vector<float> x = graded_blocks(rows, k, block, 7);
        const Fp8Operand operand = quantize_e4m3(x, rows, k, block);
        ASSERT_EQ(operand.scales.size(),
                  static_cast<std::size_t>(block == Fp8Block::row_128 ? rows : 2) * 3);
        // Each scale is its block's amax over 448, and every value comes back within e4m3's
        // half step (2^-4 relative above 2^-6 x scale, 2^-10 x scale below).
        for (int row = 0; row < rows; ++row)
            for (int column = 0; column < k; ++column) {
                const double original = x[static_cast<std::size_t>(row) * k + column];
                const double scale = operand.scale(row, column);
                const double error = std::fabs(operand.value(row, column) - original);
                EXPECT_LE(error, std::max(std::fabs(original) / 16.0, scale * std::ldexp(1.0, -10)))
                    << row << ", " << column;
            }
        double amax = 0.0;
        for (int row = 0; row < (block == Fp8Block::row_128 ? 1 : 128); ++row)
            for (int column = 0; column < 128; ++column)
                amax = std::max(amax, std::fabs(static_cast<double>(x[static_cast<std::size_t>(row) * k + column])));
        EXPECT_FLOAT_EQ(operand.scale(0, 0), static_cast<float>(amax / kE4m3Max));
    }
}

// The quantization runs over the host's threads (host_parallel.hpp): its scales and values are
// the serial definition's, in every blocking, on more rows than one thread takes and with a
// row count off the 128-row bands.
TEST(Fp8Quantize, OverTheHostsThreadsAsTheSerialDefinition) {
    const int rows = 128 * static_cast<int>(host_threads()) + 77, k = 260;
    for (const Fp8Block block : {Fp8Block::tensor, Fp8Block::row_128, Fp8Block::block_128x128}) {
        const std::vector<float> x =
            graded_blocks(rows, k, block == Fp8Block::tensor ? Fp8Block::block_128x128 : block, 11);
        const Fp8Operand operand = quantize_e4m3(x, rows, k, block);
        std::vector<float> amax(operand.scales.size(), 0.0f);
        for (int row = 0; row < rows; ++row)
            for (int column = 0; column < k; ++column) {
                const int scale_row = block == Fp8Block::row_128 ? row : row / 128;
                const std::size_t at = block == Fp8Block::tensor
                                           ? 0
                                           : static_cast<std::size_t>(scale_row) * operand.scale_columns() + column / 128;
                amax[at] = std::max(amax[at], std::fabs(x[static_cast<std::size_t>(row) * k + column]));
            }
        for (std::size_t i = 0; i < amax.size(); ++i)
            ASSERT_EQ(operand.scales[i], amax[i] / static_cast<float>(kE4m3Max)) << i;
        for (int row = 0; row < rows; ++row)
            for (int column = 0; column < k; ++column) {
                const std::size_t at = static_cast<std::size_t>(row) * k + column;
                ASSERT_EQ(operand.values[at], double_to_e4m3(static_cast<double>(x[at]) / operand.scale(row, column)))
                    << row << ", " << column;
            }
    }
}

TEST(Fp8Reference, Float64OperandsInBothLayouts) {
    const int rows = 3 * static_cast<int>(host_threads()) + 5, k = 131;
    const std::vector<float> x = graded_blocks(rows, k, Fp8Block::row_128, 13);
    const Fp8Operand operand = quantize_e4m3(x, rows, k, Fp8Block::row_128);
    for (const bool absolute : {false, true}) {
        const std::vector<double> as_is = as_float64(operand, absolute, false);
        const std::vector<double> transposed = as_float64(operand, absolute, true);
        const std::vector<double> fp32 = as_float64(x, rows, k, absolute, false);
        const std::vector<double> fp32_transposed = as_float64(x, rows, k, absolute, true);
        for (int row = 0; row < rows; ++row)
            for (int column = 0; column < k; ++column) {
                const double value = operand.value(row, column);
                const double original = x[static_cast<std::size_t>(row) * k + column];
                const std::size_t at = static_cast<std::size_t>(row) * k + column;
                const std::size_t at_transposed = static_cast<std::size_t>(column) * rows + row;
                ASSERT_EQ(as_is[at], absolute ? std::fabs(value) : value);
                ASSERT_EQ(transposed[at_transposed], absolute ? std::fabs(value) : value);
                ASSERT_EQ(fp32[at], absolute ? std::fabs(original) : original);
                ASSERT_EQ(fp32_transposed[at_transposed], absolute ? std::fabs(original) : original);
            }
    }
}

TEST(HostChunks, EveryItemOnceInChunksOfTheGrain) {
    for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{127}, std::size_t{1000},
                                    std::size_t{128} * host_threads() + 3}) {
        for (const std::size_t grain : {std::size_t{1}, std::size_t{128}}) {
            std::vector<int> seen(count, 0);
            std::vector<std::size_t> begins(host_threads() + 1, count + 1);
            host_chunks(count, grain, [&](std::size_t chunk, std::size_t begin, std::size_t end) {
                begins[chunk] = begin;
                for (std::size_t i = begin; i < end; ++i) ++seen[i];
            });
            EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(count)) << count;
            for (const std::size_t begin : begins)
                if (begin <= count) EXPECT_TRUE(begin % grain == 0 || begin == count) << count << " " << grain;
        }
    }
}

TEST(Fp8Quantize, NonFiniteValuesAsDocumented) {
    const std::vector<float> x = {1.0f, -2.0f, INFINITY, NAN, -INFINITY, 0.5f};
    const Fp8Operand operand = quantize_e4m3(x, 1, 6, Fp8Block::tensor);
    EXPECT_FLOAT_EQ(operand.scales[0], 2.0f / 448.0f);  // amax over the finite values
    EXPECT_FLOAT_EQ(static_cast<float>(operand.value(0, 2)), 2.0f);   // +Inf saturates to 448 x scale
    EXPECT_TRUE(std::isnan(operand.value(0, 3)));
    EXPECT_FLOAT_EQ(static_cast<float>(operand.value(0, 4)), -2.0f);
    const Fp8Operand zeros = quantize_e4m3(std::vector<float>(4, 0.0f), 2, 2, Fp8Block::row_128);
    EXPECT_EQ(zeros.scales, std::vector<float>(2, 1.0f));
}

TEST(Fp8Reference, SmallIntegersWithPowerOfTwoScalesAreExact) {
    const int m = 3, n = 2, k = 256;
    Fp8Operand a{m, k, Fp8Block::row_128, std::vector<std::uint8_t>(m * k), {0.5f, 2.0f, 1.0f, 4.0f, 0.25f, 8.0f}};
    Fp8Operand b{n, k, Fp8Block::block_128x128, std::vector<std::uint8_t>(n * k), {2.0f, 0.5f}};
    for (int i = 0; i < m * k; ++i) a.values[i] = double_to_e4m3(i % 7 - 3);
    for (int i = 0; i < n * k; ++i) b.values[i] = double_to_e4m3(i % 5 - 2);
    const std::vector<double> d = fp8_reference(a, b, 1.0, 0.0, {});
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double sum = 0.0;
            for (int kk = 0; kk < k; ++kk)
                sum += static_cast<double>((i * k + kk) % 7 - 3) * ((j * k + kk) % 5 - 2) *
                       a.scales[i * 2 + kk / 128] * b.scales[kk / 128];
            EXPECT_EQ(d[i * n + j], sum);
        }
}

TEST(Fp8Scales, LaidOutAsCublasLtReadsThem) {
    Fp8Operand rows{5, 300, Fp8Block::row_128, {}, {}};
    for (int i = 0; i < 15; ++i) rows.scales.push_back(static_cast<float>(i + 1));  // [row][block]
    const std::vector<float> rows_laid = cublaslt_scales(rows);
    ASSERT_EQ(rows_laid.size(), 8u * 3);  // 5 rows rounded up to 8, 3 blocks of K
    EXPECT_EQ(rows_laid[0 * 8 + 4], rows.scale(4, 0));
    EXPECT_EQ(rows_laid[2 * 8 + 1], rows.scale(1, 299));
    EXPECT_EQ(rows_laid[2 * 8 + 5], 0.0f);
    Fp8Operand blocks{300, 700, Fp8Block::block_128x128, {}, {}};
    for (int i = 0; i < 18; ++i) blocks.scales.push_back(static_cast<float>(i + 1));  // 3 x 6 blocks
    const std::vector<float> blocks_laid = cublaslt_scales(blocks);
    ASSERT_EQ(blocks_laid.size(), 3u * 8);  // 6 blocks of K rounded up to 8
    EXPECT_EQ(blocks_laid[2 * 8 + 5], blocks.scale(299, 699));
    EXPECT_EQ(blocks_laid[1 * 8 + 0], blocks.scale(128, 0));
}

// The FP8 budget (error_budget.hpp): 128 terms at 2^-13, then K / 128 + 2 additions at 2^-23;
// and it fails what it should: an element past its budget, and a systematic error of a
// sum kept whole in the MMA's accumulator.
TEST(Fp8Budget, PromotedEvery128Terms) {
    const ErrorBudget budget = fp8_error_budget(16384);
    const double inner = 128.0 * kFp8MmaUnitRoundoff, outer = 130.0 * 0x1p-23;
    EXPECT_NEAR(budget.elementwise_factor(), inner / (1 - inner) + outer / (1 - outer), 1e-15);
    EXPECT_NEAR(budget.normwise_factor(), (3 + std::sqrt(128.0)) * kFp8MmaUnitRoundoff + (3 + std::sqrt(128.0)) * 0x1p-23,
                1e-15);
    const std::vector<double> reference(64, 1000.0), magnitude(64, 1000.0);
    std::vector<float> d(64, 1000.0f);
    EXPECT_TRUE(check_against_reference(d, reference, magnitude, budget).passed());
    d[5] = static_cast<float>(1000.0 * (1 + 1.01 * budget.elementwise_factor() + kBf16UnitRoundoff));
    EXPECT_FALSE(check_against_reference(d, reference, magnitude, budget).passed());
    // Every element 1 % low, as 16384 one-signed terms added at 2^-13 would be.
    std::fill(d.begin(), d.end(), 990.0f);
    EXPECT_FALSE(check_against_reference(d, reference, magnitude, budget).passed());
}

// A sum kept whole in the MMA (stage 26): K terms at 2^-13 elementwise and normwise (its
// truncation errors may share a sign), no bound from K = 8192 on.
TEST(Fp8Budget, UnpromotedIsOneBlockOfK) {
    const ErrorBudget budget = fp8_unpromoted_error_budget(4096);
    const double inner = 4096.0 * kFp8MmaUnitRoundoff, outer = 3.0 * 0x1p-23;
    EXPECT_NEAR(budget.elementwise_factor(), inner / (1 - inner) + outer / (1 - outer), 1e-15);
    EXPECT_NEAR(budget.normwise_factor(), inner / (1 - inner) + 4.0 * 0x1p-23, 1e-15);
    EXPECT_TRUE(std::isinf(fp8_unpromoted_error_budget(8192).elementwise_factor()));
    EXPECT_TRUE(std::isinf(fp8_unpromoted_error_budget(16384).normwise_factor()));
    EXPECT_LT(fp8_error_budget(4096).normwise_factor(), budget.normwise_factor() / 10);
}

TEST(Fp8Budget, MagnitudeIsTheSumOfAbsoluteProducts) {
    Fp8Operand a{1, 2, Fp8Block::tensor, {double_to_e4m3(-2.0), double_to_e4m3(3.0)}, {0.5f}};
    Fp8Operand b{1, 2, Fp8Block::tensor, {double_to_e4m3(4.0), double_to_e4m3(-1.0)}, {2.0f}};
    const std::vector<float> c = {-8.0f};
    EXPECT_EQ(fp8_reference(a, b, 1.0, 0.5, c)[0], -8.0 - 3.0 - 4.0);
    EXPECT_EQ(fp8_magnitude(a, b, -1.0, 0.5, c)[0], 8.0 + 3.0 + 4.0);
}

}  // namespace
}  // namespace sgemm
