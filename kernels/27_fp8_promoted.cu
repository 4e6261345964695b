// Stage 27 — FP8 with the partial sums promoted into FP32 every 128 of K.
//
// Builds on stage 26 (26_fp8_tensor_scale.cu): the same kernel with another KLoop
// (27_fp8_promoted.cuh; diff it against 26's MmaAccumulation).
//
// The idea: the tensor cores add FP8 products in an accumulator of about 14 bits, not
// FP32's 24 (DeepSeek-V3's report, 3.3.2, measured it; the PTX ISA does not say). Over a
// K of thousands the rounding errors add up: at K = 16384 with products of one sign the
// bound is 2^-13 x 16384 = 2 of the result itself, and cuBLASLt's fast accumulation, which
// keeps adding in the MMA, fails the promoted budget there (tests/test_fp8_cublaslt.cpp).
// The recipe's fix: let the MMA sum only one K block of 128 products (four k32 steps from
// zero), then add that block into FP32 registers. The error becomes 128 terms at 2^-13
// plus K / 128 additions at 2^-23 (error_budget.hpp's promoted accumulation).
//
// What it costs: the block's sums must be in registers before they are added, and a
// consumer that waits for all its wgmmas every K block leaves the tensor cores half fed: each
// consumer keeps two sets of block registers instead (27_fp8_promoted.cuh), the next K
// block's wgmmas running while it adds the last one in (64 FADDs a thread), 192 registers
// of sums a thread where stage 26 had 64. One more rule: ptxas serializes the wgmmas where a
// branch follows reads of their accumulators (C7514), so the stage is freed by a predicated
// arrive, without a branch (mbarrier_arrive_in_cta_if).
//
// Prediction: within a few points of stage 26. Timed against cuBLASLt's default FP8 GEMM,
// which promotes too.
//
// Measured by make results on the H100 80GB HBM3: 1221.9 TFLOPS at N = 4096 (100.6 % of
// cuBLASLt FP8), 1253.8 at 8192 (98.6 %).
// 97 % of stage 26's TFLOPS: what promotion costs. What it buys: the promoted budget
// (error_budget.hpp), 1.6 % of |A||B| elementwise at K = 4096 where stage 26's is 100 %,
// and a bound at all past 8192. With each K block's stage computed from a count (a division
// by six) and each step's descriptors from addresses, it ran 90.5 and 86.0 % of cuBLASLt;
// waiting for each K block, as the recipe's kernels do, 82.1 and 75.4 %:
// docs/notes/27_fp8_promoted.md, with the schedules that did not pay.
//
// Shapes: stage 26's. Fp8Scaling::tensor. sm_90a.
#include "27_fp8_promoted.hpp"

#include <stdexcept>

#include "27_fp8_promoted.cuh"

namespace sgemm {

void launch_fp8_promoted(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                         __nv_bfloat16* d, cudaStream_t stream) {
    if (scaling != Fp8Scaling::tensor) throw std::invalid_argument("stage 27 takes one scale a tensor");
    launch_fp8_kernel<Fp8Config<128, 6, 2>, PromotedAccumulation<TensorScales>>(problem, operands, d, 8, stream);
}

}  // namespace sgemm
