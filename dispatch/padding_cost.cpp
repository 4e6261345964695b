#include "dispatch/padding_cost.hpp"

#include "common/padded_launch.cuh"

namespace sgemm {
namespace {

constexpr long long kSmallProblemFlops = 1LL << 31;
constexpr int kSmallProblemK = 1024;

}  // namespace

long long padded_copy_bytes(const GemmShape& shape, const GemmShape& multiples, int input_bytes) {
    const auto [m, n, k] = shape;
    const GemmShape padded = padded_shape(shape, multiples);
    long long bytes = 0;
    if (padded.m != m || padded.k != k) bytes += 1LL * input_bytes * (1LL * m * k + 1LL * padded.m * padded.k);
    if (padded.k != k || padded.n != n) bytes += 1LL * input_bytes * (1LL * k * n + 1LL * padded.k * padded.n);
    if (padded.m != m || padded.n != n) bytes += 4LL * (1LL * m * n + 1LL * padded.m * padded.n);
    return bytes;
}

bool copies_outweigh_math(const GemmShape& shape, const GemmShape& multiples, int input_bytes,
                          double flops_per_copied_byte) {
    const long long flops = 2LL * shape.m * shape.n * shape.k;
    if (flops <= kSmallProblemFlops && shape.k <= kSmallProblemK) return true;
    return static_cast<double>(flops) < flops_per_copied_byte * padded_copy_bytes(shape, multiples, input_bytes);
}

}  // namespace sgemm
