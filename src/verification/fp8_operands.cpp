#include "verification/fp8_operands.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "verification/host_parallel.hpp"

namespace sgemm {

std::string_view to_string(Fp8Scaling scaling) {
    switch (scaling) {
        case Fp8Scaling::tensor:
            return "tensor";
        case Fp8Scaling::rows_and_blocks:
            return "1x128-128x128";
        case Fp8Scaling::rows_and_rows:
            return "1x128-1x128";
    }
    return "?";
}

std::optional<Fp8Scaling> parse_fp8_scaling(std::string_view name) {
    for (const Fp8Scaling scaling : {Fp8Scaling::tensor, Fp8Scaling::rows_and_blocks, Fp8Scaling::rows_and_rows})
        if (name == to_string(scaling)) return scaling;
    return std::nullopt;
}

Fp8Block a_block(Fp8Scaling scaling) {
    return scaling == Fp8Scaling::tensor ? Fp8Block::tensor : Fp8Block::row_128;
}

Fp8Block b_block(Fp8Scaling scaling) {
    switch (scaling) {
        case Fp8Scaling::tensor:
            return Fp8Block::tensor;
        case Fp8Scaling::rows_and_blocks:
            return Fp8Block::block_128x128;
        case Fp8Scaling::rows_and_rows:
            return Fp8Block::row_128;
    }
    return Fp8Block::tensor;
}

double e4m3_to_double(std::uint8_t bits) {
    const int exponent = bits >> 3 & 15, mantissa = bits & 7;
    if (exponent == 15 && mantissa == 7) return std::nan("");
    const double magnitude =
        exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8 + mantissa, exponent - 10);
    return bits & 0x80 ? -magnitude : magnitude;
}

std::uint8_t double_to_e4m3(double x) {
    if (std::isnan(x)) return 0x7f;
    const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
    const double magnitude = std::fabs(x);
    if (magnitude >= kE4m3Max) return sign | 0x7e;  // saturate (+-Inf too)
    if (magnitude == 0.0) return sign;
    int exponent = 0;
    std::frexp(magnitude, &exponent);  // magnitude = f 2^exponent, 0.5 <= f < 1
    // Below 2^-6 the values are subnormal, multiples of 2^-9; above, 3 mantissa bits: the
    // quantum is 2^(e - 4) for 2^(e - 1) <= magnitude < 2^e. nearbyint rounds ties to even.
    const int quantum = std::max(exponent - 4, -9);
    const double steps = std::nearbyint(std::ldexp(magnitude, -quantum));  // an integer up to 16
    if (quantum == -9 && steps < 8) return sign | static_cast<std::uint8_t>(steps);
    // steps in [8, 16]: 16 carries into the next exponent, which the encoding does by itself.
    const int bits = ((quantum + 10) << 3) + static_cast<int>(steps) - 8;
    return sign | static_cast<std::uint8_t>(std::min(bits, 0x7e));
}

int Fp8Operand::scale_rows() const {
    switch (block) {
        case Fp8Block::tensor:
            return 1;
        case Fp8Block::row_128:
            return rows;
        case Fp8Block::block_128x128:
            return (rows + 127) / 128;
    }
    return 1;
}

int Fp8Operand::scale_columns() const { return block == Fp8Block::tensor ? 1 : (k + 127) / 128; }

float Fp8Operand::scale(int row, int column) const {
    switch (block) {
        case Fp8Block::tensor:
            return scales[0];
        case Fp8Block::row_128:
            return scales[static_cast<std::size_t>(row) * scale_columns() + column / 128];
        case Fp8Block::block_128x128:
            return scales[static_cast<std::size_t>(row / 128) * scale_columns() + column / 128];
    }
    return scales[0];
}

double Fp8Operand::value(int row, int column) const {
    return e4m3_to_double(values[static_cast<std::size_t>(row) * k + column]) * scale(row, column);
}

Fp8Operand quantize_e4m3(std::span<const float> x, int rows, int k, Fp8Block block) {
    if (x.size() != static_cast<std::size_t>(rows) * k) throw std::invalid_argument("quantize_e4m3: size");
    Fp8Operand operand{rows, k, block, std::vector<std::uint8_t>(x.size()), {}};
    operand.scales.assign(static_cast<std::size_t>(operand.scale_rows()) * operand.scale_columns(), 0.0f);
    const auto scale_index = [&](int row, int column) {
        const int scale_row = block == Fp8Block::tensor ? 0 : block == Fp8Block::row_128 ? row : row / 128;
        const int scale_column = block == Fp8Block::tensor ? 0 : column / 128;
        return static_cast<std::size_t>(scale_row) * operand.scale_columns() + scale_column;
    };
    // Each block's amax over its finite values, then its scale. Chunks of whole 128-row bands
    // own their blocks' scales; one scale a tensor is the largest of the chunks' (a maximum is
    // exact in any order).
    std::vector<float> tensor_amax(host_threads(), 0.0f);
    host_chunks(static_cast<std::size_t>(rows), 128, [&](std::size_t chunk, std::size_t begin, std::size_t end) {
        for (std::size_t row = begin; row < end; ++row)
            for (int column = 0; column < k; ++column) {
                const float value = x[row * k + column];
                float& amax = block == Fp8Block::tensor ? tensor_amax[chunk]
                                                        : operand.scales[scale_index(static_cast<int>(row), column)];
                if (std::isfinite(value)) amax = std::max(amax, std::fabs(value));
            }
    });
    if (block == Fp8Block::tensor) operand.scales[0] = *std::max_element(tensor_amax.begin(), tensor_amax.end());
    for (float& scale : operand.scales) scale = scale > 0.0f ? scale / static_cast<float>(kE4m3Max) : 1.0f;
    host_chunks(static_cast<std::size_t>(rows), 1, [&](std::size_t, std::size_t begin, std::size_t end) {
        for (std::size_t row = begin; row < end; ++row)
            for (int column = 0; column < k; ++column) {
                const std::size_t at = row * k + column;
                const float scale = operand.scales[scale_index(static_cast<int>(row), column)];
                operand.values[at] = double_to_e4m3(static_cast<double>(x[at]) / scale);
            }
    });
    return operand;
}

std::vector<double> as_float64(const Fp8Operand& operand, bool absolute, bool transposed) {
    const std::size_t rows = operand.rows, k = operand.k;
    // Fp8Operand::value's, with the 256 codes decoded once.
    std::array<double, 256> decoded;
    for (int bits = 0; bits < 256; ++bits) decoded[bits] = e4m3_to_double(static_cast<std::uint8_t>(bits));
    const auto value = [&](std::size_t row, std::size_t column) {
        return decoded[operand.values[row * k + column]] *
               operand.scale(static_cast<int>(row), static_cast<int>(column));
    };
    std::vector<double> values(rows * k);
    // Over the rows of what is written, so that each chunk writes its own.
    host_chunks(transposed ? k : rows, 1, [&](std::size_t, std::size_t begin, std::size_t end) {
        for (std::size_t out = begin; out < end; ++out)
            for (std::size_t in = 0; in < (transposed ? rows : k); ++in) {
                const double v = transposed ? value(in, out) : value(out, in);
                values[out * (transposed ? rows : k) + in] = absolute ? std::abs(v) : v;
            }
    });
    return values;
}

std::vector<double> as_float64(std::span<const float> x, int rows, int k, bool absolute, bool transposed) {
    if (x.size() != static_cast<std::size_t>(rows) * k) throw std::invalid_argument("as_float64: size");
    const std::size_t row_count = rows, k_count = k;
    std::vector<double> values(x.size());
    host_chunks(transposed ? k_count : row_count, 1, [&](std::size_t, std::size_t begin, std::size_t end) {
        for (std::size_t out = begin; out < end; ++out)
            for (std::size_t in = 0; in < (transposed ? row_count : k_count); ++in) {
                const double value = transposed ? x[in * k_count + out] : x[out * k_count + in];
                values[out * (transposed ? row_count : k_count) + in] = absolute ? std::abs(value) : value;
            }
    });
    return values;
}

namespace {

// alpha * sum_k f(a_ik) f(b_jk) + beta * g(c_ij) in float64, f the dequantized value (or its
// magnitude).
template <class Value, class Combine>
std::vector<double> dequantized_product(const Fp8Operand& a, const Fp8Operand& b, double alpha, double beta,
                                        std::span<const float> c, Value value, Combine c_term) {
    if (a.k != b.k) throw std::invalid_argument("FP8 operands differ in K");
    const int m = a.rows, n = b.rows, k = a.k;
    std::vector<double> a_values(static_cast<std::size_t>(m) * k), b_values(static_cast<std::size_t>(n) * k);
    for (int row = 0; row < m; ++row)
        for (int column = 0; column < k; ++column)
            a_values[static_cast<std::size_t>(row) * k + column] = value(a.value(row, column));
    for (int row = 0; row < n; ++row)
        for (int column = 0; column < k; ++column)
            b_values[static_cast<std::size_t>(row) * k + column] = value(b.value(row, column));
    std::vector<double> d(static_cast<std::size_t>(m) * n);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double sum = 0.0;
            const double* a_row = &a_values[static_cast<std::size_t>(i) * k];
            const double* b_row = &b_values[static_cast<std::size_t>(j) * k];
            for (int kk = 0; kk < k; ++kk) sum += a_row[kk] * b_row[kk];
            const std::size_t at = static_cast<std::size_t>(i) * n + j;
            d[at] = alpha * sum + (beta != 0.0 ? c_term(beta * c[at]) : 0.0);
        }
    return d;
}

}  // namespace

std::vector<double> fp8_reference(const Fp8Operand& a, const Fp8Operand& b, double alpha, double beta,
                                  std::span<const float> c) {
    return dequantized_product(a, b, alpha, beta, c, [](double x) { return x; }, [](double x) { return x; });
}

std::vector<double> fp8_magnitude(const Fp8Operand& a, const Fp8Operand& b, double alpha, double beta,
                                  std::span<const float> c) {
    const auto magnitude = [](double x) { return std::fabs(x); };
    return dequantized_product(a, b, std::fabs(alpha), std::fabs(beta), c, magnitude, magnitude);
}

ErrorBudget fp8_error_budget(int k) {
    ErrorBudget budget{0x1p-23, k, kBf16UnitRoundoff};
    budget.block_terms = 128;
    budget.block_unit_roundoff = kFp8MmaUnitRoundoff;
    return budget;
}

ErrorBudget fp8_unpromoted_error_budget(int k) {
    ErrorBudget budget{0x1p-23, k, kBf16UnitRoundoff};
    budget.block_terms = std::max(k, 1);
    budget.block_unit_roundoff = kFp8MmaUnitRoundoff;
    budget.one_signed_block_errors = true;
    return budget;
}

std::vector<float> cublaslt_scales(const Fp8Operand& operand) {
    switch (operand.block) {
        case Fp8Block::tensor:
            return operand.scales;
        case Fp8Block::row_128: {
            const int stride = cublaslt_scales_stride(operand.rows);
            std::vector<float> laid(static_cast<std::size_t>(stride) * operand.scale_columns(), 0.0f);
            for (int row = 0; row < operand.rows; ++row)
                for (int block = 0; block < operand.scale_columns(); ++block)
                    laid[static_cast<std::size_t>(block) * stride + row] =
                        operand.scales[static_cast<std::size_t>(row) * operand.scale_columns() + block];
            return laid;
        }
        case Fp8Block::block_128x128: {
            const int stride = cublaslt_scales_stride(operand.scale_columns());
            std::vector<float> laid(static_cast<std::size_t>(stride) * operand.scale_rows(), 0.0f);
            for (int row_block = 0; row_block < operand.scale_rows(); ++row_block)
                for (int block = 0; block < operand.scale_columns(); ++block)
                    laid[static_cast<std::size_t>(row_block) * stride + block] =
                        operand.scales[static_cast<std::size_t>(row_block) * operand.scale_columns() + block];
            return laid;
        }
    }
    return operand.scales;
}

}  // namespace sgemm
