// How wrong a stage may be, and the check that holds it to that.
//
// The reference R = alpha A B + beta C0 is computed in float64 from the stage's own
// inputs, so only the stage's arithmetic is judged. W = |alpha| |A| |B| + |beta| |C0|
// (elementwise absolute values, also in float64) is the scale each element's rounding
// error is proportional to.
//
// Elementwise (a bound no correct kernel can exceed, in any summation order): each
// element is a dot product of length K followed by a scale by alpha and an add of
// beta C0, K + 2 roundings in the accumulator's precision with unit roundoff u, so
//     |C_ij - R_ij| <= gamma(K + 2) * W_ij,   gamma(n) = n u / (1 - n u)
// (Higham, Accuracy and Stability of Numerical Algorithms, section 3.1). NaN or an
// unwritten (NaN-poisoned) element fails.
//
// Normwise (tighter, for errors the elementwise bound is too loose to see, such as
// one dropped term of a long dot product): rounding errors of a correct kernel are
// uncorrelated, so they grow like sqrt(K), not K:
//     ||C - R||_F <= (3 + sqrt(K)) u ||W||_F.
// Measured on the H100: cuBLAS and stages 1-5 land 85x under it at N = K = 4096 and
// 230x under it at 8192. It is still tight enough to fail an error as small as one
// dropped term in every dot product, which the elementwise bound lets pass at large K.
//
// Underflow: below FP32's smallest normal (2^-126) an operation's error is absolute, up
// to the subnormal spacing 2^-149 (Higham, section 2.1), not relative. Both bounds add
// that for each of the K + 2 operations: (K + 2) 2^-149 elementwise, (3 + sqrt(K)) 2^-149
// per element normwise. It matters only where W itself is near FP32's bottom.
//
// Output rounding: where C is written in a narrower type than the accumulator (bf16, unit
// roundoff v = 2^-8), the value computed within the bounds above is rounded once more: up
// to v (|R_ij| + allowed_ij) + 2^-134 (half bf16's subnormal spacing) more elementwise,
// and the norm of those bounds more normwise (the triangle inequality).
//
// Promoted accumulation (the FP8 track): where the MMA adds a block of B terms in an
// accumulator of unit roundoff v (FP8 wgmma keeps about 14 bits, the DeepSeek-V3 report
// says, section 3.3.2) and the blocks' sums are added in the accumulator of unit roundoff u,
// each element is B terms at v and K / B + 2 additions at u:
//     |C_ij - R_ij| <= (gamma_v(B) + gamma_u(K / B + 2)) * W_ij,
//     ||C - R||_F <= ((3 + sqrt(B)) v + (3 + sqrt(K / B)) u) ||W||_F.
// Without the promotion a sum of K terms at v is bounded only by gamma_v(K), 128 times the
// first term above at K = 16384; cuBLASLt's fast accumulation, which does not promote, fails
// the promoted bound there (tests/test_fp8_cublaslt.cpp). Such a sum is one block of K terms;
// and since the MMA's accumulator truncates, its errors need not be uncorrelated: on K =
// 16384 products of one sign stage 26 (which does not promote) was off by 0.25 normwise on the
// H100, 15 times (3 + sqrt(K)) v. So where one_signed_block_errors is set the normwise bound
// takes gamma_v(B) for the block, as the elementwise one does. gamma_v(n) is no bound once
// n v reaches 1 (K = 8192 at 2^-13): the factor is then infinite.
//
// Special values: each element's class (NaN, +Inf, -Inf or finite) must be the
// reference's, as IEEE arithmetic gives it (Inf - Inf and 0 Inf are NaN, NaN spreads);
// only elements that are finite in both are held to the bounds and counted in the norms.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace sgemm {

constexpr double kBf16UnitRoundoff = 1.0 / 256.0;  // 2^-8: 8 significant bits
// FP8 wgmma's accumulator, taken at 13 bits (the report's 14, less one for truncation).
constexpr double kFp8MmaUnitRoundoff = 1.0 / 8192.0;  // 2^-13

struct ErrorBudget {
    double unit_roundoff = 0.0;
    int k = 0;
    double output_unit_roundoff = 0.0;  // 0: C in the accumulator's type
    int block_terms = 0;                 // promoted every block_terms terms (0: never)
    double block_unit_roundoff = 0.0;    // the MMA's accumulator within a block
    bool one_signed_block_errors = false;  // normwise, a block's term is its elementwise one (below)
    // Where gamma gives no bound (K u >= 1: sums kept in FP8 wgmma's accumulator over K >= 8190
    // terms), a factor measured instead, for both checks: each element's error within it times
    // its magnitude W, the normwise error within it times ||W|| (verify_fp8: from cuBLASLt's
    // error in the same mode on the same operands). Unset, such a budget allows any finite value.
    std::optional<double> measured_factor{};

    bool bounded() const;                  // both factors finite, by gamma or measured

    double elementwise_factor() const;     // gamma(K + 2), or promoted as above
    double normwise_factor() const;        // (3 + sqrt(K)) u, or promoted as above
    double elementwise_underflow() const;  // (K + 2) 2^-149
    double normwise_underflow() const;     // (3 + sqrt(K)) 2^-149, per element
};

enum class ValueClass { finite, nan, plus_infinity, minus_infinity };
ValueClass classify(double value);

struct ElementError {
    std::size_t index = 0;  // row-major: row = index / N, col = index % N
    double value = 0.0;
    double reference = 0.0;
    double error = 0.0;
    double budget = 0.0;
};

struct VerificationReport {
    double normwise_relative_error = 0.0;   // ||C - R||_F / ||R||_F, over the finite elements
    double normwise_relative_budget = 0.0;  // the normwise budget, relative to ||R||_F
    bool normwise_ok = false;
    double worst_error_over_budget = 0.0;   // max_ij |C_ij - R_ij| / budget_ij (wrong class: infinity)
    ElementError worst;
    // max_ij |C_ij - R_ij| / W_ij over the finite elements: the error an element's own
    // magnitude carried, which cancellation in R_ij cannot inflate.
    double worst_error_over_magnitude = 0.0;
    std::size_t wrong_class = 0;     // elements whose class is not the reference's
    std::size_t non_finite = 0;      // elements where the reference is NaN or +-Inf
    std::optional<ElementError> first_bad;  // the first element, in memory order, past its budget or of the wrong class
    // Both budgets finite. Where one is not (gamma's K u >= 1, nothing measured instead),
    // the check passes any finite value: such a run is reported unbounded, never verified.
    bool bounded = true;

    bool passed() const { return normwise_ok && !first_bad.has_value(); }
};

VerificationReport check_against_reference(std::span<const float> c,
                                           std::span<const double> reference,
                                           std::span<const double> magnitude,
                                           const ErrorBudget& budget);

// ||x - y||_F / ||y||_F over the elements finite in both, for comparing a stage with
// cuBLAS (information, not a check).
double normwise_relative_difference(std::span<const float> x, std::span<const float> y);

}  // namespace sgemm
