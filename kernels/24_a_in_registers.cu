// Stage 24 — FP32 on tensor cores for a narrow C: A split in registers, as it stands.
//
// Builds on stage 23: read it first. Its kernel (23_split_in_registers.cuh) runs here with
// A as the operand split in registers and B as the pre-split one; against stage 23 this
// file changes A's tile and its fragment load (SplitOperandA: the K permutation
// physical_k, one LDS.128 where 23 issues four), the pre-pass (B's columns rather than A's
// rows) and the last kernel (column exponents; it lists the fallback's rows and columns).
//
// The idea: where C has few columns, A is nearly all the bytes, and stage 23 pre-splits it
// (reads it twice and writes its parts) before its kernel reads the parts again: 4096 x 64
// x 4096 ran at 0.64x SGEMM and 8192 x 16 x 8192 at 0.40x. So stage 23's roles swap, and
// the transpose goes: A, row-major, is already what wgmma takes from registers (K-major).
// It is read once, as FP32 through TMA, and split in registers by stage 23's code
// (23_split_fragment.cuh: each K tile's 64 values of a row get their own power of two);
// B's few columns are the pre-split operand, scaled by a power of two a column and split
// into fp16 parts by a pre-pass over N x K values, wgmma's B from shared memory. The
// three products, the sums, the runs and the pieces are stage 23's kernel's, with rows
// and columns exchanged; what the checks list, stage 22's fallback takes.
//
// The one new piece is the fragment load. A thread's four values of a row for one k16 step
// (k = 2t, 2t+1, 2t+8, 2t+9, t = lane % 4) are not side by side in A's rows, and loading
// them one at a time (as stage 23 must, down B's columns) costs instructions, which bound
// stage 23. But their order within a K tile is free, as long as B's parts follow it: the
// thread finds its four values of step s in one 16-byte chunk, 2t + s % 2 of a 128-byte
// row of the tile (physical_k), and the pre-pass puts B's values in the same order. One
// LDS.128 where stage 23 issues four; and the two rows a quarter warp loads fall on even
// and odd chunks, which the 128-byte swizzle (chunk ^ row % 8) sends to disjoint banks.
//
// Prediction: reading A once from DRAM bounds it, as B bounded stage 23 at 64 tokens:
// 8192 x 16 x 8192 (268 MB of A) in about 95 us at 2.8 TB/s, 1.6x SGEMM; 4096 x 64 x 4096
// (67 MB) in about 30 us, 2x.
//
// Measured by make results on the H100 80GB HBM3: 89.7 TFLOPS at N = 4096 (1.73x cuBLAS SGEMM),
// 100.0 at 8192 (2.02x).
// On the shape suite (make shapes): 8192 x 16 x 8192 in 132 us, 1.18x SGEMM (stage 23:
// 0.40x); 4096 x 64 x 4096 in 58 us, 1.17x (0.63x); normwise error 1.5-1.8e-7. With it, the
// FP32 track is above SGEMM on every shape of the suite. Short of the prediction: ncu puts
// the GEMM kernel at 108 us and 75 % of DRAM bandwidth on the first, and at 33 us on the
// second, where the pre-pass (11 us: each of a block's loads down a column of B takes 32
// sectors), the last kernel (7 us) and the fallback's empty launch (3 us) take the rest.
//
// Where the fp32-tc track runs it (dispatch/fp32_tc.cpp): where its model of the kernels'
// times puts this one first, mostly a narrow C with many rows (4096 x 64 x 4096).
//
// Shapes: any M; K a multiple of 4 (TMA's rows of A) and N of 8 (B's parts and C), other
// shapes on zero-padded copies. Needs sm_90a.
#include "24_a_in_registers.hpp"

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

// A's K tile in FP32: two TMA boxes of 32 values of K (128 bytes, one swizzle row) by 128 rows.
constexpr int kBoxK = 32, kBoxBytes = kSplitBlock * kBoxK * 4;
static_assert(kBlockK / kBoxK * kBoxBytes == sizeof(SplitStage::split), "the boxes fill the tile");

// Where the value that the wgmmas take as k (0..63 in a K tile) sits in the tile of A: step
// k / 16's four values of thread t = k % 8 / 2 (p = k % 2, q = k % 16 / 8) are the chunk
// 2t + step % 2 of box step / 2's row, in the order p + 2q.
__host__ __device__ constexpr int physical_k(int k) {
    const int step = k / 16, t = k % 8 / 2, p = k % 2, q = k % 16 / 8;
    return step / 2 * kBoxK + 4 * (2 * t + step % 2) + p + 2 * q;
}

constexpr bool physical_k_is_a_permutation() {
    bool taken[kBlockK] = {};
    for (int k = 0; k < kBlockK; ++k) {
        const int place = physical_k(k);
        if (place < 0 || place >= kBlockK || taken[place]) return false;
        taken[place] = true;
    }
    return true;
}
static_assert(physical_k_is_a_permutation(), "every value of a K tile taken once");

// The operand split in registers here, A (the kernel's SplitOperand, 23_split_in_registers.cuh).
struct SplitOperandA {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // for the kernel's sm_90a body (other targets compile it empty)
    static __device__ void load_tile(std::uint8_t* tile, const CUtensorMap* a_map, int first_row, int k0,
                                     std::uint64_t* full) {
        for (int box = 0; box < kBlockK / kBoxK; ++box)
            tma_load_2d(tile + box * kBoxBytes, a_map, k0 + box * kBoxK, first_row, full);
    }

    // Where in a box row of the tile the chunk of steps 0 and 2 (odd = 0) and of steps 1
    // and 3 (odd = 1) of the thread's row h sits: chunk 2 quad + odd of the row, which the
    // swizzle moves to (2 quad + odd) ^ (row % 8).
    int offsets[2][2];

    __device__ SplitOperandA(const int (&rows)[2], int quad) {
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int odd = 0; odd < 2; ++odd) offsets[h][odd] = rows[h] * 128 + ((2 * quad + odd) ^ (rows[h] % 8)) * 16;
    }

    // ld.shared.v4.f32: four consecutive floats (16-byte aligned) from an address in the
    // shared window (shared_address() of cp_async.cuh), in one LDS.128.
    static __device__ float4 load_shared_float4(unsigned address) {
        float4 value;
        asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                     : "=f"(value.x), "=f"(value.y), "=f"(value.z), "=f"(value.w)
                     : "r"(address));
        return value;
    }

    __device__ void load_fragment(unsigned tile, TileFragment& values) const {
#pragma unroll
        for (int step = 0; step < 4; ++step)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float4 four = load_shared_float4(tile + step / 2 * kBoxBytes + offsets[h][step % 2]);
                values[step][2 * h] = four.x;      // k = 2 quad
                values[step][2 * h + 1] = four.y;  // 2 quad + 1
                values[step][2 * h + 4] = four.z;  // 2 quad + 8
                values[step][2 * h + 5] = four.w;  // 2 quad + 9
            }
    }

    // The piece: accumulator (h, 8 j + 2 quad + p) is C at row `row` and that column of
    // the slot's tile of C, whose rows are kSideBlock wide: a float2 a j.
    static __device__ void write_piece(float* slot, const float (&sums)[32], int h, int row) {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int column = wgmma_accumulator_position(threadIdx.x % 128, j, h).column;
            *reinterpret_cast<float2*>(slot + row * kSideBlock + column) =
                make_float2(sums[4 * j + 2 * h], sums[4 * j + 2 * h + 1]);
        }
    }

    static __device__ int line_count(const GemmShape& shape) { return shape.m; }
    static __device__ void flag(const Flagged& flagged, int row) { flagged.flag_row(row); }
    // The kernel itself finds the rows of A that fail, so it always runs.
    static __device__ bool skips(const GemmShape&, const Flagged&) { return false; }
#endif
};

// B's columns -> B' = [lo | hi] (N x 2 padded_k, K-major), each column scaled by its own
// power of two (kept for the last kernel; kLeftToFallback where two fp16 parts cannot hold
// it or it holds NaN or Inf), B's value of physical_k(k) at place k of each K tile. A block
// a column: its range, then eight places a thread (a 16-byte store of each part). B is
// small, and the block's loads down its column wait on latency, not bandwidth: a thousand
// threads, each with its loads in flight together. Block 0 also zeroes what the GEMM and
// the last kernel count into (`zeroed`, `zeroed_count` ints), which saves a launch.
constexpr int kSplitColumnThreads = 1024, kLoadsInFlight = 4;

__global__ void __launch_bounds__(kSplitColumnThreads) split_columns_kernel(const float* b, int* column_exponents,
                                                                            __half* split, int k, int n, int padded_k,
                                                                            int* zeroed, int zeroed_count) {
    __shared__ int column_exponent;
    const int column = blockIdx.x;
    if (column == 0)
        for (int i = threadIdx.x; i < zeroed_count; i += kSplitColumnThreads) zeroed[i] = 0;
    const auto value = [&](int row) { return row < k ? b[static_cast<std::size_t>(row) * n + column] : 0.0f; };
    MagnitudeRange range;
    for (int first = threadIdx.x; first < k; first += kLoadsInFlight * kSplitColumnThreads) {
        float values[kLoadsInFlight];
#pragma unroll
        for (int i = 0; i < kLoadsInFlight; ++i) values[i] = value(first + i * kSplitColumnThreads);
#pragma unroll
        for (int i = 0; i < kLoadsInFlight; ++i) range.include(values[i]);
    }
    range = block_range<kSplitColumnThreads>(range);
    if (threadIdx.x == 0) {
        const bool splits = !range.non_finite && fits_two_f16_parts(range.largest, range.smallest);
        column_exponent = splits ? scaling_exponent(range.largest) : kLeftToFallback;
        column_exponents[column] = column_exponent;
    }
    __syncthreads();
    int exponents[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) exponents[i] = column_exponent;
    __half* const out = split + static_cast<std::size_t>(column) * 2 * padded_k;
    for (int place = 8 * threadIdx.x; place < padded_k; place += 8 * kSplitColumnThreads) {
        const int tile_start = place / kBlockK * kBlockK;
        float eight[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) eight[i] = value(tile_start + physical_k(place % kBlockK + i));
        const EightSplitValues parts = split_eight(eight, exponents);
        store_eight(out + place, parts.lo);
        store_eight(out + padded_k + place, parts.hi);
    }
}

// C = alpha 2^-(column exponent) (the pieces' sums, added in run order) + beta C, four
// columns a thread; alpha's term left out where the row or the column went to the
// fallback. The lists for it: the threads of row 0 list the flagged columns, those of
// column 0 the rows the GEMM kept (it lists those it flags). Where every row or every
// column is flagged, the lists alone: the fallback takes it all, from C0.
__global__ void finish_kernel(GemmProblem problem, const float* partials, SplitBlockRuns work,
                              const int* column_exponents, const int* row_flags, float* c, Flagged flagged) {
    const int m = problem.shape.m, n = problem.shape.n;
    __shared__ bool whole;
    if (threadIdx.x == 0) {  // C is narrow (where the fp32-tc track runs this kernel)
        bool every_column_flagged = true;
        for (int j = 0; j < n && every_column_flagged; ++j)
            every_column_flagged = column_exponents[j] == kLeftToFallback;
        whole = flagged.counts[0] == m || every_column_flagged;
    }
    __syncthreads();
    const std::size_t count = static_cast<std::size_t>(m) * n / 4;
    for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
         i += std::size_t{gridDim.x} * blockDim.x) {
        const std::size_t first = 4 * i;
        const int row = static_cast<int>(first / n), column = static_cast<int>(first % n);
        const int4 exponents = *reinterpret_cast<const int4*>(column_exponents + column);
        if (row == 0) {
            const int column_exponent[4] = {exponents.x, exponents.y, exponents.z, exponents.w};
            for (int j = 0; j < 4; ++j)
                if (column_exponent[j] == kLeftToFallback) flagged.flag_column(column + j);
        }
        if (whole) continue;
        // A slot holds C's tile of kSplitBlock rows by kSideBlock columns.
        const std::size_t in_slot = static_cast<std::size_t>(row % kSplitBlock) * kSideBlock + column % kSideBlock;
        const float4 sum = sum_pieces(partials, work, row / kSplitBlock, column / kSideBlock, in_slot);
        const bool row_left = row_flags[row] != 0;
        const auto scaled = [&](float s, int exponent) {
            return row_left || exponent == kLeftToFallback ? 0.0f : ldexpf(s, -exponent);
        };
        const float acc[4] = {scaled(sum.x, exponents.x), scaled(sum.y, exponents.y), scaled(sum.z, exponents.z),
                              scaled(sum.w, exponents.w)};
        store_scaled_float4(c + first, acc, problem.alpha, problem.beta);
        if (column == 0 && !row_left) flagged.keep_row(row, m);
    }
}

}  // namespace

// Stage 24's kernels (K a multiple of 4, N of 8): the
// pre-pass over B's columns, the GEMM kernel with A split in registers, the last kernel,
// the fallback.
void launch_a_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream,
                           int fallback_tile) {
    const auto [m, n, k] = problem.shape;
    static GrowingWorkspace workspace("stage 24's split columns and partial sums");
    const SplitLaunch launch = plan_split_launch(problem.shape, m, n, workspace);  // A's rows split, B's columns beside
    int* const column_exponents = launch.per_column;
    int* const row_flags = launch.per_row;

    // The pre-pass also zeroes the counts and the row flags after them.
    split_columns_kernel<<<n, kSplitColumnThreads, 0, stream>>>(b, column_exponents, launch.side_parts, k, n,
                                                                launch.padded_k, launch.counts, 4 + m);
    const CUtensorMap a_map = make_fp32_tensor_map(a, m, k, kSplitBlock, kBoxK);
    launch_split_in_registers_kernel<SplitOperandA>(launch, a_map, row_flags, problem.shape, stream);
    finish_kernel<<<finish_blocks(problem.shape, launch.sms), kFinishThreads, 0, stream>>>(
        problem, launch.partials, launch.work, column_exponents, row_flags, c, launch.flagged);
    launch_fp32_fallback(problem, a, b, c, launch.flagged, stream, fallback_tile);
}

void launch_a_in_registers(const GemmProblem& problem, const float* a, const float* b, float* c, cudaStream_t stream) {
    launch_a_in_registers(problem, a, b, c, stream, kTunedTileId);
}

}  // namespace sgemm
