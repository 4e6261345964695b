// Stage 14's kernel (read 14_multistage.cu first): the cp.async pipeline, as a template over
// its tile shapes and depth so that the tuner (src/tools/tuning_candidates.cu) can time
// several. What it calls at the edges and for the split tail: 14_edges_and_tail_split.cuh.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "14_edges_and_tail_split.cuh"
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
    // The pipeline's buffers, which also hold the tile of C that shapes off the tile grid
    // store through them (store_scaled_tile_by_rows, in 14_edges_and_tail_split.cuh).
    static constexpr std::size_t kPipelineBytes = sizeof(__nv_bfloat16) * kStages * kBufferValues;
    static constexpr std::size_t kSharedBytes = std::max(kPipelineBytes, staged_tile_bytes(kBlockM, kBlockN));
    // The copies: thread i copies chunk i % kAChunksPerRow of row i / kAChunksPerRow of
    // A's tile and the same chunk of every kARowsPerPass-th row below, kAPasses chunks in
    // all; likewise for B.
    static constexpr int kAChunksPerRow = kBlockK / kChunkValues, kBChunksPerRow = kBlockN / kChunkValues;
    static constexpr int kARowsPerPass = kThreads / kAChunksPerRow, kBRowsPerPass = kThreads / kBChunksPerRow;
    static constexpr int kAPasses = kAChunks / kThreads, kBPasses = kBChunks / kThreads;

    static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0, "warps tile the block");
    static_assert(kAChunks % kThreads == 0 && kBChunks % kThreads == 0, "copies split evenly");
    static_assert(kARowsPerPass % 8 == 0 && kBRowsPerPass % 8 == 0, "a thread's chunks share a swizzle");
    static_assert(kStages >= 2, "at least one tile in flight while another is used");
    static_assert(kBlockK / 16 % 2 == 0, "fragment buffers alternate by step parity");
};

template <class Config, Edges kEdges, bool kSplitTail>
__global__ void __launch_bounds__(Config::kThreads, Config::kMinBlocksPerSm)
    multistage_kernel(GemmProblem problem, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c,
                      int group_rows, TailSplit split) {
    using T = Config;
    extern __shared__ float4 shared_storage[];  // float4: 16-byte alignment (as in stage 10)
    __nv_bfloat16* const shared = reinterpret_cast<__nv_bfloat16*>(shared_storage);
    const unsigned shared_base = shared_address(shared_storage);
    constexpr int kBufferBytes = sizeof(__nv_bfloat16) * T::kBufferValues;
    const int m = problem.shape.m, n = problem.shape.n, k = problem.shape.k;

    // This block's tile of C and the K tiles it sums, [work.first_tile, work.end_tile): all
    // of them, or its part of a tile of the split tail.
    const BlockWork work = block_work<T, kSplitTail>(split, k);
    const TileOrigin origin = rasterized_tile_origin<T::kBlockM, T::kBlockN>(work.tile, m, n, group_rows);
    const int row0 = origin.row, col0 = origin.col;
    a += row0 * k;
    b += col0;
    c += row0 * n + col0;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_row = warp / T::kWarpsN * T::kWarpM, warp_col = warp % T::kWarpsN * T::kWarpN;

    // The copies (Bf16TileConfig says which chunks each thread copies). A thread's rows
    // are kARowsPerPass (kBRowsPerPass) apart, a multiple of 8, so all its chunks share one
    // swizzle: one shared address and one global pointer per operand plus constant
    // offsets, and moving on to the next K tile is one pointer increment.
    const int a_row = threadIdx.x / T::kAChunksPerRow, a_chunk = threadIdx.x % T::kAChunksPerRow;
    const int b_row = threadIdx.x / T::kBChunksPerRow, b_chunk = threadIdx.x % T::kBChunksPerRow;
    const unsigned a_store = shared_base + 2 * swizzled_offset<T::kBlockK>(a_row, a_chunk);
    const unsigned b_store = shared_base + 2 * (T::kATileValues + swizzled_offset<T::kBlockN>(b_row, b_chunk));

    // Where the thread's copies start. a_row_offset[pass] is where its row of pass `pass`
    // starts, relative to its first: with whole tiles the constant pass * kARowsPerPass * k.
    // kAlignedRows clamps rows past M and chunks past N to the last ones, and starts tile 0
    // k_start (<= 0) values before K = 0.
    const int k_start = aligned_rows_k_start<T, kEdges>(k);
    int a_row_offset[T::kAPasses];
#pragma unroll
    for (int pass = 0; pass < T::kAPasses; ++pass)
        a_row_offset[pass] = (clamped_to_edge<kEdges>(a_row + pass * T::kARowsPerPass, m - 1 - row0) - a_row) * k;
    const int b_column = clamped_to_edge<kEdges>(b_chunk * kChunkValues, n - kChunkValues - col0);
    const int k_first = k_start + work.first_tile * T::kBlockK;
    const __nv_bfloat16* a_next = a + a_row * k + a_chunk * kChunkValues + k_first;  // the next K tile to copy
    const __nv_bfloat16* b_next = b + (b_row + k_first) * n + b_column;
    const auto inside_tile0 = [&](int pass) {  // whether chunk `pass` of tile 0 lies at K >= 0
        if (pass < T::kAPasses) return k_start + a_chunk * kChunkValues >= 0;
        return k_start + b_row + (pass - T::kAPasses) * T::kBRowsPerPass >= 0;
    };

    // The copies of K tile `tile` into buffer `stage`, in kCopyPieces pieces (one per
    // k16 step, so that the loads of a tile do not leave in one burst); piece `piece` of
    // the tile. From work.end_tile on they only zero-fill, so the main loop needs no branch
    // around them. may_be_tile0 (std::true_type in the prologue only) keeps tile 0's
    // test out of the main loop.
    constexpr int kCopyPieces = T::kBlockK / 16;
    const auto copy_piece = [&](int tile, int stage, int piece, auto may_be_tile0) {
        if constexpr (kEdges == Edges::kAnyShape) {
            if (piece == 0)  // shapes off the tile copy whole tiles, through registers
                copy_tile_tested<T>(shared + stage * T::kBufferValues, a, b, tile, row0, col0, m, n, k, a_row, a_chunk,
                                    b_row, b_chunk);
        } else {
            // A zero-fill reads nothing but is still given a readable address: the block's
            // first value of A or B (past the last tile, or before K = 0 in tile 0).
            constexpr bool kTestTile0 = kEdges == Edges::kAlignedRows && decltype(may_be_tile0)::value;
            const bool tile_valid = tile < work.end_tile;
            const __nv_bfloat16* const a_from = tile_valid ? a_next : a;
            const __nv_bfloat16* const b_from = tile_valid ? b_next : b;
#pragma unroll
            for (int pass = 0; pass < T::kAPasses + T::kBPasses; ++pass) {
                if (pass * kCopyPieces / (T::kAPasses + T::kBPasses) != piece) continue;
                const bool valid = tile_valid && (!kTestTile0 || tile != 0 || inside_tile0(pass));
                const bool edge = kTestTile0 && !valid;
                if (pass < T::kAPasses)
                    cp_async_16_or_zero(a_store + stage * kBufferBytes + pass * T::kARowsPerPass * T::kBlockK * 2,
                                        edge ? a : a_from + a_row_offset[pass], valid);
                else
                    cp_async_16_or_zero(
                        b_store + stage * kBufferBytes + (pass - T::kAPasses) * T::kBRowsPerPass * T::kBlockN * 2,
                        edge ? b : b_from + (pass - T::kAPasses) * T::kBRowsPerPass * n, valid);
            }
            if (piece == kCopyPieces - 1) {
                a_next += T::kBlockK;
                b_next += T::kBlockK * n;
            }
        }
    };

    // Every ldmatrix address is a per-thread address computed once here plus a constant.
    // Within a warp's tile the swizzle depends only on the lane: the rows a lane
    // addresses are warp_row + 16 mi + lane % 16 for A and 16 k16 + lane % 16 for B, so
    // row % 8 is lane % 8 (and row / 2 % 4 is lane / 2 % 4) whatever mi or k16 is; and
    // the logical chunk is a constant OR-ed with lane / 16, so the XOR can be applied to
    // the lane part once. This takes the address arithmetic out of the inner loop.
    constexpr int kSteps = T::kBlockK / 16;
    constexpr int kBPairs = T::kNTiles / 2;  // B is loaded two n8 tiles at a time
    static_assert(T::kMTiles == kBPairs, "A and B loads alternate one for one");
    const int half = lane / 16;
    const int a_swizzle = half ^ (T::kAChunksPerRow == 4 ? (lane >> 1) & 3 : lane & 7);
    const int b_swizzle = half ^ (lane & 7);
    unsigned a_address[kSteps];
#pragma unroll
    for (int k16 = 0; k16 < kSteps; ++k16)
        a_address[k16] =
            shared_base + 2 * ((warp_row + lane % 16) * T::kBlockK + ((2 * k16) ^ a_swizzle) * kChunkValues);
    unsigned b_address[kBPairs];
#pragma unroll
    for (int nj = 0; nj < kBPairs; ++nj)
        b_address[nj] = shared_base + 2 * (T::kATileValues + (lane % 8 + (lane / 8) % 2 * 8) * T::kBlockN +
                                           ((warp_col / kChunkValues) ^ (2 * nj) ^ b_swizzle) * kChunkValues);

    using Fragments = WarpFragments<T::kMTiles, T::kNTiles>;
    // Row `mi` of a step's fragments: A's m16 tile mi and B's n8 tiles 2 mi and 2 mi + 1.
    const auto load_fragment_row = [&](Fragments& f, int stage, int k16, int mi) {
        const unsigned offset = stage * kBufferBytes;
        ldmatrix_x4(f.a[mi], a_address[k16] + offset + mi * 16 * T::kBlockK * 2);
        load_b_fragment_pair(f, 2 * mi, b_address[mi] + offset + k16 * 16 * T::kBlockN * 2);
    };

    // Fragments are double-buffered: while a step's mma.sync run, the next step's
    // fragments are loaded, one row of loads before each row of mma, so the tensor cores
    // never wait on shared memory and the loads never come in one burst. At the last step
    // of a tile, half the mma go first and the barrier comes between the two halves, so
    // a warp waiting there still has mma.sync in flight.
    Fragments fragments[2];
    float acc[T::kMTiles][T::kNTiles][4] = {};
    const auto mma_row = [&](const Fragments& f, int mi) {
#pragma unroll
        for (int ni = 0; ni < T::kNTiles; ++ni) mma_bf16_16816(acc[mi][ni], f.a[mi], f.b[ni]);
    };

#pragma unroll
    for (int stage = 0; stage < T::kStages - 1; ++stage) {
#pragma unroll
        for (int piece = 0; piece < kCopyPieces; ++piece)
            copy_piece(work.first_tile + stage, stage, piece, std::true_type{});
        cp_async_commit();  // one group per K tile, real or zero-fill, keeps the wait counts fixed
    }
    cp_async_wait<T::kStages - 2>();
    __syncthreads();
    int read_stage = 0, write_stage = T::kStages - 1;
#pragma unroll
    for (int mi = 0; mi < T::kMTiles; ++mi) load_fragment_row(fragments[0], 0, 0, mi);

    for (int t = work.first_tile; t < work.end_tile; ++t) {
#pragma unroll
        for (int s = 0; s < kSteps; ++s) {
            Fragments& current = fragments[s % 2];
            Fragments& next = fragments[(s + 1) % 2];
            // The buffer of tile t + kStages - 1 last held tile t - 1, whose fragments every
            // warp loaded before the barrier in the previous tile's last step.
            copy_piece(t + T::kStages - 1, write_stage, s, std::false_type{});
            if (s + 1 == kSteps) {
                cp_async_commit();
                write_stage = write_stage + 1 == T::kStages ? 0 : write_stage + 1;
            }
            if (s + 1 < kSteps) {
#pragma unroll
                for (int mi = 0; mi < T::kMTiles; ++mi) {
                    load_fragment_row(next, read_stage, s + 1, mi);
                    mma_row(current, mi);
                }
            } else {
#pragma unroll
                for (int mi = 0; mi < T::kMTiles / 2; ++mi) mma_row(current, mi);
                // Tile t + 1 has landed (at most kStages - 2 later groups in flight); the
                // barrier makes every thread's copies visible. After the last tile this
                // loads from a buffer nobody uses: harmless, and no branch.
                cp_async_wait<T::kStages - 2>();
                __syncthreads();
                read_stage = read_stage + 1 == T::kStages ? 0 : read_stage + 1;
#pragma unroll
                for (int mi = 0; mi < T::kMTiles; ++mi) {
                    load_fragment_row(next, read_stage, 0, mi);
                    if (mi % 2 == 1) mma_row(current, T::kMTiles / 2 + mi / 2);
                }
            }
        }
    }

    // Lane l holds rows l/4 and l/4 + 8 of each m16n8 tile, two adjacent columns each:
    // store(row, col, v0, v1) for each such pair, row and col within the block's tile.
    const auto for_each_output_pair = [&](auto&& store) {
#pragma unroll
        for (int mi = 0; mi < T::kMTiles; ++mi)
#pragma unroll
            for (int ni = 0; ni < T::kNTiles; ++ni)
#pragma unroll
                for (int half = 0; half < 2; ++half)
                    store(warp_row + mi * 16 + lane / 4 + half * 8, warp_col + ni * 8 + lane % 4 * 2,
                          acc[mi][ni][2 * half], acc[mi][ni][2 * half + 1]);
    };
    if (work.in_tail) {
        store_partial_sums<T>(split, work.tail_block, for_each_output_pair);
        return;
    }
    if constexpr (kEdges == Edges::kAnyShape) {
        store_scaled_tile_by_rows<T>(reinterpret_cast<float*>(shared_storage), c, row0, col0, m, n, problem.alpha,
                                     problem.beta, for_each_output_pair);
    } else {
        for_each_output_pair([&](int row, int col, float v0, float v1) {
            // With kAlignedRows, N and col are even: both outputs or neither.
            if (kEdges == Edges::kWholeTiles || (row0 + row < m && col0 + col < n))
                store_scaled_float2(c + row * n + col, v0, v1, problem.alpha, problem.beta);
        });
    }
}

template <class Config, Edges kEdges>
void launch_multistage_kernel(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                              float* c, int group_rows, cudaStream_t stream) {
    const int tiles = ceil_div(problem.shape.m, Config::kBlockM) * ceil_div(problem.shape.n, Config::kBlockN);
    const TailSplit split = take_tail_split<Config>(problem.shape, tiles, stream);
    // Blocks that may split their tile take a few registers more, and whole tiles lost 1-2 %
    // of their speed to them: problems that split nothing run the kernel without.
    const auto kernel = split.parts > 1 ? multistage_kernel<Config, kEdges, true> : multistage_kernel<Config, kEdges, false>;
    if constexpr (Config::kSharedBytes > 48 * 1024)  // above 48 KB only on request
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(Config::kSharedBytes));
    const int blocks = split.parts > 1 ? split.full_tiles + (tiles - split.full_tiles) * split.parts : tiles;
    kernel<<<blocks, Config::kThreads, Config::kSharedBytes, stream>>>(problem, a, b, c, group_rows, split);
    if (split.parts > 1) sum_split_tail<Config, kEdges>(problem, c, group_rows, split, tiles, stream);
}

// The cheapest edge handling the shape allows.
template <class Config>
void launch_bf16_tile_config(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                             float* c, int group_rows, cudaStream_t stream) {
    const GemmShape& s = problem.shape;
    if (s.m % Config::kBlockM == 0 && s.n % Config::kBlockN == 0 && s.k % Config::kBlockK == 0)
        launch_multistage_kernel<Config, Edges::kWholeTiles>(problem, a, b, c, group_rows, stream);
    else if (s.k % kChunkValues == 0 && s.n % kChunkValues == 0)
        launch_multistage_kernel<Config, Edges::kAlignedRows>(problem, a, b, c, group_rows, stream);
    else
        launch_multistage_kernel<Config, Edges::kAnyShape>(problem, a, b, c, group_rows, stream);
}

}  // namespace sgemm
