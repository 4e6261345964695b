// Stage 23 — FP32 on tensor cores for few rows: the weights split in registers.
//
// Builds on stage 22 (read it first): its fp16 parts, its checks and its FP32 fallback.
//
// The idea: where A has few rows (few tokens), B (the weights) is nearly all the bytes,
// and stage 22's pre-pass, which reads B twice and writes its parts, costs more than
// SGEMM's whole run. So B is read once, as FP32, and split where it is used: the kernel
// computes C^T = B^T A^T, so that B^T is wgmma's A operand, which may come from registers.
// Each consumer loads its fragment of a 64 x 64 FP32 tile of B^T from shared memory (TMA's
// 128-byte swizzle puts the 32 values a warp loads at once in 32 banks), splits it into
// fp16 hi and lo parts in registers, and multiplies them by the tokens' parts, which a
// cheap pre-pass (M x K values) writes as stage 22's does, as wgmma's B from shared memory.
//
// Range without a pre-pass: each K tile's 64 values of a column of B are scaled by their
// own power of two (their largest into [2^14, 2^15)), found by the four threads that hold
// them. The tile's products, hi.hi in one partial and the two lo products (2^11 too large,
// as in stage 22) in another, are added to the FP32 sums in registers with the scaling
// undone: the sums hold A's scaled rows times B's true values, so that A's exponent,
// undone at the end, is the only one left. A column whose tile holds NaN or Inf, spans more
// than 2^28, or lies beyond 2^+-63 (where the sums could leave FP32's range) is zeros in
// the split and listed by the kernel; stage 22's FP32 fallback (22_fp32_fallback.cuh)
// computes it on the CUDA cores, with the rows of A the pre-pass lists. Where every row
// of A fails, the kernel does not run; where every row or every column does, the last
// kernel writes nothing and the whole problem is the fallback's.
//
// Tiles and pieces: a CTA takes 128 columns of C (two consumers, an m64 block of C^T
// each) and 64 rows (the wgmma's N). 64 tokens give a C 4096 wide only 32 such tiles, so
// the column blocks' K tiles are cut into one equal run per SM (stream-K), each run taken
// by one CTA per 64 rows side by side, which read B's tiles once from DRAM between them.
// Each piece's sums go to a workspace that a last kernel adds in order, scaling rows,
// alpha and beta C in. A consumer splits the next K tile while the tensor cores multiply
// the current one.
//
// Prediction: at 64 tokens the kernel reads B once from DRAM; its tensor work (three
// products) is a third of that time, and the split's instructions (about ten a value of
// B) fit under it: at 3 TB/s, about 33 us for 64 x 6144 x 4096, 2.5x SGEMM's 87 us.
//
// Measured by make results on the H100 80GB HBM3: 101.2 TFLOPS at N = 4096 (1.94x cuBLAS SGEMM),
// 105.5 at 8192 (2.14x).
// On the shape suite (make shapes): 1.04-2.2x SGEMM on every shape of 256 tokens or
// fewer, 1.72x in geomean, where stage 22 gave 0.79x; 1.32x at 1024^3 (stage 22: 1.00x);
// normwise error 1.4-3.1e-7. Short of the prediction: 67 us, 1.30x, for 64 x 6144 x 4096.
// ncu (one step earlier, at 69 us) put the GEMM kernel at 49 us and 64 % of DRAM
// bandwidth, bound by issue: two consumer warps a scheduler issue 0.48 instructions a
// cycle, about 700 a K tile each; the pre-pass, last kernel and fallback's empty launch took 16 us.
//
// Where the fp32-tc track runs it (dispatch/fp32_tc.cpp): where its model of the kernels'
// times puts this one first, mostly few rows of A, or a C too small for stage 22's tiles to
// fill the GPU. The kernel is in
// 23_split_in_registers.cuh, the fragment's scaling and split in 23_split_fragment.cuh, both
// of which stage 24 shares; this file holds B^T's tile and fragment (SplitOperandB), the
// pre-pass and the last kernel.
//
// Shapes: any M and K; N a multiple of 8 (TMA's rows of B and C), other N on zero-padded
// copies. Needs sm_90a.
#include "23_split_in_registers.hpp"

#include <cuda.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

#include "22_fp32_fallback.cuh"
#include "22_split_fp16_operands.cuh"
#include "23_split_fragment.cuh"
#include "23_split_in_registers.cuh"
#include "common/epilogue.cuh"
#include "common/fp32_split.cuh"
#include "common/gemm_problem.hpp"
#include "common/tma.cuh"
#include "common/wgmma.cuh"
#include "common/workspace.cuh"

namespace sgemm {
namespace {

// The operand split in registers here, B^T (the kernel's SplitOperand, 23_split_in_registers.cuh).
// Its K tile, 128 columns of B by 64 rows of K, is four TMA boxes of 32 columns (128
// bytes, one swizzle row) by 64 rows. A thread's fragment runs down two columns of B, so
// it takes one load a value: 32 LDS.32 a K tile.
struct SplitOperandB {
    static constexpr int kBoxColumns = 32, kBoxBytes = kBlockK * kBoxColumns * 4;
    static_assert(kSplitBlock / kBoxColumns * kBoxBytes == sizeof(SplitStage::split), "the boxes fill the tile");

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // for the kernel's sm_90a body (other targets compile it empty)
    static __device__ void load_tile(std::uint8_t* tile, const CUtensorMap* b_map, int first_column, int k0,
                                     std::uint64_t* full) {
        for (int box = 0; box < kSplitBlock / kBoxColumns; ++box)
            tma_load_2d(tile + box * kBoxBytes, b_map, first_column + box * kBoxColumns, k0, full);
    }

    // Where the value of the thread's column h (of C^T's rows, B's columns) at k = 2 quad +
    // p + 8 j sits: its box, its 128-byte row k, and its 16-byte chunk c / 4, which the
    // swizzle moves to (c / 4) ^ (k % 8), with k % 8 = 2 quad + p.
    int offsets[2][2];

    __device__ SplitOperandB(const int (&columns)[2], int quad) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int c = columns[h] % kBoxColumns;
#pragma unroll
            for (int p = 0; p < 2; ++p) {
                const int k = 2 * quad + p;
                offsets[h][p] = columns[h] / kBoxColumns * kBoxBytes + k * 128 + ((c / 4) ^ k) * 16 + c % 4 * 4;
            }
        }
    }

    // ld.shared.f32 from an address in the shared window (shared_address() of cp_async.cuh):
    // where the compiler cannot tell that a pointer is to shared memory, it would issue a
    // generic load instead.
    static __device__ float load_shared_float(unsigned address) {
        float value;
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(value) : "r"(address));
        return value;
    }

    __device__ void load_fragment(unsigned tile, TileFragment& values) const {
#pragma unroll
        for (int step = 0; step < 4; ++step)
#pragma unroll
            for (int q = 0; q < 2; ++q)
#pragma unroll
                for (int h = 0; h < 2; ++h)
#pragma unroll
                    for (int p = 0; p < 2; ++p)
                        values[step][p + 2 * h + 4 * q] =
                            load_shared_float(tile + offsets[h][p] + (16 * step + 8 * q) * 128);
    }

    // The piece, transposed back: accumulator (h, 8 j + 2 quad + p) of C^T goes to row
    // 8 j + 2 quad + p and column `column` of the slot's tile of C (kSplitBlock wide).
    static __device__ void write_piece(float* slot, const float (&sums)[32], int h, int column) {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int row = wgmma_accumulator_position(threadIdx.x % 128, j, h).column;
#pragma unroll
            for (int p = 0; p < 2; ++p) slot[(row + p) * kSplitBlock + column] = sums[4 * j + 2 * h + p];
        }
    }

    static __device__ int line_count(const GemmShape& shape) { return shape.n; }
    static __device__ void flag(const Flagged& flagged, int column) { flagged.flag_column(column); }
    // Every row of A flagged (by the pre-pass): the fallback takes it all.
    static __device__ bool skips(const GemmShape& shape, const Flagged& flagged) { return flagged.counts[0] == shape.m; }
#endif
};

// A's rows -> A' = [lo | hi] (M x 2 padded_k) as stage 22's split_a_kernel writes it, with
// a block a row rather than a warp: there are few rows, and each is long. Both passes
// take the same eight values a thread: the second finds them in L1.
constexpr int kSplitRowThreads = 256;

__global__ void __launch_bounds__(kSplitRowThreads) split_rows_kernel(const float* a, int* row_exponents,
                                                                      __half* split, int m, int k, int padded_k,
                                                                      Flagged flagged) {
    __shared__ int row_exponent;
    const int row = blockIdx.x;
    const float* const values = a + static_cast<std::size_t>(row) * k;
    MagnitudeRange range;
    for (int column = 8 * threadIdx.x; column < k; column += 8 * kSplitRowThreads) {
        float eight[8];
        load_eight(values, k, column, eight);
#pragma unroll
        for (int i = 0; i < 8; ++i) range.include(eight[i]);
    }
    range = block_range<kSplitRowThreads>(range);
    if (threadIdx.x == 0) row_exponent = record_row(range, row, m, row_exponents, flagged);
    __syncthreads();
    split_row(values, k, padded_k, row_exponent, split + static_cast<std::size_t>(row) * 2 * padded_k,
              8 * threadIdx.x, 8 * kSplitRowThreads);
}

// C = alpha 2^-(row exponent) (the pieces' sums, added in run order) + beta C, four
// columns a thread; alpha's term left out where the row or the column went to the
// fallback; nothing where the fallback takes it all.
__global__ void finish_kernel(GemmProblem problem, const float* partials, SplitBlockRuns work, const int* row_exponents,
                              const int* column_flags, float* c, Flagged flagged) {
    const int m = problem.shape.m, n = problem.shape.n;
    if (flagged.whole(m, n)) return;
    const std::size_t count = static_cast<std::size_t>(m) * n / 4;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        const std::size_t first = 4 * i;
        const int row = static_cast<int>(first / n), column = static_cast<int>(first % n);
        // A slot holds C's tile of kSideBlock rows by kSplitBlock columns.
        const std::size_t in_slot = static_cast<std::size_t>(row % kSideBlock) * kSplitBlock + column % kSplitBlock;
        const float4 sum = sum_pieces(partials, work, column / kSplitBlock, row / kSideBlock, in_slot);
        const int4 flags = *reinterpret_cast<const int4*>(column_flags + column);
        const int exponent = row_exponents[row];
        const bool row_left = exponent == kLeftToFallback;
        const float acc[4] = {row_left || flags.x ? 0.0f : ldexpf(sum.x, -exponent),
                              row_left || flags.y ? 0.0f : ldexpf(sum.y, -exponent),
                              row_left || flags.z ? 0.0f : ldexpf(sum.z, -exponent),
                              row_left || flags.w ? 0.0f : ldexpf(sum.w, -exponent)};
        store_scaled_float4(c + first, acc, problem.alpha, problem.beta);
    }
}

}  // namespace

// Stage 23's kernels (N a multiple of 8): the pre-pass over A's
// rows, the GEMM kernel with B split in registers, the last kernel, the fallback.
void launch_split_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c,
                               cudaStream_t stream, int fallback_tile) {
    const auto [m, n, k] = problem.shape;
    static GrowingWorkspace workspace("stage 23's split rows and partial sums");
    const SplitLaunch launch = plan_split_launch(problem.shape, n, m, workspace);  // B's columns split, A's rows beside
    int* const column_flags = launch.per_column;
    int* const row_exponents = launch.per_row;

    cudaMemsetAsync(column_flags, 0, (static_cast<std::size_t>(n) + 4) * 4, stream);  // and the counts after them
    split_rows_kernel<<<m, kSplitRowThreads, 0, stream>>>(a, row_exponents, launch.side_parts, m, k, launch.padded_k,
                                                          launch.flagged);
    const CUtensorMap b_map = make_fp32_tensor_map(b, k, n, kBlockK, SplitOperandB::kBoxColumns);
    launch_split_in_registers_kernel<SplitOperandB>(launch, b_map, column_flags, problem.shape, stream);
    finish_kernel<<<finish_blocks(problem.shape, launch.sms), kFinishThreads, 0, stream>>>(
        problem, launch.partials, launch.work, row_exponents, column_flags, c, launch.flagged);
    launch_fp32_fallback(problem, a, b, c, launch.flagged, stream, fallback_tile);
}

void launch_split_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c,
                               cudaStream_t stream) {
    launch_split_in_registers(problem, a, b, c, stream, kTunedTileId);
}

}  // namespace sgemm
