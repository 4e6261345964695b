// The kernel of stage 14 as a template over its tile shapes and pipeline depth, so that
// the tuner (src/tools/tuning_candidates.cu) can time several and the stage (14_multistage.cu)
// compile the winner. Read 14_multistage.cu first.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

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

// How the kernel meets the edges of the matrices.
//   kWholeTiles: the shape is whole tiles; nothing is tested.
//   kAlignedRows: K and N are multiples of 8, so rows of A, B and C start 16-byte
//     aligned, as cp.async needs. Copies past the bottom or right edge read the last
//     row or chunk instead (what they feed is never stored), and K's remainder is
//     copied first: the main loop is the whole-tile one, with nothing in it tested.
//   kAnyShape: rows need not be 16-byte aligned, which cp.async requires: loads test
//     every value against the bounds (zeros outside) and go through registers, and
//     stores test every output. Correct for any shape, and several times slower.
enum class Edges { kWholeTiles, kAlignedRows, kAnyShape };

// How the blocks share the tiles of C. Blocks 0 .. full_tiles - 1 take one tile each, in
// raster order. Where the tiles left after the full waves would leave most SMs idle for
// a whole last wave, each of those is split along K into `parts` blocks, which write
// their sums to `partials` (one BlockM x BlockN slot per block, row-major) for
// sum_partials_kernel to add up in a fixed order: the tail takes a fraction of a wave,
// and the result does not depend on which block finished first.
struct TailSplit {
    int full_tiles;
    int parts;        // 1: no tile is split, and the grid is full_tiles blocks
    float* partials;  // (tiles - full_tiles) * parts slots
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

    // This block's tile and its K tiles [first_tile, end_tile): all of them, or part
    // `part` of `split.parts` for a tile of the split tail.
    const int tile_count = ceil_div(k, T::kBlockK);
    const bool in_tail = kSplitTail && static_cast<int>(blockIdx.x) >= split.full_tiles;
    const int tail_block = blockIdx.x - split.full_tiles;
    const int block_tile = in_tail ? split.full_tiles + tail_block / split.parts : blockIdx.x;
    const int part = in_tail ? tail_block % split.parts : 0, parts = in_tail ? split.parts : 1;
    const int first_tile = part * tile_count / parts, end_tile = (part + 1) * tile_count / parts;
    const TileOrigin origin = rasterized_tile_origin<T::kBlockM, T::kBlockN>(block_tile, m, n, group_rows);
    const int row0 = origin.row, col0 = origin.col;
    a += row0 * k;
    b += col0;
    c += row0 * n + col0;

    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int warp_row = warp / T::kWarpsN * T::kWarpM;
    const int warp_col = warp % T::kWarpsN * T::kWarpN;

    // The copies. Thread i copies chunk i % chunks-per-row of row i / chunks-per-row and
    // the same chunk of every kARowsPerPass-th (kBRowsPerPass-th) row below. Those steps
    // are multiples of 8 rows, so all of a thread's chunks share one swizzle: one shared
    // address and one global pointer per operand plus constant offsets, and moving on to
    // the next K tile is one pointer increment.
    constexpr int kAChunksPerRow = T::kBlockK / kChunkValues, kBChunksPerRow = T::kBlockN / kChunkValues;
    constexpr int kARowsPerPass = T::kThreads / kAChunksPerRow, kBRowsPerPass = T::kThreads / kBChunksPerRow;
    static_assert(kARowsPerPass % 8 == 0 && kBRowsPerPass % 8 == 0, "a thread's chunks share a swizzle");
    const int a_row = threadIdx.x / kAChunksPerRow, a_chunk = threadIdx.x % kAChunksPerRow;
    const int b_row = threadIdx.x / kBChunksPerRow, b_chunk = threadIdx.x % kBChunksPerRow;
    const unsigned a_store = shared_base + 2 * swizzled_offset<T::kBlockK>(a_row, a_chunk);
    const unsigned b_store = shared_base + 2 * (T::kATileValues + swizzled_offset<T::kBlockN>(b_row, b_chunk));
    constexpr int kAPasses = T::kAChunks / T::kThreads, kBPasses = T::kBChunks / T::kThreads;

    // kAlignedRows: when K is not whole tiles, tile 0 starts k_start (< 0) values before
    // column 0 of A and row 0 of B, and its chunks there are zero-filled; every later
    // tile is whole. A thread's rows of A past M read row M - 1, its columns of B past N
    // the last 8: a_row_offset[pass] is where its row of pass `pass` starts, relative
    // to its first (with whole tiles, the constant pass * kARowsPerPass * k).
    const int k_start = kEdges == Edges::kAlignedRows && k % T::kBlockK != 0 ? k % T::kBlockK - T::kBlockK : 0;
    int a_row_offset[kAPasses];
#pragma unroll
    for (int pass = 0; pass < kAPasses; ++pass) {
        const int row = a_row + pass * kARowsPerPass;
        a_row_offset[pass] = ((kEdges == Edges::kAlignedRows ? min(row, m - 1 - row0) : row) - a_row) * k;
    }
    const int b_column = kEdges == Edges::kAlignedRows ? min(b_chunk * kChunkValues, n - kChunkValues - col0)
                                                       : b_chunk * kChunkValues;
    const int k_first = k_start + first_tile * T::kBlockK;
    const __nv_bfloat16* a_next = a + a_row * k + a_chunk * kChunkValues + k_first;  // the next K tile to copy
    const __nv_bfloat16* b_next = b + (b_row + k_first) * n + b_column;
    const auto inside_tile0 = [&](int pass) {  // whether chunk `pass` of tile 0 lies at K >= 0
        if (pass < kAPasses) return k_start + a_chunk * kChunkValues >= 0;
        return k_start + b_row + (pass - kAPasses) * kBRowsPerPass >= 0;
    };

    // The copies of K tile `tile` into buffer `stage`, in kCopyPieces pieces (one per
    // k16 step, so that the loads of a tile do not leave in one burst); piece `piece` of
    // the tile. From end_tile on they only zero-fill, so the main loop needs no branch
    // around them. may_be_tile0 (std::true_type in the prologue only) keeps tile 0's
    // test out of the main loop.
    constexpr int kCopyPieces = T::kBlockK / 16;
    const auto copy_piece = [&](int tile, int stage, int piece, auto may_be_tile0) {
        if constexpr (kEdges == Edges::kAnyShape) {
            if (piece != 0) return;  // shapes off the tile copy whole tiles, through registers
            const int k0 = tile * T::kBlockK;
            __nv_bfloat16* const a_tile = shared + stage * T::kBufferValues;
            __nv_bfloat16* const b_tile = a_tile + T::kATileValues;
#pragma unroll
            for (int pass = 0; pass < kAPasses; ++pass) {
                const int row = a_row + pass * kARowsPerPass, col = k0 + a_chunk * kChunkValues;
                alignas(16) __nv_bfloat16 values[kChunkValues];
#pragma unroll
                for (int e = 0; e < kChunkValues; ++e)
                    values[e] = (row0 + row < m && col + e < k) ? a[row * k + col + e] : __float2bfloat16(0.0f);
                *reinterpret_cast<uint4*>(a_tile + swizzled_offset<T::kBlockK>(row, a_chunk)) =
                    *reinterpret_cast<const uint4*>(values);
            }
#pragma unroll
            for (int pass = 0; pass < kBPasses; ++pass) {
                const int row = b_row + pass * kBRowsPerPass, col = b_chunk * kChunkValues;
                alignas(16) __nv_bfloat16 values[kChunkValues];
#pragma unroll
                for (int e = 0; e < kChunkValues; ++e)
                    values[e] = (k0 + row < k && col0 + col + e < n) ? b[(k0 + row) * n + col + e]
                                                                      : __float2bfloat16(0.0f);
                *reinterpret_cast<uint4*>(b_tile + swizzled_offset<T::kBlockN>(row, b_chunk)) =
                    *reinterpret_cast<const uint4*>(values);
            }
        } else {
            // A zero-fill reads nothing but is still given a readable address: the block's
            // first value of A or B (past the last tile, or before K = 0 in tile 0).
            constexpr bool kTestTile0 = kEdges == Edges::kAlignedRows && decltype(may_be_tile0)::value;
            const bool tile_valid = tile < end_tile;
            const __nv_bfloat16* const a_from = tile_valid ? a_next : a;
            const __nv_bfloat16* const b_from = tile_valid ? b_next : b;
#pragma unroll
            for (int pass = 0; pass < kAPasses + kBPasses; ++pass) {
                if (pass * kCopyPieces / (kAPasses + kBPasses) != piece) continue;
                const bool valid = tile_valid && (!kTestTile0 || tile != 0 || inside_tile0(pass));
                const bool edge = kTestTile0 && !valid;
                if (pass < kAPasses)
                    cp_async_16_or_zero(a_store + stage * kBufferBytes + pass * kARowsPerPass * T::kBlockK * 2,
                                        edge ? a : a_from + a_row_offset[pass], valid);
                else
                    cp_async_16_or_zero(
                        b_store + stage * kBufferBytes + (pass - kAPasses) * kBRowsPerPass * T::kBlockN * 2,
                        edge ? b : b_from + (pass - kAPasses) * kBRowsPerPass * n, valid);
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
    const int a_swizzle = half ^ (kAChunksPerRow == 4 ? (lane >> 1) & 3 : lane & 7);
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
            copy_piece(first_tile + stage, stage, piece, std::true_type{});
        cp_async_commit();  // one group per K tile, real or zero-fill, keeps the wait counts fixed
    }
    cp_async_wait<T::kStages - 2>();
    __syncthreads();
    int read_stage = 0, write_stage = T::kStages - 1;
#pragma unroll
    for (int mi = 0; mi < T::kMTiles; ++mi) load_fragment_row(fragments[0], 0, 0, mi);

    for (int t = first_tile; t < end_tile; ++t) {
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
    if (in_tail) {  // the sums go to this block's slot, whole, for sum_partials_kernel
        float* const slot = split.partials + static_cast<std::size_t>(tail_block) * T::kBlockM * T::kBlockN;
        for_each_output_pair([&](int row, int col, float v0, float v1) {
            *reinterpret_cast<float2*>(slot + row * T::kBlockN + col) = make_float2(v0, v1);
        });
        return;
    }
    for_each_output_pair([&](int row, int col, float v0, float v1) {
        if constexpr (kEdges == Edges::kAnyShape) {
            if (row0 + row >= m) return;
            for (int e = 0; e < 2; ++e)
                if (col0 + col + e < n) {
                    float& out = c[row * n + col + e];
                    out = scale_and_accumulate(e == 0 ? v0 : v1, problem.alpha, problem.beta, out);
                }
        } else if (kEdges == Edges::kWholeTiles || (row0 + row < m && col0 + col < n)) {
            // With kAlignedRows, N and col are even: both outputs or neither.
            store_scaled_float2(c + row * n + col, v0, v1, problem.alpha, problem.beta);
        }
    });
}

// The split tail's second half: C = alpha * (the sum of a tile's parts, in part order) +
// beta * C. Tile blockIdx.y of the tail, four values per thread: enough blocks to keep
// the memory busy (a block per tile took 40 us at 3072, longer than the parts).
constexpr int kSumThreads = 256;

template <class Config, Edges kEdges>
__global__ void __launch_bounds__(kSumThreads) sum_partials_kernel(GemmProblem problem, float* c,
                                                                   int group_rows, TailSplit split) {
    using T = Config;
    constexpr int kTileValues = T::kBlockM * T::kBlockN;
    static_assert(kTileValues / 4 % kSumThreads == 0, "the blocks cover a tile exactly");
    const int m = problem.shape.m, n = problem.shape.n;
    const TileOrigin origin =
        rasterized_tile_origin<T::kBlockM, T::kBlockN>(split.full_tiles + blockIdx.y, m, n, group_rows);
    const int i = blockIdx.x * kSumThreads + threadIdx.x;
    const int row = i / (T::kBlockN / 4), col = i % (T::kBlockN / 4) * 4;
    const int out_row = origin.row + row, out_col = origin.col + col;
    if (out_row >= m || out_col >= n) return;
    const float* const slots = split.partials + static_cast<std::size_t>(blockIdx.y) * split.parts * kTileValues;
    float sum[4] = {};
    for (int part = 0; part < split.parts; ++part) {
        const float4 v = load_float4(slots + part * kTileValues + row * T::kBlockN + col);
        sum[0] += v.x;
        sum[1] += v.y;
        sum[2] += v.z;
        sum[3] += v.w;
    }
    float* const out = c + out_row * n + out_col;
    if constexpr (kEdges == Edges::kAnyShape) {
        for (int e = 0; e < 4 && out_col + e < n; ++e)
            out[e] = scale_and_accumulate(sum[e], problem.alpha, problem.beta, out[e]);
    } else {  // N is a multiple of 8: rows 16-byte aligned, and four outputs or none
        store_scaled_float4(out, sum, problem.alpha, problem.beta);
    }
}

// Whether and how to split the tiles of the last wave (see TailSplit). Only for blocks that
// have an SM each, only where at most half the SMs would have a tile in the last wave,
// into as many parts as fill the SMs at most once, each part at least kMinKTilesPerPart
// K tiles deep; and only where each tile's K loop is long against the tiles to split: at
// least kMinKTiles K tiles and twice as many as the tail has tiles. That last rule is
// fitted to what ./sgemm 14 measured on the H100 against the kernel without the split
// (K tiles, tail tiles: % of cuBLAS, with against without):
//   gains:  48, 24: 54.0 / 50.8 (3072^3)    80, 8: 59.1 / 55.5 (5120^3)
//           64, 4: 53.5 / 39.7 (2176 x 2048 x 4096)   32, 4: 51.8 / 43.3 (x 2048)
//           128, 4: 63.7 / 43.3 (4352 x 1024 x 8192)
//   losses: 32, 24: 50.6 / 51.0 (3072 x 3072 x 2048)  32, 32: 60.9 / 62.0 (8192 x 4352 x 2048)
//           16, 24: 46.4 / 54.0 (3072 x 3072 x 1024)   8, 4: 44.4 / 55.7 (2176 x 2048 x 512)
//           8, 8: 61.0 / 67.0 (5120 x 5120 x 512)
// A split tail costs more than its share of the K loop: the parts of 4352 x 1024 x 8192
// (4 tiles in 32 parts of 4 K tiles) took 37 us where a whole tile takes 163 (Nsight
// Compute), and adding them up 12 more. Where the last wave is fuller (at 4096 and 8192
// on an H100 it is 88 % and 52 % full), splitting did not pay either, nor for 128x64
// blocks two per SM at 1536 (24 tiles past 264): 39 % of cuBLAS against 44 %.
template <class Config>
constexpr bool kMaySplitTail = Config::kMinBlocksPerSm == 1;

template <class Config>
TailSplit plan_tail_split(const GemmShape& shape, int sms) {
    constexpr int kMinKTiles = 32, kMinKTilesPerPart = 4;
    const int tiles = ceil_div(shape.m, Config::kBlockM) * ceil_div(shape.n, Config::kBlockN);
    const int k_tiles = ceil_div(shape.k, Config::kBlockK);
    const TailSplit none{tiles, 1, nullptr};
    const int tail = sms > 0 ? tiles % sms : 0;
    if (!kMaySplitTail<Config> || tiles < sms || tail == 0 || 2 * tail > sms) return none;
    if (k_tiles < kMinKTiles || k_tiles < 2 * tail) return none;
    const int parts = std::min(sms / tail, k_tiles / kMinKTilesPerPart);
    return parts < 2 ? none : TailSplit{tiles - tail, parts, nullptr};
}

template <class Config, Edges kEdges>
void launch_multistage_kernel(const GemmProblem& problem, const __nv_bfloat16* a, const __nv_bfloat16* b,
                              float* c, int group_rows, cudaStream_t stream) {
    TailSplit split = plan_tail_split<Config>(problem.shape, current_sm_count());
    const int tiles = ceil_div(problem.shape.m, Config::kBlockM) * ceil_div(problem.shape.n, Config::kBlockN);
    const int tail_tiles = tiles - split.full_tiles;
    if (split.parts > 1) {
        // Stream-ordered: the slots are taken when the stream gets here and given back
        // once sum_partials_kernel is done; without them, no tile is split.
        const std::size_t slot_bytes = sizeof(float) * Config::kBlockM * Config::kBlockN;
        if (cudaMallocAsync(&split.partials, slot_bytes * tail_tiles * split.parts, stream) != cudaSuccess) {
            (void)cudaGetLastError();
            split = TailSplit{tiles, 1, nullptr};
        }
    }
    // Blocks that may split their tile take a few registers more, and whole tiles lost 1-2 %
    // of their speed to them: problems that split nothing run the kernel without, and
    // configs that never split have it compiled without only.
    const auto kernel = split.parts > 1 ? multistage_kernel<Config, kEdges, kMaySplitTail<Config>>
                                        : multistage_kernel<Config, kEdges, false>;
    if constexpr (Config::kSharedBytes > 48 * 1024)  // above 48 KB only on request
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(Config::kSharedBytes));
    const int blocks = split.parts > 1 ? split.full_tiles + tail_tiles * split.parts : tiles;
    kernel<<<blocks, Config::kThreads, Config::kSharedBytes, stream>>>(problem, a, b, c, group_rows, split);
    if (split.parts > 1) {
        const dim3 sum_grid(Config::kBlockM * Config::kBlockN / 4 / kSumThreads, tail_tiles);
        sum_partials_kernel<Config, kEdges><<<sum_grid, kSumThreads, 0, stream>>>(problem, c, group_rows, split);
        cudaFreeAsync(split.partials, stream);
    }
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
