// Problems as the tools beside sgemm take them on the command line and write them: "MxNxK"
// (sgemm_tune --shapes, sgemm_accuracy --shapes), a square as its N.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "common/gemm_problem.hpp"

namespace sgemm {

// "MxNxK", each a positive integer.
inline GemmShape parse_shape(const std::string& text) {
    GemmShape shape;
    int end = 0;
    if (std::sscanf(text.c_str(), "%dx%dx%d%n", &shape.m, &shape.n, &shape.k, &end) != 3 ||
        end != static_cast<int>(text.size()) || shape.m <= 0 || shape.n <= 0 || shape.k <= 0)
        throw std::invalid_argument(fmt::format("shape '{}' is not MxNxK", text));
    return shape;
}

// N for an N x N x N problem, else "MxNxK".
inline std::string shape_text(const GemmShape& shape) {
    if (shape.m == shape.n && shape.n == shape.k) return std::to_string(shape.n);
    return fmt::format("{}x{}x{}", shape.m, shape.n, shape.k);
}

}  // namespace sgemm
