// Stage 13 — mma.sync fed by ldmatrix from a swizzled shared-memory layout.
//
// The idea: wmma hides two things that matter for speed: how fragments are laid out in
// registers, and how they are read from shared memory. This stage uses the instructions
// underneath directly (kernels/common/mma.cuh). mma.sync m16n8k16 multiplies a 16x16
// bf16 tile of A by a 16x8 tile of B; its operand layout per lane is documented, and
// ldmatrix loads exactly that layout: each lane gives the address of one 16-byte row
// of an 8x8 tile and receives its share of four such tiles in one instruction (B is
// stored [k][n] and loaded with ldmatrix .trans, which hands it over as mma's
// column-major operand). The accumulators stay in registers across the whole K loop.
//
// Shared memory is swizzled instead of padded (kernels/common/bf16_tiles.cuh): the
// chunks of each row are XOR-permuted, so the 8 rows one ldmatrix reads fall into 8
// different bank groups, with no wasted bytes and 16-byte aligned rows for the copies.
//
// Tiles: block 128x128x32, 8 warps as 2 x 4, each warp 64x32 = 4 x 4 mma tiles. Per
// k16 step a warp issues 4 ldmatrix for A, 2 for B and 16 mma.sync. Loads are still
// synchronous (load, barrier, compute, barrier): the pipelining is stage 14's.
//
// Prediction: 3-4x stage 12.
//
// Measured by make results on the H100 80GB HBM3: 113.2 TFLOPS at N = 4096 (15.1 % of cuBLAS bf16),
// 117.1 at 8192 (14.8 %).
// Only 1.08-1.09x stage 12, far under the prediction. Both stages spend their time in the
// synchronous load -> barrier -> compute -> barrier cycle (the tensor pipe busy 18.6 %
// against 17.2 %), which stage 14 removes. The swizzle does pay: built with each chunk at
// its logical place, this kernel ran at 69.4 TFLOPS, slower than stage 12.
// docs/notes/13_mma_ldmatrix.md has the counters.
//
// Shapes: M and N multiples of 128, K a multiple of 32. Needs sm_80.
#include "13_mma_ldmatrix.hpp"

#include "common/bf16_tiles.cuh"
#include "common/epilogue.cuh"
#include "common/gemm_problem.hpp"

namespace sgemm {
namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 32;
constexpr int kWarpM = 64;
constexpr int kWarpN = 32;
constexpr int kWarpsN = kBlockN / kWarpN;
constexpr int kThreads = 32 * (kBlockM / kWarpM) * kWarpsN;
constexpr int kMTiles = kWarpM / 16;
constexpr int kNTiles = kWarpN / 8;

// A warp's fragments of one k16 step, loaded with ldmatrix. The warp's tile of C starts
// at row warp_row and column warp_col of the block's tile.
__device__ __forceinline__ void load_warp_fragments(WarpFragments<kMTiles, kNTiles>& f,
                                                    const __nv_bfloat16* a_tile,
                                                    const __nv_bfloat16* b_tile, int k16,
                                                    int warp_row, int warp_col, int lane) {
    static_assert(kNTiles % 2 == 0, "B fragments are loaded two n8 tiles at a time");
#pragma unroll
    for (int mi = 0; mi < kMTiles; ++mi) {
        // Lanes 0-15 address rows 0-15 of the first 8 K values, lanes 16-31 the next 8.
        const int row = warp_row + mi * 16 + lane % 16;
        ldmatrix_x4(f.a[mi], a_tile + swizzled_offset<kBlockK>(row, k16 * 2 + lane / 16));
    }
#pragma unroll
    for (int nj = 0; nj < kNTiles / 2; ++nj) {
        // Lanes 0-7 and 8-15: K rows 0-7 and 8-15 of the first n8 tile; 16-31: the second.
        const int row = k16 * 16 + lane % 8 + (lane / 8) % 2 * 8;
        const int chunk = (warp_col + nj * 16) / kChunkValues + lane / 16;
        const __nv_bfloat16* const b_row = b_tile + swizzled_offset<kBlockN>(row, chunk);
        load_b_fragment_pair(f, 2 * nj, static_cast<unsigned>(__cvta_generic_to_shared(b_row)));
    }
}

__device__ __forceinline__ void mma_warp_fragments(float (&acc)[kMTiles][kNTiles][4],
                                                   const WarpFragments<kMTiles, kNTiles>& f) {
#pragma unroll
    for (int mi = 0; mi < kMTiles; ++mi)
#pragma unroll
        for (int ni = 0; ni < kNTiles; ++ni) mma_bf16_16816(acc[mi][ni], f.a[mi], f.b[ni]);
}

// One k16 step: load, then multiply.
__device__ __forceinline__ void warp_mma_k16(float (&acc)[kMTiles][kNTiles][4],
                                             const __nv_bfloat16* a_tile,
                                             const __nv_bfloat16* b_tile, int k16, int warp_row,
                                             int warp_col, int lane) {
    WarpFragments<kMTiles, kNTiles> f;
    load_warp_fragments(f, a_tile, b_tile, k16, warp_row, warp_col, lane);
    mma_warp_fragments(acc, f);
}

__global__ void __launch_bounds__(kThreads)
    mma_ldmatrix_kernel(GemmProblem problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c) {
    __shared__ alignas(128) __nv_bfloat16 a_tile[kBlockM * kBlockK];
    __shared__ alignas(128) __nv_bfloat16 b_tile[kBlockK * kBlockN];

    const auto [m, n, k] = problem.shape;
    a += blockIdx.y * kBlockM * k;
    b += blockIdx.x * kBlockN;
    c += blockIdx.y * kBlockM * n + blockIdx.x * kBlockN;
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int warp_row = warp / kWarpsN * kWarpM;
    const int warp_col = warp % kWarpsN * kWarpN;

    float acc[kMTiles][kNTiles][4] = {};
    for (int k0 = 0; k0 < k; k0 += kBlockK) {
        for (int f = threadIdx.x; f < kBlockM * kBlockK / kChunkValues; f += kThreads) {
            const int row = f / (kBlockK / kChunkValues), chunk = f % (kBlockK / kChunkValues);
            *reinterpret_cast<uint4*>(a_tile + swizzled_offset<kBlockK>(row, chunk)) =
                *reinterpret_cast<const uint4*>(a + row * k + chunk * kChunkValues);
        }
        for (int f = threadIdx.x; f < kBlockK * kBlockN / kChunkValues; f += kThreads) {
            const int row = f / (kBlockN / kChunkValues), chunk = f % (kBlockN / kChunkValues);
            *reinterpret_cast<uint4*>(b_tile + swizzled_offset<kBlockN>(row, chunk)) =
                *reinterpret_cast<const uint4*>(b + row * n + chunk * kChunkValues);
        }
        __syncthreads();
        a += kBlockK;
        b += kBlockK * n;
#pragma unroll
        for (int k16 = 0; k16 < kBlockK / 16; ++k16)
            warp_mma_k16(acc, a_tile, b_tile, k16, warp_row, warp_col, lane);
        __syncthreads();
    }

    // Lane l holds rows l/4 and l/4 + 8 of each m16n8 tile, two adjacent columns each.
#pragma unroll
    for (int mi = 0; mi < kMTiles; ++mi)
#pragma unroll
        for (int ni = 0; ni < kNTiles; ++ni) {
            const int row = warp_row + mi * 16 + lane / 4;
            const int col = warp_col + ni * 8 + lane % 4 * 2;
            store_scaled_float2(c + row * n + col, acc[mi][ni][0], acc[mi][ni][1], problem.alpha, problem.beta);
            store_scaled_float2(c + (row + 8) * n + col, acc[mi][ni][2], acc[mi][ni][3], problem.alpha, problem.beta);
        }
}

}  // namespace

void launch_mma_ldmatrix(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                         float* c, cudaStream_t stream) {
    const dim3 grid(problem.shape.n / kBlockN, problem.shape.m / kBlockM);
    mma_ldmatrix_kernel<<<grid, kThreads, 0, stream>>>(problem, a, b, c);
}

}  // namespace sgemm
