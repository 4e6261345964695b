// The kernel of stage 14 as a template over its tile shapes and pipeline depth, so that
// the tuner (src/tuning_candidates.cu) can time several and the stage (14_multistage.cu)
// compile the winner. Read 14_multistage.cu first.
#pragma once

#include <cstddef>

#include "common/bf16_tiles.cuh"
#include "common/cp_async.cuh"
#include "common/epilogue.cuh"
#include "common/gemm_problem.hpp"
#include "common/launch.cuh"

namespace sgemm {

// Block tile BlockM x BlockN, stepping BlockK (32 or 64) along K; warp tiles WarpM x
// WarpN of m16n8 mma tiles; Stages shared-memory buffers (Stages - 1 tiles in flight);
// and the blocks per SM that __launch_bounds__ asks for.
template <int BlockM, int BlockN, int BlockK, int WarpM, int WarpN, int Stages, int MinBlocksPerSm>
struct Bf16TileConfig {
    static constexpr int kBlockM = BlockM, kBlockN = BlockN, kBlockK = BlockK;
    static constexpr int kWarpM = WarpM, kWarpN = WarpN;
    static constexpr int kStages = Stages, kMinBlocksPerSm = MinBlocksPerSm;
    static constexpr int kWarpsN = kBlockN / kWarpN;
    static constexpr int kThreads = 32 * (kBlockM / kWarpM) * kWarpsN;
    static constexpr int kMTiles = kWarpM / 16, kNTiles = kWarpN / 8;
    static constexpr int kATileValues = kBlockM * kBlockK;
    static constexpr int kBufferValues = kATileValues + kBlockK * kBlockN;
    static constexpr int kAChunks = kATileValues / kChunkValues;
    static constexpr int kBChunks = kBlockK * kBlockN / kChunkValues;
    static constexpr std::size_t kSharedBytes = sizeof(__nv_bfloat16) * kStages * kBufferValues;

    static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0, "warps tile the block");
    static_assert(kAChunks % kThreads == 0 && kBChunks % kThreads == 0, "copies split evenly");
    static_assert(kStages >= 2, "at least one tile in flight while another is used");
    static_assert(kBlockK / 16 % 2 == 0, "fragment buffers alternate by step parity");
};

// kChecked: shapes that are not whole tiles. Loads then test every value against the
// matrix bounds (zeros outside) and go through registers, since rows need not be
// 16-byte aligned for cp.async; stores test every output.
template <class Config, bool kChecked>
__global__ void __launch_bounds__(Config::kThreads, Config::kMinBlocksPerSm)
    multistage_kernel(GemmProblem problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                      int group_rows) {
    using T = Config;
    extern __shared__ float4 shared_storage[];  // float4: 16-byte alignment (as in stage 10)
    __nv_bfloat16* const shared = reinterpret_cast<__nv_bfloat16*>(shared_storage);
    const int m = problem.shape.m, n = problem.shape.n, k = problem.shape.k;

    const TileOrigin origin = rasterized_tile_origin<T::kBlockM, T::kBlockN>(m, n, group_rows);
    const int row0 = origin.row, col0 = origin.col;
    a += row0 * k;
    b += col0;
    c += row0 * n + col0;

    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int warp_row = warp / T::kWarpsN * T::kWarpM;
    const int warp_col = warp % T::kWarpsN * T::kWarpN;

    const auto buffer_of = [&](int tile) { return shared + (tile % T::kStages) * T::kBufferValues; };
    // Starts the copy of K tile `tile` into its buffer, in the swizzled layout.
    const auto copy_tile = [&](int tile) {
        const int k0 = tile * T::kBlockK;
        __nv_bfloat16* const a_tile = buffer_of(tile);
        __nv_bfloat16* const b_tile = a_tile + T::kATileValues;
#pragma unroll
        for (int j = 0; j < T::kAChunks / T::kThreads; ++j) {
            const int f = threadIdx.x + j * T::kThreads;
            const int row = f / (T::kBlockK / kChunkValues), chunk = f % (T::kBlockK / kChunkValues);
            __nv_bfloat16* const destination = a_tile + swizzled_offset<T::kBlockK>(row, chunk);
            const int col = k0 + chunk * kChunkValues;
            if constexpr (kChecked) {
                alignas(16) __nv_bfloat16 values[kChunkValues];
#pragma unroll
                for (int e = 0; e < kChunkValues; ++e)
                    values[e] = (row0 + row < m && col + e < k) ? a[row * k + col + e] : __float2bfloat16(0.0f);
                *reinterpret_cast<uint4*>(destination) = *reinterpret_cast<const uint4*>(values);
            } else {
                cp_async_16(destination, a + row * k + col);
            }
        }
#pragma unroll
        for (int j = 0; j < T::kBChunks / T::kThreads; ++j) {
            const int f = threadIdx.x + j * T::kThreads;
            const int row = f / (T::kBlockN / kChunkValues), chunk = f % (T::kBlockN / kChunkValues);
            __nv_bfloat16* const destination = b_tile + swizzled_offset<T::kBlockN>(row, chunk);
            const int col = chunk * kChunkValues;
            if constexpr (kChecked) {
                alignas(16) __nv_bfloat16 values[kChunkValues];
#pragma unroll
                for (int e = 0; e < kChunkValues; ++e)
                    values[e] = (k0 + row < k && col0 + col + e < n) ? b[(k0 + row) * n + col + e] : __float2bfloat16(0.0f);
                *reinterpret_cast<uint4*>(destination) = *reinterpret_cast<const uint4*>(values);
            } else {
                cp_async_16(destination, b + (k0 + row) * n + col);
            }
        }
    };

    float acc[T::kMTiles][T::kNTiles][4] = {};
    // Fragments are double-buffered: the ldmatrix of step s + 1 is issued before the
    // mma.sync of step s, so the tensor cores never wait on shared memory.
    WarpFragments<T::kMTiles, T::kNTiles> fragments[2];
    constexpr int kSteps = T::kBlockK / 16;
    // Every ldmatrix address is a per-thread offset computed once here plus a constant.
    // Within a warp's tile the swizzle depends only on the lane: the rows a lane
    // addresses are warp_row + 16 mi + lane % 16 for A and 16 k16 + lane % 16 for B, so
    // row % 8 is lane % 8 (and row / 2 % 4 is lane / 2 % 4) whatever mi or k16 is; and
    // the logical chunk is a constant OR-ed with lane / 16, so the XOR can be applied to
    // the lane part once. This takes the address arithmetic out of the inner loop.
    const int half = lane / 16;
    const int a_swizzle = half ^ (T::kBlockK / kChunkValues == 4 ? (lane >> 1) & 3 : lane & 7);
    const int b_swizzle = half ^ (lane & 7);
    int a_offset[kSteps];
#pragma unroll
    for (int k16 = 0; k16 < kSteps; ++k16)
        a_offset[k16] = (warp_row + lane % 16) * T::kBlockK + ((2 * k16) ^ a_swizzle) * kChunkValues;
    int b_offset[T::kNTiles / 2];
#pragma unroll
    for (int nj = 0; nj < T::kNTiles / 2; ++nj)
        b_offset[nj] = T::kATileValues + (lane % 8 + (lane / 8) % 2 * 8) * T::kBlockN +
                       ((warp_col / kChunkValues) ^ (2 * nj) ^ b_swizzle) * kChunkValues;
    const auto load_fragments = [&](WarpFragments<T::kMTiles, T::kNTiles>& f, int tile, int k16) {
        const __nv_bfloat16* buffer = buffer_of(tile);
#pragma unroll
        for (int mi = 0; mi < T::kMTiles; ++mi)
            ldmatrix_x4(f.a[mi], buffer + a_offset[k16] + mi * 16 * T::kBlockK);
#pragma unroll
        for (int nj = 0; nj < T::kNTiles / 2; ++nj) {
            unsigned r[4];
            ldmatrix_x4_trans(r, buffer + b_offset[nj] + k16 * 16 * T::kBlockN);
            f.b[2 * nj][0] = r[0];
            f.b[2 * nj][1] = r[1];
            f.b[2 * nj + 1][0] = r[2];
            f.b[2 * nj + 1][1] = r[3];
        }
    };

    const int tile_count = ceil_div(k, T::kBlockK);
#pragma unroll
    for (int tile = 0; tile < T::kStages - 1; ++tile) {
        if (tile < tile_count) copy_tile(tile);
        cp_async_commit();  // one group per tile, empty or not, keeps the wait counts fixed
    }
    cp_async_wait<T::kStages - 2>();
    __syncthreads();
    load_fragments(fragments[0], 0, 0);

    for (int t = 0; t < tile_count; ++t) {
        // The buffer of tile t + kStages - 1 last held tile t - 1, whose fragments every
        // warp loaded before the barrier that opened tile t.
        if (t + T::kStages - 1 < tile_count) copy_tile(t + T::kStages - 1);
        cp_async_commit();
#pragma unroll
        for (int s = 0; s < kSteps; ++s) {
            if (s + 1 < kSteps) {
                load_fragments(fragments[(s + 1) % 2], t, s + 1);
            } else if (t + 1 < tile_count) {
                // Tile t + 1 has landed (at most kStages - 2 later groups in flight);
                // the barrier makes every thread's copies visible.
                cp_async_wait<T::kStages - 2>();
                __syncthreads();
                load_fragments(fragments[(s + 1) % 2], t + 1, 0);
            }
            mma_warp_fragments(acc, fragments[s % 2]);
        }
    }

    // Lane l holds rows l/4 and l/4 + 8 of each m16n8 tile, two adjacent columns each.
#pragma unroll
    for (int mi = 0; mi < T::kMTiles; ++mi)
#pragma unroll
        for (int ni = 0; ni < T::kNTiles; ++ni)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = warp_row + mi * 16 + lane / 4 + half * 8;
                const int col = warp_col + ni * 8 + lane % 4 * 2;
                const float v0 = acc[mi][ni][2 * half], v1 = acc[mi][ni][2 * half + 1];
                if constexpr (kChecked) {
                    if (row0 + row >= m) continue;
                    for (int e = 0; e < 2; ++e)
                        if (col0 + col + e < n) {
                            float& out = c[row * n + col + e];
                            out = scale_and_accumulate(e == 0 ? v0 : v1, problem.alpha, problem.beta, out);
                        }
                } else {
                    store_scaled_float2(c + row * n + col, v0, v1, problem.alpha, problem.beta);
                }
            }
}

template <class Config, bool kChecked>
void launch_multistage_kernel(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                              float* c, int group_rows, cudaStream_t stream) {
    const auto kernel = multistage_kernel<Config, kChecked>;
    if constexpr (Config::kSharedBytes > 48 * 1024)  // above 48 KB only on request
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(Config::kSharedBytes));
    const int blocks = ceil_div(problem.shape.m, Config::kBlockM) * ceil_div(problem.shape.n, Config::kBlockN);
    kernel<<<blocks, Config::kThreads, Config::kSharedBytes, stream>>>(problem, a, b, c, group_rows);
}

// Whole tiles take the cp.async kernel; any other shape the checked one.
template <class Config>
void launch_bf16_tile_config(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                             float* c, int group_rows, cudaStream_t stream) {
    const GemmShape& s = problem.shape;
    if (s.m % Config::kBlockM == 0 && s.n % Config::kBlockN == 0 && s.k % Config::kBlockK == 0)
        launch_multistage_kernel<Config, false>(problem, a, b, c, group_rows, stream);
    else
        launch_multistage_kernel<Config, true>(problem, a, b, c, group_rows, stream);
}

}  // namespace sgemm
