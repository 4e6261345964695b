// The FP8 problem's operands, quantized as the DeepSeek-V3 recipe does (its report, section
// 3.3): D = alpha * A * B^T + beta * C with A M x K and B N x K, both K-major (rows of K
// values), as wgmma and cuBLASLt take 8-bit operands; D in bf16. Each operand is FP32 data
// cut into blocks, each block scaled by scale = amax / 448 (448 is e4m3's largest finite
// value) and every value x / scale rounded to e4m3, saturating. The blocks:
//   - the whole tensor (one scale);
//   - 1 x 128: one row's 128 values of K (the activations' scales, A's);
//   - 128 x 128 (the weights', B's, in the recipe).
// Non-finite inputs, as this track takes them: amax is over the finite values (a block with
// none, or only zeros, has scale 1); +-Inf saturates to +-448 x scale, NaN stays NaN.
//
// The reference is float64 of the dequantized values (e4m3 value x its block's scale): what
// an exact GEMM of the quantized operands gives, so a kernel is held to its arithmetic, and
// the quantization's own error is measured apart from it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/common/fp8_problem.hpp"
#include "verification/error_budget.hpp"

namespace sgemm {

enum class Fp8Block { tensor, row_128, block_128x128 };

// A's and B's blocks together (Fp8Scaling, kernels/common/fp8_problem.hpp), as cuBLASLt
// offers them on Hopper.
std::string_view to_string(Fp8Scaling scaling);
std::optional<Fp8Scaling> parse_fp8_scaling(std::string_view name);
Fp8Block a_block(Fp8Scaling scaling);
Fp8Block b_block(Fp8Scaling scaling);

constexpr double kE4m3Max = 448.0;

// e4m3 (1 sign, 4 exponent bits biased by 7, 3 mantissa bits; no infinities, 0x7f and 0xff
// NaN) as a double, exactly.
double e4m3_to_double(std::uint8_t bits);
// x rounded to the nearest e4m3 (ties to even), saturating at +-448; NaN to NaN.
std::uint8_t double_to_e4m3(double x);

struct Fp8Operand {
    int rows = 0, k = 0;
    Fp8Block block = Fp8Block::tensor;
    std::vector<std::uint8_t> values;  // e4m3 bits, rows x k, row-major
    std::vector<float> scales;         // scale_rows() x scale_columns(), row-major

    int scale_rows() const;     // 1, rows, or rows / 128 rounded up
    int scale_columns() const;  // 1, or k / 128 rounded up
    float scale(int row, int column) const;  // the scale of value (row, column)
    double value(int row, int column) const;  // dequantized
};

// rows x k FP32 values (row-major) quantized in blocks of `block`.
Fp8Operand quantize_e4m3(std::span<const float> x, int rows, int k, Fp8Block block);

// The float64 references' operands: the dequantized values (or, `absolute`, their magnitudes)
// as rows x k, or transposed to k x rows; and the same of rows x k FP32 values.
std::vector<double> as_float64(const Fp8Operand& operand, bool absolute, bool transposed);
std::vector<double> as_float64(std::span<const float> x, int rows, int k, bool absolute, bool transposed);

// D = alpha * A * B^T + beta * C in float64 of the dequantized operands (C, M x N row-major,
// not read where beta = 0; empty then).
std::vector<double> fp8_reference(const Fp8Operand& a, const Fp8Operand& b, double alpha, double beta,
                                  std::span<const float> c);

// What a kernel of the FP8 problem may be off by (error_budget.hpp): blocks of 128 terms in
// the MMA's accumulator, promoted into FP32 (2^-23: tensor cores truncate), D rounded to bf16.
// The magnitude W is |alpha| |A| |B| + |beta| |C| of the dequantized operands.
ErrorBudget fp8_error_budget(int k);
// The same for a kernel that keeps all K terms in the MMA's accumulator (stage 26, cuBLASLt's
// fast accumulation): one block of K terms at 2^-13, whose truncation errors may share a sign
// (error_budget.hpp): no bound once K reaches 8192.
ErrorBudget fp8_unpromoted_error_budget(int k);
// W, as fp8_reference computes R.
std::vector<double> fp8_magnitude(const Fp8Operand& a, const Fp8Operand& b, double alpha, double beta,
                                  std::span<const float> c);

// An operand's scales as cuBLASLt reads them for its block (cuBLASLt's operands are
// column-major, so a K-major operand of `rows` rows is its K x rows matrix): 1 x 128 blocks
// outer-dimension-major (all rows' scales of one block of K together, rows rounded up to a
// multiple of 4); 128 x 128 blocks with the blocks of K together (their count rounded up to a
// multiple of 4); the padding zeros.
std::vector<float> cublaslt_scales(const Fp8Operand& operand);

// How many scales each block of those layouts holds for `count` rows (1 x 128) or blocks of K
// (128 x 128): the count rounded up to a multiple of 4.
inline int cublaslt_scales_stride(int count) { return (count + 3) / 4 * 4; }

// The rows cuBLASLt multiplies for an M-row A: M rounded up to a multiple of 16, the rows past
// M zeros (CublasLtFp8 pads them), as FP8 users pad their tokens. cuBLASLt 13 offers no FP8
// kernel where M is not a multiple of 8 (of 16 in every case seen; a leading dimension of D
// rounded up did not change that), and at M = 1 with the recipe's scales it offered one that
// read out of bounds and whose D was wrong (seed 9's draw, device runs 55-57). D comes out
// with this many rows in each column.
inline int cublaslt_d_rows(int m) { return (m + 15) / 16 * 16; }

}  // namespace sgemm
