#include "verification/error_budget.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace sgemm {

namespace {
constexpr double kSubnormalSpacing = 0x1p-149;  // FP32's

// No bound where n u reaches 1 (Higham's gamma is for n u < 1).
double gamma(double terms, double unit_roundoff) {
    const double nu = terms * unit_roundoff;
    return nu < 1.0 ? nu / (1.0 - nu) : std::numeric_limits<double>::infinity();
}
}  // namespace

namespace {
// The factors gamma gives, infinite where it gives no bound.
double elementwise_by_gamma(const ErrorBudget& b) {
    if (b.block_terms == 0) return gamma(b.k + 2.0, b.unit_roundoff);
    const double blocks = std::ceil(double(b.k) / b.block_terms);
    return gamma(std::min(b.k, b.block_terms), b.block_unit_roundoff) + gamma(blocks + 2.0, b.unit_roundoff);
}

double normwise_by_gamma(const ErrorBudget& b) {
    if (b.block_terms == 0) return (3.0 + std::sqrt(double(b.k))) * b.unit_roundoff;
    const double blocks = std::ceil(double(b.k) / b.block_terms);
    const double terms = std::min(b.k, b.block_terms);
    const double within_blocks = b.one_signed_block_errors ? gamma(terms, b.block_unit_roundoff)
                                                           : (3.0 + std::sqrt(terms)) * b.block_unit_roundoff;
    return within_blocks + (3.0 + std::sqrt(blocks)) * b.unit_roundoff;
}
}  // namespace

double ErrorBudget::elementwise_factor() const {
    const double factor = elementwise_by_gamma(*this);
    return std::isinf(factor) && measured_factor ? *measured_factor : factor;
}

double ErrorBudget::normwise_factor() const {
    const double factor = normwise_by_gamma(*this);
    return std::isinf(factor) && measured_factor ? *measured_factor : factor;
}

bool ErrorBudget::bounded() const { return !std::isinf(elementwise_factor()) && !std::isinf(normwise_factor()); }

double ErrorBudget::elementwise_underflow() const { return (k + 2.0) * kSubnormalSpacing; }

double ErrorBudget::normwise_underflow() const { return (3.0 + std::sqrt(double(k))) * kSubnormalSpacing; }

ValueClass classify(double value) {
    if (std::isnan(value)) return ValueClass::nan;
    if (std::isinf(value)) return value > 0.0 ? ValueClass::plus_infinity : ValueClass::minus_infinity;
    return ValueClass::finite;
}

VerificationReport check_against_reference(std::span<const float> c,
                                           std::span<const double> reference,
                                           std::span<const double> magnitude,
                                           const ErrorBudget& budget) {
    if (c.size() != reference.size() || c.size() != magnitude.size())
        throw std::invalid_argument("check_against_reference: sizes differ");

    VerificationReport report;
    report.bounded = budget.bounded();
    const double elementwise = budget.elementwise_factor();
    const double elementwise_underflow = budget.elementwise_underflow();
    constexpr double kInfinity = std::numeric_limits<double>::infinity();
    double error_squares = 0.0;
    double reference_squares = 0.0;
    double magnitude_squares = 0.0;
    double output_rounding_squares = 0.0;
    std::size_t finite = 0;
    report.worst_error_over_budget = -1.0;

    for (std::size_t i = 0; i < c.size(); ++i) {
        const ValueClass expected = classify(reference[i]);
        const ValueClass got = classify(c[i]);
        double error = 0.0, allowed = 0.0, ratio = 0.0;
        bool within = true;
        if (expected != ValueClass::finite || got != ValueClass::finite) {
            within = got == expected;  // NaN where NaN is due, the right infinity
            report.non_finite += expected != ValueClass::finite;
            report.wrong_class += !within;
            ratio = within ? 0.0 : kInfinity;
            error = within ? 0.0 : kInfinity;
        } else {
            ++finite;
            error = std::abs(double(c[i]) - reference[i]);
            // An infinite factor (no bound) allows anything finite, even where W is 0.
            allowed = std::isinf(elementwise) ? kInfinity : elementwise * magnitude[i] + elementwise_underflow;
            if (budget.output_unit_roundoff > 0.0) {
                const double rounding = budget.output_unit_roundoff * (std::abs(reference[i]) + allowed) + 0x1p-134;
                output_rounding_squares += rounding * rounding;
                allowed += rounding;
            }
            error_squares += error * error;
            reference_squares += reference[i] * reference[i];
            magnitude_squares += magnitude[i] * magnitude[i];
            within = error <= allowed;
            ratio = error / allowed;
            const double over_magnitude = magnitude[i] > 0.0 ? error / magnitude[i] : error == 0.0 ? 0.0 : kInfinity;
            if (over_magnitude > report.worst_error_over_magnitude) report.worst_error_over_magnitude = over_magnitude;
        }
        const ElementError element{i, double(c[i]), reference[i], error, allowed};
        if (ratio > report.worst_error_over_budget) {
            report.worst_error_over_budget = ratio;
            report.worst = element;
        }
        if (!within && !report.first_bad) report.first_bad = element;
    }

    const double error_norm = std::sqrt(error_squares);
    const double reference_norm = std::sqrt(reference_squares);
    const double normwise = budget.normwise_factor();
    const double allowed_norm = std::isinf(normwise) ? kInfinity : normwise * std::sqrt(magnitude_squares) +
                                budget.normwise_underflow() * std::sqrt(double(finite)) +
                                std::sqrt(output_rounding_squares);
    // Relative to ||R|| where it is non-zero, else absolute (alpha = beta = 0).
    const double scale = reference_norm > 0.0 ? reference_norm : 1.0;
    report.normwise_relative_error = error_norm / scale;
    report.normwise_relative_budget = allowed_norm / scale;
    report.normwise_ok = error_norm <= allowed_norm;
    return report;
}

double normwise_relative_difference(std::span<const float> x, std::span<const float> y) {
    if (x.size() != y.size()) throw std::invalid_argument("normwise_relative_difference: sizes differ");
    double difference_squares = 0.0;
    double y_squares = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (!std::isfinite(x[i]) || !std::isfinite(y[i])) continue;
        const double d = double(x[i]) - double(y[i]);
        difference_squares += d * d;
        y_squares += double(y[i]) * double(y[i]);
    }
    return std::sqrt(difference_squares) / (y_squares > 0.0 ? std::sqrt(y_squares) : 1.0);
}

}  // namespace sgemm
