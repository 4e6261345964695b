#include "verification/error_budget.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace sgemm {

double ErrorBudget::elementwise_factor() const {
    const double nu = (k + 2.0) * unit_roundoff;
    return nu / (1.0 - nu);
}

double ErrorBudget::normwise_factor() const { return (3.0 + std::sqrt(double(k))) * unit_roundoff; }

VerificationReport check_against_reference(std::span<const float> c,
                                           std::span<const double> reference,
                                           std::span<const double> magnitude,
                                           const ErrorBudget& budget) {
    if (c.size() != reference.size() || c.size() != magnitude.size())
        throw std::invalid_argument("check_against_reference: sizes differ");

    VerificationReport report;
    const double elementwise = budget.elementwise_factor();
    double error_squares = 0.0;
    double reference_squares = 0.0;
    double magnitude_squares = 0.0;
    report.worst_error_over_budget = -1.0;

    for (std::size_t i = 0; i < c.size(); ++i) {
        const double error = std::abs(double(c[i]) - reference[i]);
        const double allowed = elementwise * magnitude[i];
        error_squares += error * error;
        reference_squares += reference[i] * reference[i];
        magnitude_squares += magnitude[i] * magnitude[i];

        // Written so that NaN fails: every comparison with NaN is false.
        const bool within = error <= allowed;
        const double ratio = !(error == error)     ? std::numeric_limits<double>::infinity()
                             : allowed > 0.0       ? error / allowed
                             : error == 0.0        ? 0.0
                                                   : std::numeric_limits<double>::infinity();
        const ElementError element{i, double(c[i]), reference[i], error, allowed};
        if (ratio > report.worst_error_over_budget) {
            report.worst_error_over_budget = ratio;
            report.worst = element;
        }
        if (!within && !report.first_bad) report.first_bad = element;
    }

    const double error_norm = std::sqrt(error_squares);
    const double reference_norm = std::sqrt(reference_squares);
    const double allowed_norm = budget.normwise_factor() * std::sqrt(magnitude_squares);
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
        const double d = double(x[i]) - double(y[i]);
        difference_squares += d * d;
        y_squares += double(y[i]) * double(y[i]);
    }
    return std::sqrt(difference_squares) / (y_squares > 0.0 ? std::sqrt(y_squares) : 1.0);
}

}  // namespace sgemm
