// Stage 26 — FP8: e4m3 operands on wgmma, one scale a tensor.
//
// Builds on stage 20 (20_hopper_tuned.cu): its persistent, warp-specialized kernel with
// clusters that share B, on a new problem (common/fp8_problem.hpp): D = alpha (A B^T) +
// beta C with A (M x K) and B (N x K) in e4m3, 8-bit floats of 3 mantissa bits, each with
// an FP32 scale, and D in bf16. The FP8 track starts here; it ends at the recipe DeepSeek-V3
// trained with (stages 27 and 28).
//
// The idea: the tensor cores multiply 8-bit floats at twice their bf16 rate (wgmma k32 in
// the time of a bf16 k16, common/wgmma_fp8.cuh), and the operands are half the bytes.
// What changes from stage 20's kernel (26_fp8_tensor_scale.cuh):
//   - a K block is 128 values of K, 128 bytes: one swizzled row, as 64 bf16 values were;
//     the descriptors and the k32 steps are stage 20's (32 bytes a step);
//   - B is K-major (N x K): the ISA has no transposed 8-bit operand, so B's block is one
//     TMA box of N rows, like A's (a cluster's CTAs each load a share of its rows);
//   - the sums are multiplied by A's and B's scales once, after the last K block; D leaves
//     as bf16 through stage 19's chunks, with alpha and beta;
//   - no stream-K: tiles are dealt to the clusters in turn (stage 19);
//   - a K block's place in the ring (its stage and the parity of its barriers) is stepped
//     on (RingSlot), not computed from a count of K blocks, and its four steps'
//     descriptors are one descriptor plus 2 a step: the instructions between one K block's
//     wgmmas and the next are what stage 27's promotion will be paid from.
// What a K block does to the sums is a template parameter (the KLoop): here the MMA keeps
// adding into the same registers, K blocks long; stage 27 changes that.
//
// Tiles: 128 x 128 in clusters of two: the tile's 64 columns a consumer. Stage 29 chooses
// tiles per shape.
//
// Prediction: twice stage 20's rate wherever stage 20 was bound by the tensor cores; but
// each K block's bytes now feed half the time, so L2's bandwidth comes closer: 128 x 128
// tiles in clusters of two fetch (16 + 8) KB from L2 per 4.2 MFLOP, about 7 TB/s at 1200
// TFLOPS. The reference: cuBLASLt's FP8 GEMM with the same scales in its fast accumulation,
// which does not promote either (stage 27 does).
//
// Measured by make results on the H100 80GB HBM3: 1255.1 TFLOPS at N = 4096 (97.1 % of
// cuBLASLt FP8), 1281.6 at 8192 (96.4 %).
// 1.8-1.9x stage 20's TFLOPS, 2-4 points behind cuBLASLt's fast accumulation, whose kernel
// (Nsight) runs 128 x 256 tiles; these in 128 x 256 (four stages fit) measured 87.5 and 91.8
// % (docs/notes/27_fp8_promoted.md). Accuracy: the MMA's accumulator keeps about 14 bits and truncates, so over all of K
// its errors can add with one sign: on 16384 products of one sign, 0.25 normwise (tests/
// test_fp8_stages.cpp). Held to 2^-13 over all of K elementwise and normwise
// (fp8_unpromoted_error_budget), which bounds nothing from K = 8192 on.
//
// Shapes: any M; N a multiple of 8 and K of 16 (TMA's rows start 16-byte aligned; cuBLASLt
// asks the same of 8-bit operands); Fp8Scaling::tensor. sm_90a.
#include "26_fp8_tensor_scale.hpp"

#include <stdexcept>

#include "26_fp8_tensor_scale.cuh"

namespace sgemm {

void launch_fp8_tensor_scale(const GemmProblem& problem, Fp8Scaling scaling, const Fp8Operands& operands,
                             __nv_bfloat16* d, cudaStream_t stream) {
    if (scaling != Fp8Scaling::tensor) throw std::invalid_argument("stage 26 takes one scale a tensor");
    launch_fp8_kernel<Fp8Config<128, 6, 2>, MmaAccumulation>(problem, operands, d, 8, stream);
}

}  // namespace sgemm
