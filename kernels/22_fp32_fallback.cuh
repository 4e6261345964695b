// The FP32 path of the split stages (read 22_split_fp16.cu first), which stages 23 and 24
// share: whatever kernel runs, the rows and columns of C that its split's check cannot
// hold are listed (Flagged), and are computed here as stage 10 computes them, by stage
// 10's kernel on the CUDA cores (multiply_tile, 10_tuned.cuh) in one of its tiles, with
// operands of its own (GatheredTile) and a K split of its own (fallback_k_parts). The
// tile is the caller's: stage 10's tuned one where a stage runs alone; where the fp32-tc
// track runs the stage, the one the fp32 track's model chooses for the shape, or the tuned
// one where that fills the GPU (dispatch/fp32_tc.cpp).
//
// Two passes over the lists: the flagged rows of A with every column, then the other rows
// with the flagged columns of B, so that each element of C is computed once; a tile's
// rows (and columns) are gathered through the lists as it loads them. Where at most
// kNarrowColumns columns are flagged, the column pass is not stage 10's: in its tiles those
// columns would be a few of 32-128, and their work the whole problem's (an outlier column in
// eight at 4096 x 64 x 4096: 1.8x SGEMM's time). A pair of threads takes two rows and every
// flagged column (NarrowColumns below), A read once (the fallback there 112 -> 74 us on an
// H200, docs/notes/22_split_fp16.md, session 16). Where every row or
// every column is flagged, the split kernels write nothing and the whole problem is
// stage 10's, launched as stage 10's launcher launches it, K in the parts stage 10 would split
// it into (WholeProblemGate), where the fallback's own units would leave K whole. The
// counts are on the GPU: the grids are as large as the work can be, and each block reads
// them (stage 10's kernel through a Gate), so that the host never waits on the check.
//
// Where K is split (few tiles of C), no part sums more than kMostProductsPerPart
// products, and the last of a tile's blocks to finish adds the parts up in order.
// That keeps the sums' error below SGEMM's where SGEMM splits K too: cuBLAS runs 4096 x 64
// x 4096 in 8 parts of 512, and stage 10's parts of 512 there came out at 1.00-1.07x its
// worst element; parts of 256 at 0.62-0.74x (docs/notes/22_split_fp16.md).
#pragma once

#include <algorithm>
#include <cstddef>

#include "10_tuned.cuh"
#include "common/epilogue.cuh"
#include "common/gemm_problem.hpp"
#include "common/launch.cuh"
#include "common/workspace.cuh"

namespace sgemm {

// What the checks tell the fallback: the rows of A in two lists, the ones the split
// cannot hold (flagged) from the front of row_order, the others from its back, and the
// columns of B the split cannot hold. counts: flagged rows, other rows, flagged columns,
// zero before the checks.
struct Flagged {
    int* row_order;        // m
    int* flagged_columns;  // n
    int* counts;           // 3

    // Every row or every column is flagged: the split kernels leave C as it is, and the
    // fallback computes all of it.
    __device__ bool whole(int m, int n) const { return counts[0] == m || counts[2] == n; }
    __device__ void flag_row(int row) const { row_order[atomicAdd(&counts[0], 1)] = row; }
    __device__ void keep_row(int row, int m) const { row_order[m - 1 - atomicAdd(&counts[1], 1)] = row; }
    __device__ void flag_column(int column) const { flagged_columns[atomicAdd(&counts[2], 1)] = column; }
};

constexpr int kMostProductsPerPart = 256;
constexpr int kMostUnitsPerSlot = 2;  // (tile, part) units: the grid, and the partial sums' workspace

// Stage 10's k_parts (`parts`), and where K is split at all, enough parts that none sums more
// than most_k_tiles K tiles (up to kMaxKParts): sums as accurate as SGEMM's, where SGEMM splits
// K too.
__host__ __device__ inline int parts_of_at_most(int parts, int most_k_tiles, int k_tiles) {
    const int accurate = ceil_div(k_tiles, most_k_tiles);
    return parts == 1 || parts >= accurate ? parts : accurate < kMaxKParts ? accurate : kMaxKParts;
}

// k_parts by the 32 lanes of a warp at once, each weighing every 32nd number of parts: the
// same answer (the fewest parts of the least time). A block's first thread ran the loop alone
// while the block's other warps waited (ncu at 4096 x 64 x 4096: 25-31 % of the fallback's
// warps' time at the barrier after it, 7 % with the warp).
__device__ inline int k_parts_by_warp(int tiles, int k_tiles, int slots) {
    if (slots <= 0) return 1;
    int best = 1;
    double best_time = k_parts_time(tiles, k_tiles, slots, 1);
    for (int parts = 2 + threadIdx.x % 32; parts <= kMaxKParts && k_tiles / parts >= kMinKTilesPerPart; parts += 32) {
        const double time = k_parts_time(tiles, k_tiles, slots, parts);
        if (time < best_time) best = parts, best_time = time;
    }
    for (int lanes_apart = 16; lanes_apart > 0; lanes_apart /= 2) {
        const double other_time = __shfl_xor_sync(0xffffffffu, best_time, lanes_apart);
        const int other = __shfl_xor_sync(0xffffffffu, best, lanes_apart);
        if (other_time < best_time || (other_time == best_time && other < best)) best = other, best_time = other_time;
    }
    return best;
}

// The parts K is split into, for `tiles` tiles of Tiles: no part over kMostProductsPerPart
// products where stage 10 would split K at all, within kMostUnitsPerSlot units a slot. On the
// GPU, by a whole warp (k_parts_by_warp).
template <class Tiles>
__host__ __device__ inline int fallback_k_parts(int tiles, int k, int slots) {
    const int k_tiles = ceil_div(k, Tiles::kBlockK);
#ifdef __CUDA_ARCH__
    const int by_time = k_parts_by_warp(tiles, k_tiles, slots);
#else
    const int by_time = k_parts(tiles, k_tiles, slots);
#endif
    const int parts = parts_of_at_most(by_time, kMostProductsPerPart / Tiles::kBlockK, k_tiles);
    return std::max(1, std::min(parts, kMostUnitsPerSlot * slots / tiles));  // at most as many units as that
}

// Rows or columns of a pass: list[0 .. count), or 0 .. count without a list.
struct Lines {
    const int* list;
    int count;
    __device__ int at(int i) const { return list != nullptr ? list[i] : i; }
};

// The narrow column pass: a block takes as many of the other rows as it has threads, and a
// pair of threads two rows and every flagged column, over its part of K: B's flagged columns a
// chunk of K at a time in shared memory, A's rows as float4s, each thread of the pair every
// other one, so that a warp's loads use whole 32-byte sectors (a thread a row used half of each,
// Nsight Compute at 4096 x 64 x 4096). kLoads float4s a thread in flight (16, or 8 where the
// tile's four blocks an SM leave a thread 128 registers). Each thread adds its products in K order,
// and the pair's two sums are added at the end, in parts of at most kMostProductsPerPart
// products where K is split.
constexpr int kNarrowColumns = 16, kNarrowChunk = 128;

template <class Tiles>
struct NarrowColumns {
    static constexpr int kRows = Tiles::kThreads;  // a block's rows
    static constexpr int kLoads = Tiles::kMinBlocksPerSm > 3 ? 8 : 16;
    // A row of B's chunk in shared memory, padded so that a pair's two rows (4 apart) and a
    // quarter warp's LDS.128s fall on different banks.
    static constexpr int kPitch = kNarrowColumns + 4;
    static_assert(kNarrowColumns <= Tiles::kThreadM * Tiles::kThreadN, "a thread's sums fit in the tile's");
    static_assert(kNarrowChunk * kPitch * sizeof(float) <= Tiles::kSharedBytes, "a chunk of B fits");
    static_assert(Tiles::kThreads % kNarrowColumns == 0, "a thread copies one column of B's chunk");

    // The row of the block's that thread `thread` stores: the first of its pair's for the even
    // thread, the second for the odd one.
    static __device__ int stored_row(int thread) { return thread / 2 + thread % 2 * (kRows / 2); }

    // sums[c] = A[row, kk] B[kk, columns[c]] over kk in [first_k, k_end), row =
    // rows.at(first_row + stored_row(threadIdx.x)) (rows past the list's last read its last,
    // and are not stored).
    template <bool kRowsInFloat4s>
    static __device__ void multiply(const float* a, const float* b, const Lines& rows, const Lines& columns,
                                    int first_row, int k, int n, int first_k, int k_end, float* shared,
                                    float (&sums)[kNarrowColumns]) {
        constexpr int kCopies = kNarrowChunk * kNarrowColumns / Tiles::kThreads;
        constexpr int kRowsApart = Tiles::kThreads / kNarrowColumns;
        const int half = threadIdx.x % 2;  // which float4s of K this thread takes: every other one
        const float* a_rows[2];
#pragma unroll
        for (int r = 0; r < 2; ++r)
            a_rows[r] = a + static_cast<std::size_t>(rows.at(min(first_row + stored_row(threadIdx.x - half + r), rows.count - 1))) * k;
        // The column of B this thread copies, and the first of its rows in a chunk.
        const int copied_column = threadIdx.x % kNarrowColumns, first_copied = threadIdx.x / kNarrowColumns;
        const bool copies = copied_column < columns.count;
        const float* const b_column = b + (copies ? columns.at(copied_column) : 0);
        float pair_sums[2][kNarrowColumns] = {};
        for (int chunk = first_k; chunk < k_end; chunk += kNarrowChunk) {
            const int length = min(kNarrowChunk, k_end - chunk);
            float copied[kCopies];  // all of a thread's loads in flight at once
#pragma unroll
            for (int i = 0; i < kCopies; ++i) {
                const int kk = first_copied + i * kRowsApart;
                copied[i] = copies && kk < length ? __ldg(b_column + static_cast<std::size_t>(chunk + kk) * n) : 0.0f;
            }
            __syncthreads();  // the chunk before is read
#pragma unroll
            for (int i = 0; i < kCopies; ++i) shared[(first_copied + i * kRowsApart) * kPitch + copied_column] = copied[i];
            __syncthreads();
            const auto step = [&](float value0, float value1, int kk) {
                const float4* const row_of_b = reinterpret_cast<const float4*>(shared + kk * kPitch);
#pragma unroll
                for (int q = 0; q < kNarrowColumns / 4; ++q) {
                    const float4 quad = row_of_b[q];
                    const float of_b[4] = {quad.x, quad.y, quad.z, quad.w};
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        pair_sums[0][4 * q + e] = fmaf(value0, of_b[e], pair_sums[0][4 * q + e]);
                        pair_sums[1][4 * q + e] = fmaf(value1, of_b[e], pair_sums[1][4 * q + e]);
                    }
                }
            };
            int kk = 0;
            if constexpr (kRowsInFloat4s) {  // K a multiple of 4: the chunk's start and length are too
                constexpr int kPerRow = kLoads / 2;
                for (; kk + 8 * kPerRow <= length; kk += 8 * kPerRow) {
                    float4 values[2][kPerRow];
#pragma unroll
                    for (int l = 0; l < kPerRow; ++l)
#pragma unroll
                        for (int r = 0; r < 2; ++r)
                            values[r][l] = __ldg(reinterpret_cast<const float4*>(a_rows[r] + chunk + kk + 4 * half) + 2 * l);
#pragma unroll
                    for (int l = 0; l < kPerRow; ++l) {
                        const int at = kk + 8 * l + 4 * half;
                        step(values[0][l].x, values[1][l].x, at);
                        step(values[0][l].y, values[1][l].y, at + 1);
                        step(values[0][l].z, values[1][l].z, at + 2);
                        step(values[0][l].w, values[1][l].w, at + 3);
                    }
                }
            }
            for (; kk < length; ++kk)  // the same float4s of K as above, a value at a time
                if (kk / 4 % 2 == half) step(__ldg(a_rows[0] + chunk + kk), __ldg(a_rows[1] + chunk + kk), kk);
        }
        // The pair's sums added (the same sum in both threads); each thread keeps its row's.
#pragma unroll
        for (int c = 0; c < kNarrowColumns; ++c) {
            const float first = pair_sums[0][c] + __shfl_xor_sync(0xffffffffu, pair_sums[0][c], 1);
            const float second = pair_sums[1][c] + __shfl_xor_sync(0xffffffffu, pair_sums[1][c], 1);
            sums[c] = half ? second : first;
        }
    }
};

// A tile's operands, gathered (stage 10's Operands, 10_tuned.cuh): the tile's rows of A
// are rows.at(first_row + r); its columns of B columns.at(first_column + j) in the column
// pass (kColumnList), B's columns from first_column on in the row pass. Rows past the
// pass's last are read as its last row (computed, never stored), so that A's loads need
// no checks.
template <bool kColumnList>
struct GatheredTile {
    const float* a;
    const float* b;
    Lines rows, columns;
    int first_row, first_column;
    int k, n;

    __device__ OperandRow a_row(int row) const {
        return OperandRow{a + static_cast<std::size_t>(rows.at(min(first_row + row, rows.count - 1))) * k, true};
    }
    __device__ int b_column(int column) const {
        const int j = first_column + column;
        if constexpr (kColumnList) return j < columns.count ? columns.at(j) : -1;
        return j < n ? j : -1;
    }
    __device__ const float* b_row(int kk) const { return b + static_cast<std::size_t>(kk) * n; }
};

// A block's unit of the fallback's work: the row pass's tiles, then the column pass's,
// each split into `parts` parts of K, one block a (tile, part). The first warp finds it (from
// the counts, the same in every block) and leaves it in shared memory, from where the
// threads read it before and after the main loop: kept in registers across the loop, it
// would take them from stage 10's schedule, which needs nearly all 255.
struct FallbackUnit {
    bool exists;      // the grid has more blocks than the plan has units
    bool whole;       // C holds C0 (the split wrote nothing); else beta C0 where the fallback writes
    bool row_pass;    // rows x every column of C; else other rows x the flagged columns
    bool narrow;      // the column pass of few columns: NarrowColumns, not stage 10's tile
    Lines rows, columns;
    TileOrigin origin;  // in the pass's lines
    int tile, tiles, part, parts;

};

template <class Tiles>
__device__ inline FallbackUnit fallback_unit(const GemmShape& shape, const Flagged& flagged, int slots, int block,
                                             bool whole_elsewhere) {
    constexpr int kBlockM = Tiles::kBlockM, kBlockN = Tiles::kBlockN;
    FallbackUnit u;
    u.whole = flagged.whole(shape.m, shape.n);
    u.exists = u.whole ? !whole_elsewhere : flagged.counts[0] > 0 || flagged.counts[2] > 0;
    if (!u.exists) return u;  // the usual case, found before the plan's arithmetic
    const int flagged_rows = u.whole ? shape.m : flagged.counts[0];
    const Lines flagged_lines{u.whole ? nullptr : flagged.row_order, flagged_rows};
    const Lines other_rows{u.whole ? nullptr : flagged.row_order + flagged_rows, shape.m - flagged_rows};
    const Lines flagged_columns{u.whole ? nullptr : flagged.flagged_columns, u.whole ? 0 : flagged.counts[2]};
    const int row_pass_tiles = ceil_div(flagged_lines.count, kBlockM) * ceil_div(shape.n, kBlockN);
    const bool narrow = flagged_columns.count <= kNarrowColumns;
    u.tiles = row_pass_tiles + (narrow ? ceil_div(other_rows.count, NarrowColumns<Tiles>::kRows)
                                       : ceil_div(other_rows.count, kBlockM) * ceil_div(flagged_columns.count, kBlockN));
    u.parts = u.tiles > 0 ? fallback_k_parts<Tiles>(u.tiles, shape.k, slots) : 1;
    u.exists = block < u.tiles * u.parts;
    u.part = block / max(u.tiles, 1), u.tile = block % max(u.tiles, 1);
    u.row_pass = u.tile < row_pass_tiles;
    u.narrow = !u.row_pass && narrow;
    u.rows = u.row_pass ? flagged_lines : other_rows;
    u.columns = u.row_pass ? Lines{nullptr, shape.n} : flagged_columns;
    if (u.narrow)
        u.origin = TileOrigin{(u.tile - row_pass_tiles) * NarrowColumns<Tiles>::kRows, 0};
    else
        u.origin = rasterized_tile_origin<kBlockM, kBlockN>(u.row_pass ? u.tile : u.tile - row_pass_tiles,
                                                           u.rows.count, u.columns.count, kTunedGroupRows);
    return u;
}

// Where the parts of a split K meet: a slot of a block's sums for each (tile, part) unit,
// and for each tile the number of its parts done (zero between launches).
struct FallbackWorkspace {
    float* partials;
    int* arrivals;
};

// One block a unit, of a grid as large as any plan can need: the blocks past the plan's
// units return at once. A tile's sums are stored once its K is whole: at once, or, where K
// is split, by the block that finishes the tile's last part, which adds the parts' slots
// up in part order (as stage 10's sum_k_parts_kernel does). C as the split left it: beta
// C0 where it left the flagged rows and columns (so alpha A B is added to it), or C0 where
// the whole problem is here.
template <class Tiles>
__global__ void __launch_bounds__(Tiles::kThreads, Tiles::kMinBlocksPerSm)
    fp32_fallback_kernel(GemmProblem problem, const float* a, const float* b, float* c, Flagged flagged, int slots,
                         bool whole_elsewhere, FallbackWorkspace workspace) {
    using T = Tiles;
    // The unit after stage 10's buffers: static shared memory before them would move them
    // off the 128-byte lines their float4 loads are laid out on.
    extern __shared__ float4 shared_storage[];  // float4: 16-byte alignment
    float* const shared = reinterpret_cast<float*>(shared_storage);
    FallbackUnit& unit = *reinterpret_cast<FallbackUnit*>(shared + T::kSharedBytes / sizeof(float));
    if (threadIdx.x < 32) {  // the first warp, all of whose lanes weigh the parts of K
        const FallbackUnit found = fallback_unit<T>(problem.shape, flagged, slots, blockIdx.x, whole_elsewhere);
        if (threadIdx.x == 0) unit = found;
    }
    __syncthreads();
    if (!unit.exists) return;

    const int n = problem.shape.n, k = problem.shape.k;
    float acc[T::kThreadM][T::kThreadN] = {};
    {
        const int k_tiles = ceil_div(k, T::kBlockK);
        const int first_k_tile = unit.part * k_tiles / unit.parts, k_tile_end = (unit.part + 1) * k_tiles / unit.parts;
        __builtin_assume(first_k_tile >= 0);
        if (unit.narrow) {  // a thread a row's sums, the first of acc's
            float sums[kNarrowColumns] = {};
            const int first_k = first_k_tile * T::kBlockK, k_end = min(k_tile_end * T::kBlockK, k);
            if (k % 4 == 0)
                NarrowColumns<T>::template multiply<true>(a, b, unit.rows, unit.columns, unit.origin.row, k, n, first_k,
                                                          k_end, shared, sums);
            else
                NarrowColumns<T>::template multiply<false>(a, b, unit.rows, unit.columns, unit.origin.row, k, n,
                                                           first_k, k_end, shared, sums);
#pragma unroll
            for (int v = 0; v < kNarrowColumns; ++v) acc[v / T::kThreadN][v % T::kThreadN] = sums[v];
        } else if (!unit.row_pass) {  // B's columns gathered from a list: loaded value by value
            const GatheredTile<true> operands{a, b, unit.rows, unit.columns, unit.origin.row, unit.origin.col, k, n};
            if (k % 4 == 0)
                multiply_tile<T, EdgeTests::kBCPerFloat>(operands, k, first_k_tile, k_tile_end, shared, acc);
            else
                multiply_tile<T, EdgeTests::kPerFloat>(operands, k, first_k_tile, k_tile_end, shared, acc);
        } else {  // all of C's columns: the tests stage 10 would make (rows past the pass's are read as its last)
            const GatheredTile<false> operands{a, b, unit.rows, unit.columns, unit.origin.row, unit.origin.col, k, n};
            with_edge_tests<T>(GemmShape{T::kBlockM, n, k}, [&](auto edges) {
                multiply_tile<T, decltype(edges)::value>(operands, k, first_k_tile, k_tile_end, shared, acc);
            });
        }
    }

    if (unit.parts > 1) {
        constexpr int kValues = T::kThreadM * T::kThreadN;  // a thread's sums
        const int values = unit.narrow ? kNarrowColumns : kValues;  // the ones it holds
        const auto slot = [&](int of_part) {
            return workspace.partials + static_cast<std::size_t>(of_part * unit.tiles + unit.tile) * kValues * T::kThreads;
        };
        float* const own = slot(unit.part);
#pragma unroll
        for (int v = 0; v < kValues; ++v)
            if (v < values) own[v * T::kThreads + threadIdx.x] = acc[v / T::kThreadN][v % T::kThreadN];
        __threadfence();
        __syncthreads();  // every thread's sums are out before the tile's count goes up
        bool last = false;
        if (threadIdx.x == 0) {
            last = atomicAdd(&workspace.arrivals[unit.tile], 1) == unit.parts - 1;
            if (last) workspace.arrivals[unit.tile] = 0;
        }
        if (!__syncthreads_or(last)) return;
        __threadfence();
        // Part by part, each value's sum from 0 (a part's loads all in flight at once).
#pragma unroll
        for (int v = 0; v < kValues; ++v) acc[v / T::kThreadN][v % T::kThreadN] = 0.0f;
        for (int p = 0; p < unit.parts; ++p) {
            const float* const sums = slot(p) + threadIdx.x;
#pragma unroll
            for (int v = 0; v < kValues; ++v)
                if (v < values) acc[v / T::kThreadN][v % T::kThreadN] += __ldcg(sums + v * T::kThreads);
        }
    }

    const float beta = unit.whole ? problem.beta : 1.0f;
    if (unit.narrow) {
        const int row = unit.origin.row + NarrowColumns<T>::stored_row(threadIdx.x);
        if (row >= unit.rows.count) return;
        float* const c_row = c + static_cast<std::size_t>(unit.rows.at(row)) * n;
#pragma unroll
        for (int v = 0; v < kNarrowColumns; ++v)
            if (v < unit.columns.count) {
                float& out = c_row[unit.columns.at(v)];
                out = scale_and_accumulate(acc[v / T::kThreadN][v % T::kThreadN], problem.alpha, beta, out);
            }
        return;
    }
    const bool vector = unit.row_pass && n % 4 == 0;  // float4 stores of C, each all inside C or all outside
    const TileOrigin quads = thread_quad_origin<T>();
#pragma unroll
    for (int r = 0; r < T::kThreadM; ++r) {
        const int row = unit.origin.row + quads.row + (r / 4) * T::kQuadStrideM + r % 4;
        if (row >= unit.rows.count) continue;
        float* const c_row = c + static_cast<std::size_t>(unit.rows.at(row)) * n;
#pragma unroll
        for (int q = 0; q < T::kQuadsN; ++q) {
            const int column = unit.origin.col + quads.col + q * T::kQuadStrideN;
            const float quad[4] = {acc[r][4 * q], acc[r][4 * q + 1], acc[r][4 * q + 2], acc[r][4 * q + 3]};
            if (vector) {
                if (column < n) store_scaled_float4(c_row + column, quad, problem.alpha, beta);
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (column + e < unit.columns.count) {
                        float& out = c_row[unit.columns.at(column + e)];
                        out = scale_and_accumulate(quad[e], problem.alpha, beta, out);
                    }
            }
        }
    }
}

// The fallback kernel's shared memory: stage 10's buffers, then the block's unit.
template <class Tiles>
constexpr std::size_t kFallbackSharedBytes = Tiles::kSharedBytes + sizeof(FallbackUnit);

// Where the whole problem falls back and stage 10 would not split its K (C has a wave of
// tiles or more), stage 10's own kernel takes it, gated on the counts: the fallback
// kernel's loop, inlined in a kernel of its own, ran 10 % slower on the H100.
struct WholeProblemGate {
    Flagged flagged;
    int m, n;
    __device__ bool open() const { return flagged.whole(m, n); }
};

template <class Tiles>
bool whole_problem_on_stage_10(const GemmShape& shape, int slots) {
    const int tiles = ceil_div(shape.m, Tiles::kBlockM) * ceil_div(shape.n, Tiles::kBlockN);
    return fallback_k_parts<Tiles>(tiles, shape.k, slots) == 1;
}

// The parts of K the whole problem takes there: stage 10's own (k_parts over its kernel's
// slots). The fallback's units, capped at kMostUnitsPerSlot a slot, left K whole where the
// tiles outnumber the slots: at 2500^3 on graded data (every row flagged) sums of 2500 products,
// 1.73x SGEMM's normwise error at 0.61x its speed; in stage 10's 3 parts 1.00x at 0.67x (an H200,
// results/h200/experiments/fallback_whole_in_parts/).
template <class Tiles>
int whole_problem_parts(const GemmShape& shape) {
    const int tiles = ceil_div(shape.m, Tiles::kBlockM) * ceil_div(shape.n, Tiles::kBlockN);
    return k_parts(tiles, ceil_div(shape.k, Tiles::kBlockK), tile_config_slots<Tiles>());
}

// The fallback kernel's grid: as many blocks as any plan for this shape can have units.
template <class Tiles>
int fallback_blocks(const GemmShape& shape, int slots, bool whole_elsewhere) {
    constexpr int kBlockM = Tiles::kBlockM, kBlockN = Tiles::kBlockN;
    const int tiles = ceil_div(shape.m, kBlockM) * ceil_div(shape.n, kBlockN);
    const int whole_units = whole_elsewhere ? 0 : tiles * fallback_k_parts<Tiles>(tiles, shape.k, slots);
    const int partial_tiles = (ceil_div(shape.m, kBlockM) + 1) * ceil_div(shape.n, kBlockN);  // a part each
    return std::max({whole_units, partial_tiles, kMostUnitsPerSlot * slots});
}

// C = alpha A B + beta C on the rows and columns `flagged` lists, after a split's kernels,
// in stage 10's tile Tiles.
template <class Tiles>
void launch_fp32_fallback_in(const GemmProblem& problem, const float* a, const float* b, float* c,
                             const Flagged& flagged, cudaStream_t stream) {
    using T = Tiles;
    const GemmShape& s = problem.shape;
    const auto kernel = fp32_fallback_kernel<T>;
    if constexpr (kFallbackSharedBytes<T> > 48 * 1024)  // above 48 KB only on request
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(kFallbackSharedBytes<T>));
    static const int slots = std::max(resident_blocks(kernel, T::kThreads, kFallbackSharedBytes<T>), 1);
    const bool whole_on_stage_10 = whole_problem_on_stage_10<T>(s, slots);
    if (whole_on_stage_10)
        launch_tile_config_in_parts<T>(problem, a, b, c, kTunedGroupRows, stream, whole_problem_parts<T>(s),
                                       WholeProblemGate{flagged, s.m, s.n});
    // The partial sums of kMostUnitsPerSlot units a slot, then a count for each tile of
    // either pass (the row pass's tiles and the column pass's cover C and one more row of
    // tiles), zero between launches.
    static GrowingWorkspace workspace("the FP32 fallback's partial sums", /*zeroed=*/true);
    WorkspaceLayout layout;
    const auto partials = layout.add<float>(static_cast<std::size_t>(kMostUnitsPerSlot) * slots * T::kThreadM *
                                            T::kThreadN * T::kThreads);
    const auto arrivals =
        layout.add<int>(static_cast<std::size_t>(ceil_div(s.m, T::kBlockM) + 1) * (ceil_div(s.n, T::kBlockN) + 1));
    void* const base = workspace.at_least(layout.bytes());
    const int blocks = fallback_blocks<T>(s, slots, whole_on_stage_10);
    kernel<<<blocks, T::kThreads, kFallbackSharedBytes<T>, stream>>>(
        problem, a, b, c, flagged, slots, whole_on_stage_10, FallbackWorkspace{partials.in(base), arrivals.in(base)});
}

// The same in stage 10's tile whose Stage10Tile::id (10_tuned.hpp) is `tile`.
// Defined once, in 22_split_fp16.cu, for stages 22, 23 and 24.
void launch_fp32_fallback(const GemmProblem& problem, const float* a, const float* b, float* c, const Flagged& flagged,
                          cudaStream_t stream, int tile);

}  // namespace sgemm
