// What the inputs of a run hold (sgemm --data): the values of A, B and the initial C, each
// a pure function of (seed, operand, row, column, the matrix's size), the same on any GPU
// and on the host.
//   uniform:   uniform in [-1, 1), multiples of 2^-23 (the default).
//   wide:      magnitudes log-uniform over [1e-3, 1e3), random signs: twelve binades either
//              side of 1, where a tensor-core split of FP32 operands must keep its low parts.
//   exact:     integers in [-8, 8]: bf16, tf32 and FP32 hold them, and every product and sum
//              of a dot product up to K = 2^18 long, so a correct stage matches the float64
//              reference exactly (alpha = 1, beta 0 or 1).
// The kinds that break numerical code (C, where beta != 0, is uniform unless said):
//   graded:    uniform values, A's column k scaled by 2^-g(k) and B's row k by 2^g(k), with
//              g(k) in 0 .. 40 drawn for each k: every product A_ik B_kj has the size of a
//              uniform one, but a row of A (or a column of B) spans 40 binades more.
//   outliers:  uniform values, and outliers 2^24 times as large in one row of A in 8 and one
//              column of B in 8: one K index in 128 holds A's outliers (in those rows) and a
//              zero row of B, one in 128 B's outliers (in those columns) and a zero column
//              of A. The outliers set their rows' and columns' largest magnitudes and take
//              no part in the products.
//   subnormal: A and C in FP32's subnormal range (below 2^-126, their significant bits
//              uniform over 1 .. 23), B uniform: products and sums near the bottom of FP32.
//   extremes:  A's magnitudes log-uniform over [2^-126, 2^-118), B's over [2^118, 2^126)
//              (FP32's largest finite value is just under 2^128), random signs: products
//              and sums stay finite, near 1.
//   special:   uniform, with NaN, +Inf and -Inf scattered (about eight of each a matrix, at
//              most one element in 16 of each) and -0 one element in 64, in A, B and C.
//   cancelling: sums far smaller than the sum of their terms' magnitudes: along K in pairs,
//              A's two values equal (uniform) and B's opposite, the second's magnitude
//              1 +- 2^-13 (1 + w) times the first's (w uniform in [0, 1)), so that each pair
//              of products cancels to 2^-13 .. 2^-12 of itself. Each product's own error
//              shows, which SGEMM's exact FMA products do not have.
//   positive:  A and B uniform in [0, 1) (multiples of 2^-24), C uniform: sums of positive
//              terms that grow along K, so a summation's rounding errors add up in one
//              direction where uniform data's cancel: what an order of summation costs.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/float_bits.hpp"

namespace sgemm {

enum class InputData { uniform, wide, exact, graded, outliers, subnormal, extremes, special, cancelling, positive };

std::string_view to_string(InputData data);
std::optional<InputData> input_data_named(std::string_view name);
std::vector<std::string> input_data_names();

// Which matrix of C = alpha A B + beta C an element belongs to: A is M x K, B is K x N.
enum class Operand { a, b, c };

// An element of a rows x columns row-major matrix.
struct MatrixElement {
    Operand operand = Operand::a;
    std::uint64_t row = 0, column = 0;
    std::uint64_t rows = 1, columns = 1;

    __host__ __device__ std::uint64_t index() const { return row * columns + column; }
    // The index along K: A's column, B's row.
    __host__ __device__ std::uint64_t k() const { return operand == Operand::b ? row : column; }
};

// SplitMix64's finalizer: a well-mixed 64-bit hash.
__host__ __device__ inline std::uint64_t mix_bits(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// What the kinds graded and outliers do at index k along K, the same for A and B (and
// for every seed, so that A's and B's agree).
__host__ __device__ inline int graded_exponent(std::uint64_t k) {  // g(k), 0 .. 40
    return static_cast<int>(mix_bits(k ^ 0x67726164656400ull) % 41);
}
enum class OutlierRole { none, in_a, in_b };
__host__ __device__ inline OutlierRole outlier_role(std::uint64_t k) {
    const std::uint64_t draw = mix_bits(k ^ 0x6f75746c696572ull) % 128;
    return draw == 0 ? OutlierRole::in_a : draw == 1 ? OutlierRole::in_b : OutlierRole::none;
}
// Whether a row of A (or a column of B) holds outliers.
__host__ __device__ inline bool holds_outliers(std::uint64_t row_or_column) {
    return mix_bits(row_or_column ^ 0x726f7773ull) % 8 == 0;
}

// The element drawn from `seed`.
__host__ __device__ inline float input_value(InputData data, std::uint64_t seed, const MatrixElement& element) {
    const std::uint64_t bits = mix_bits(mix_bits(seed) ^ element.index());
    const float unit = static_cast<float>(bits >> 40) * 0x1p-24f;  // [0, 1), 24 random bits
    const float uniform = 2.0f * unit - 1.0f;
    const bool negative = (bits & 1) != 0;
    const Operand operand = element.operand;
    switch (data) {
        case InputData::wide: {
            constexpr float kLog2Range = 19.931568569324174f;  // log2(1e6)
            const float magnitude = exp2f(unit * kLog2Range) * 1e-3f;
            return negative ? -magnitude : magnitude;
        }
        case InputData::exact:
            return static_cast<float>(static_cast<int>(bits % 17) - 8);
        case InputData::graded: {
            if (operand == Operand::c) return uniform;
            const int g = graded_exponent(element.k());
            return ldexpf(uniform, operand == Operand::a ? -g : g);
        }
        case InputData::outliers: {
            if (operand == Operand::c) return uniform;
            const OutlierRole role = outlier_role(element.k());
            const bool of_a = operand == Operand::a;
            if (role == (of_a ? OutlierRole::in_b : OutlierRole::in_a)) return 0.0f;  // the other's partner
            const bool outlier = role != OutlierRole::none && holds_outliers(of_a ? element.row : element.column);
            return outlier ? ldexpf(uniform, 24) : uniform;
        }
        case InputData::subnormal: {
            if (operand == Operand::b) return uniform;
            // A subnormal's bits are its significand: 1 .. 23 significant bits, uniformly.
            const int significant_bits = 1 + static_cast<int>((bits >> 1) % 23);
            const std::uint32_t top = 1u << (significant_bits - 1);
            const std::uint32_t magnitude = top | (static_cast<std::uint32_t>(bits >> 8) & (top - 1));
            return float_of_bits(magnitude | (negative ? 0x80000000u : 0u));
        }
        case InputData::extremes: {
            if (operand == Operand::c) return uniform;
            const float magnitude = exp2f(operand == Operand::a ? -126.0f + 8.0f * unit : 118.0f + 8.0f * unit);
            return negative ? -magnitude : magnitude;
        }
        case InputData::special: {
            const double count = static_cast<double>(element.rows) * static_cast<double>(element.columns);
            const double each = fmin(8.0 / count, 1.0 / 16.0);  // NaN, +Inf and -Inf each
            const double draw = static_cast<double>(mix_bits(bits) >> 11) * 0x1p-53;  // [0, 1)
            if (draw < each) return std::numeric_limits<float>::quiet_NaN();
            if (draw < 2 * each) return std::numeric_limits<float>::infinity();
            if (draw < 3 * each) return -std::numeric_limits<float>::infinity();
            if (draw < 3 * each + 1.0 / 64.0) return -0.0f;
            return uniform;
        }
        case InputData::cancelling: {
            if (operand == Operand::c) return uniform;
            // The pair's shared value: the draw of its first element (k even).
            MatrixElement first = element;
            (operand == Operand::a ? first.column : first.row) &= ~std::uint64_t{1};
            const std::uint64_t first_bits = mix_bits(mix_bits(seed) ^ first.index());
            const float shared = 2.0f * static_cast<float>(first_bits >> 40) * 0x1p-24f - 1.0f;
            if (operand == Operand::a || element.k() % 2 == 0) return shared;
            // 1 + 2^-13 (1 + unit), or 1 - that: never 1, so no pair cancels exactly.
            const float apart = 0x1p-13f * (1.0f + unit);
            return -shared * (negative ? 1.0f - apart : 1.0f + apart);
        }
        case InputData::positive:
            return operand == Operand::c ? uniform : unit;
        case InputData::uniform:
        default:
            return uniform;
    }
}

// Fills the rows x columns row-major matrix `operand` on the device, element (i, j) with
// input_value(data, seed, {operand, i, j, rows, columns}).
void fill_input(float* values, Operand operand, std::uint64_t rows, std::uint64_t columns, std::uint64_t seed,
                InputData data, cudaStream_t stream);

}  // namespace sgemm
