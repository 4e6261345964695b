// cuBLASLt's FP8 GEMM (gpu/cublaslt_fp8.hpp), the FP8 track's reference, against the float64
// reference of the quantized operands: bit for bit where the arithmetic is exact, and within
// the FP8 error budget (fp8_error_budget) where each block of A and B has its own magnitude (a
// scale laid out where cuBLASLt does not read it, or applied to the wrong block, is off by up
// to 2^16 there), in every scaling the track takes; and the budget fails an accumulation that
// is not promoted.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "gpu/cublaslt_fp8.hpp"
#include "gpu/device_buffer.hpp"
#include "verification/error_budget.hpp"
#include "verification/fp8_operands.hpp"
#include "fp8_test_operands.hpp"
#include "skip_markers.hpp"

namespace sgemm {
namespace {

// D = alpha A B^T + beta D by cuBLASLt, D starting as `d_in` (bf16), both row-major here
// (cuBLASLt's D is column-major), returned as doubles.
std::vector<double> cublaslt_d(const Fp8Operand& a, const Fp8Operand& b, Fp8Scaling scaling, float alpha,
                               float beta, const std::vector<float>& d_in, bool promote = true) {
    const int m = a.rows, n = b.rows;
    const DeviceBuffer<std::uint8_t> a_values = to_device(a.values), b_values = to_device(b.values);
    const DeviceBuffer<float> a_scales = to_device(cublaslt_scales(a)), b_scales = to_device(cublaslt_scales(b));
    const std::size_t column_rows = cublaslt_d_rows(m);
    std::vector<__nv_bfloat16> d_host(column_rows * n);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j)
            d_host[j * column_rows + i] = __float2bfloat16_rn(d_in[static_cast<std::size_t>(i) * n + j]);
    const DeviceBuffer<__nv_bfloat16> d = to_device(d_host);
    const CublasLtFp8 gemm(m, n, a.k, scaling, a_values.data(), a_scales.data(), b_scales.data(), promote);
    gemm.run(b_values.data(), d.data(), alpha, beta, nullptr);
    CUDA_CHECK(cudaMemcpy(d_host.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost));
    std::vector<double> out(d_in.size());
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j)
            out[static_cast<std::size_t>(i) * n + j] = __bfloat162float(d_host[j * column_rows + i]);
    return out;
}

constexpr Fp8Scaling kScalings[] = {Fp8Scaling::tensor, Fp8Scaling::rows_and_blocks, Fp8Scaling::rows_and_rows};

// Small integers, scales powers of two (2^-2 to 2^2): every partial sum is exact in the
// accumulator (at most 128 x 9 a block of K, and 2^-4 to 2^4 apart), so D is the float64
// reference rounded to bf16, bit for bit.
TEST(CublasLtFp8, ExactWhereTheArithmeticIsExact) {
    SGEMM_SKIP_WITHOUT_GPU();
    SGEMM_SKIP_IF_REFUSED(fp8_gemm_refusal());
    const int m = 256, n = 384, k = 1024;
    std::mt19937 rng(11);
    for (const Fp8Scaling scaling : kScalings) {
        const Fp8Operand a = exact_operand(m, k, a_block(scaling), 3, rng);
        const Fp8Operand b = exact_operand(n, k, b_block(scaling), 3, rng);
        const std::vector<double> expected = fp8_reference(a, b, 1.0, 0.0, {});
        const std::vector<double> d = cublaslt_d(a, b, scaling, 1.0f, 0.0f, std::vector<float>(m * n, NAN));
        int wrong = 0;
        for (std::size_t i = 0; i < d.size(); ++i)
            if (d[i] != static_cast<double>(__bfloat162float(__float2bfloat16_rn(static_cast<float>(expected[i])))))
                ++wrong;
        EXPECT_EQ(wrong, 0) << to_string(scaling);
    }
}

VerificationReport check(const std::vector<double>& d, const std::vector<double>& reference,
                         const std::vector<double>& magnitude, int k) {
    const std::vector<float> d_float(d.begin(), d.end());  // bf16 values, exact in FP32
    return check_against_reference(d_float, reference, magnitude, fp8_error_budget(k));
}

// FP32 data in blocks of magnitudes 2^-8 to 2^8 (A's 1 x 128, B's 128 x 128 or 1 x 128, as
// the scaling cuts them; one magnitude for one scale a tensor: graded_operand), quantized as
// the recipe does, with alpha and beta.
TEST(CublasLtFp8, BlockScalesApplyToTheirBlocks) {
    SGEMM_SKIP_WITHOUT_GPU();
    SGEMM_SKIP_IF_REFUSED(fp8_gemm_refusal());
    const int n = 384, k = 1024;
    // M = 37 and 1: cuBLASLt multiplies A padded to 48 and 16 rows (cublaslt_d_rows).
    for (const int m : {256, 37, 1}) {
        for (const Fp8Scaling scaling : kScalings) {
            std::mt19937 rng(static_cast<unsigned>(scaling) + 3 + m);
            std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
            const Fp8Operand a = graded_operand(m, k, a_block(scaling), rng);
            const Fp8Operand b = graded_operand(n, k, b_block(scaling), rng);
            std::vector<float> c(static_cast<std::size_t>(m) * n);
            for (float& value : c) value = __bfloat162float(__float2bfloat16_rn(uniform(rng)));
            const double alpha = 0.75, beta = -1.5;
            const VerificationReport report = check(cublaslt_d(a, b, scaling, alpha, beta, c),
                                                    fp8_reference(a, b, alpha, beta, c),
                                                    fp8_magnitude(a, b, alpha, beta, c), k);
            EXPECT_TRUE(report.passed()) << "M = " << m << ", " << to_string(scaling) << ": normwise "
                                         << report.normwise_relative_error << " (budget " << report.normwise_relative_budget << "), worst element "
                                         << report.worst_error_over_budget << " of its budget";
        }
    }
}

// Promotion is what the budget holds cuBLASLt to: 16384 products of one sign (values in
// [0, 1), one scale a tensor) pass it promoted every 128 terms, and fail it in cuBLASLt's fast
// accumulation, which keeps the whole sum in the MMA's accumulator.
TEST(CublasLtFp8, TheBudgetNeedsPromotion) {
    SGEMM_SKIP_WITHOUT_GPU();
    SGEMM_SKIP_IF_REFUSED(fp8_gemm_refusal());
    const int m = 128, n = 128, k = 16384;
    std::mt19937 rng(5);
    const Fp8Operand a = one_signed_operand(m, k, Fp8Block::tensor, rng);
    const Fp8Operand b = one_signed_operand(n, k, Fp8Block::tensor, rng);
    const std::vector<double> reference = fp8_reference(a, b, 1.0, 0.0, {});
    const std::vector<double> magnitude = fp8_magnitude(a, b, 1.0, 0.0, {});
    const std::vector<float> poison(static_cast<std::size_t>(m) * n, NAN);
    const VerificationReport promoted = check(cublaslt_d(a, b, Fp8Scaling::tensor, 1.0f, 0.0f, poison), reference, magnitude, k);
    const VerificationReport fast =
        check(cublaslt_d(a, b, Fp8Scaling::tensor, 1.0f, 0.0f, poison, false), reference, magnitude, k);
    EXPECT_TRUE(promoted.passed()) << "promoted: normwise " << promoted.normwise_relative_error << " (budget "
                                   << promoted.normwise_relative_budget << ")";
    EXPECT_FALSE(fast.passed()) << "fast accumulation: normwise " << fast.normwise_relative_error << " (budget "
                                << fast.normwise_relative_budget << ")";
}

}  // namespace
}  // namespace sgemm
