// The kernel of stage 10 as a template over its tile shapes, so that the tuner
// (src/tools/tuning_candidates.cu, scripts/tune.py) can instantiate many shapes and the
// stage (10_tuned.cu) the winner; and over where a tile's operands come from (Operands), which
// a caller may choose. Read 10_tuned.cu first.
#pragma once

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>

#include "10_tuned.hpp"
#include "common/cp_async.cuh"
#include "common/dependent_launch.cuh"
#include "common/epilogue.cuh"
#include "common/gemm_problem.hpp"
#include "common/launch.cuh"
#include "common/vector_access.cuh"
#include "common/workspace.cuh"

namespace sgemm {

// Block tile BlockM x BlockN, stepping BlockK along K; warp tiles WarpM x WarpN; each
// thread ThreadM x ThreadN outputs as (ThreadM/4) x (ThreadN/4) quads of 4x4 spread
// evenly over its warp tile (the conflict-free pattern of stage 7); Stages shared-memory
// buffers (B runs Stages - 1 tiles ahead, A one tile ahead). MinBlocksPerSm goes to __launch_bounds__, which
// caps registers so that that many blocks fit on an SM. ProductsPerPart: where not 0, a
// thread's sums restart every so many products of K (multiply_tile).
template <int BlockM, int BlockN, int BlockK, int WarpM, int WarpN, int ThreadM, int ThreadN,
          int Stages, int MinBlocksPerSm, int ProductsPerPart = 0>
struct TileConfig {
    static constexpr int kBlockM = BlockM, kBlockN = BlockN, kBlockK = BlockK;
    static constexpr int kWarpM = WarpM, kWarpN = WarpN;
    static constexpr int kThreadM = ThreadM, kThreadN = ThreadN;
    static constexpr int kStages = Stages;
    static constexpr int kMinBlocksPerSm = MinBlocksPerSm;
    static constexpr int kProductsPerPart = ProductsPerPart;

    static constexpr int kWarpsN = kBlockN / kWarpN;
    static constexpr int kThreads = 32 * (kBlockM / kWarpM) * kWarpsN;
    static constexpr int kLanesN = kWarpN / kThreadN;
    static constexpr int kQuadsM = kThreadM / 4, kQuadsN = kThreadN / 4;
    static constexpr int kQuadStrideM = kWarpM / kQuadsM, kQuadStrideN = kWarpN / kQuadsN;
    static constexpr int kAPad = 4;  // see stage 7
    static constexpr int kATileFloats = kBlockK * (kBlockM + kAPad);
    static constexpr int kBufferFloats = kATileFloats + kBlockK * kBlockN;
    static constexpr int kALoads = kBlockM * kBlockK / 4 / kThreads;  // float4s per thread
    static constexpr int kBLoads = kBlockK * kBlockN / 4 / kThreads;
    static constexpr std::size_t kSharedBytes = kStages * sizeof(float) * kBufferFloats;

    static_assert(kThreadM % 4 == 0 && kThreadN % 4 == 0, "threads own whole 4x4 quads");
    static_assert(kProductsPerPart % kBlockK == 0, "a part is whole K tiles");
    static_assert(kBlockK % 2 == 0, "fragment buffers alternate by step parity");
    static_assert(kStages >= 2, "at least one tile in flight while another is used");
    static_assert((kWarpM / kThreadM) * kLanesN == 32, "a warp's lanes cover its tile once");
    static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0, "warps tile the block");
    static_assert(kALoads >= 1 && kALoads * kThreads * 4 == kBlockM * kBlockK, "A tile loads evenly");
    static_assert(kBLoads >= 1 && kBLoads * kThreads * 4 == kBlockK * kBlockN, "B tile loads evenly");

    // Where C's rows need not be 16-byte aligned (bc_per_float), C is stored a row at a time
    // through shared memory (store_by_rows): each warp stages the rows of one of its
    // threads' ThreadM steps, kStepRows rows of its WarpN columns, padded by 16 floats so
    // that a quarter warp's float4 stores fall on every bank.
    static constexpr int kStepRows = 32 / kLanesN, kStagedPitch = kWarpN + 16;
    static_assert(kWarpN % 32 == 0, "a warp stores 32 consecutive columns at a time");
    static_assert(kThreads / 32 * kStepRows * kStagedPitch * sizeof(float) <= kSharedBytes,
                  "the staged rows fit in the pipeline's buffers");
};

// The tuner's pick for the H100 (results/h100-80gb-hbm3/tuning_stage10.md), which stage 10
// runs.
using TunedConfig = TileConfig<128, 128, 8, 64, 64, 8, 16, 3, 2>;
constexpr int kTunedGroupRows = 8;

// Few rows (10_tuned.cu): blocks of 16, 32 and 64 rows by 256 columns, four warps side by
// side, 3 stages, two blocks an SM (the 32-row ones three: what their registers and shared
// memory let an SM hold, by which the fp32 track's model counts waves); a K step of 32 or 16
// keeps a thread's loads of A whole float4s. The 64-row blocks are the tuned ones' warps
// (64x64, 8x16 a thread) in a row. Chosen by hand, not by the tuner, and measured against the
// tuned tiles in the notes. The 16-row blocks restart their sums every 128 products
// (10_tuned.cu, sums in parts).
using Rows16Config = TileConfig<16, 256, 32, 16, 64, 4, 8, 3, 2, 128>;
using Rows32Config = TileConfig<32, 256, 16, 32, 64, 8, 8, 3, 3>;
using Rows64Config = TileConfig<64, 256, 16, 64, 64, 8, 16, 3, 2>;

// Narrow and small C, which a 128 x 128 tile covers with few blocks or mostly outside C
// (the fp32 track chooses them by its model, dispatch/fp32.cpp): 128 x 64 blocks of 64 x 32
// warps, 8 x 8 outputs a thread, three blocks an SM; 128 x 32 and 64 x 64 blocks of 32 x 32
// warps, 8 x 4 outputs a thread, four blocks an SM. Chosen by hand, not by the tuner.
using Columns64Config = TileConfig<128, 64, 16, 64, 32, 8, 8, 3, 3>;
using Columns32Config = TileConfig<128, 32, 16, 32, 32, 8, 4, 3, 4>;
using Small64Config = TileConfig<64, 64, 16, 32, 32, 8, 4, 3, 4>;

// The tiles stage 10's kernel is built in: a tile's Stage10Tile::id (10_tuned.hpp) is its
// place here.
using Stage10TileConfigs =
    std::tuple<TunedConfig, Rows64Config, Rows32Config, Rows16Config, Columns64Config, Columns32Config, Small64Config>;

// launch(Config{}) for the Config whose Stage10Tile::id is `id`; an id of no tile throws, so
// that no launch is left out unseen.
template <class Launch, std::size_t... kIds>
void with_stage10_tile(int id, const Launch& launch, std::index_sequence<kIds...>) {
    ((id == static_cast<int>(kIds) ? launch(std::tuple_element_t<kIds, Stage10TileConfigs>{}) : void()), ...);
}
template <class Launch>
void with_stage10_tile(int id, const Launch& launch) {
    if (id < 0 || id >= static_cast<int>(std::tuple_size_v<Stage10TileConfigs>))
        throw std::logic_error("stage 10 was given a tile not of its own");
    with_stage10_tile(id, launch, std::make_index_sequence<std::tuple_size_v<Stage10TileConfigs>>{});
}

// A split of K (10_tuned.cu): part p of `parts` (blockIdx.y) sums K tiles
// [p tiles / parts, (p + 1) tiles / parts) of its tile of C into partials + p M N, an
// M x N matrix, and sum_k_parts_kernel adds the parts up in order.
struct KSplit {
    int parts;        // 1: K is not split, and C is written directly
    float* partials;  // parts M x N matrices
};

// The number of parts that finishes soonest, if the GPU runs `slots` blocks at once: the
// time of `tiles * parts` blocks of k_tiles / parts K tiles each, in whole waves, where
// each part adds kPartCost to the time for its partial sums and their sum; each part keeps
// at least kMinKTilesPerPart K tiles. Whole waves of whole tiles are never split.
constexpr int kMaxKParts = 64, kMinKTilesPerPart = 16;
constexpr double kPartCost = 0.03;

// The time k_parts weighs for `parts` parts.
__host__ __device__ inline double k_parts_time(int tiles, int k_tiles, int slots, int parts) {
    const long long waves = (static_cast<long long>(tiles) * parts + slots - 1) / slots;
    return static_cast<double>(waves) * ceil_div(k_tiles, parts) * (parts > 1 ? 1.0 + kPartCost * parts : 1.0);
}

__host__ __device__ inline int k_parts(int tiles, int k_tiles, int slots) {
    if (slots <= 0) return 1;
    int best = 1;
    for (int parts = 2; parts <= kMaxKParts && k_tiles / parts >= kMinKTilesPerPart; ++parts)
        if (k_parts_time(tiles, k_tiles, slots, parts) < k_parts_time(tiles, k_tiles, slots, best)) best = parts;
    return best;
}

// Where a block's tile of C takes its operands from (multiply_tile's Operands):
//   a_row(r): the row of A that is the tile's row r, and whether the problem has it;
//   b_column(j): the column of B that is the tile's column j, -1 where the problem has none
//     (with float4 loads of B, where !bc_per_float, columns j to j + 3 are consecutive);
//   b_row(kk): B's row kk; n: the length of B's rows.
// Each thread finds its rows and columns once, before the main loop, not at every K tile.
// Stage 10 multiplies the rectangle of A and B under its tile (TileRectangle).
struct OperandRow {
    const float* values;
    bool exists;
};

struct TileRectangle {
    const float* a;
    const float* b;
    int row0, col0;  // the tile's corner
    int m, n, k;

    __device__ OperandRow a_row(int row) const { return OperandRow{a + (row0 + row) * k, row0 + row < m}; }
    __device__ int b_column(int column) const { return col0 + column < n ? col0 + column : -1; }
    __device__ const float* b_row(int kk) const { return b + kk * n; }
};

// The rectangle with the tile's rows past A's and columns past B's read as its first row and
// column (computed, never stored): its loads need no tests where K is whole tiles and rows
// start 16-byte aligned, on C's edges as inside.
struct TileRectangleReadInside : TileRectangle {
    __device__ OperandRow a_row(int row) const { return TileRectangle::a_row(row0 + row < m ? row : 0); }
    __device__ int b_column(int column) const { return TileRectangle::b_column(col0 + column < n ? column : 0); }
};

// What a block tests at the edges of the matrices. A's rows are K floats long, B's and C's
// N: where one is a multiple of 4 and the other not, its operands keep their float4s.
//   kNone: the shape is whole tiles; loads and stores are float4s, nothing tested.
//   kPerFloat4: K and N are multiples of 4, so every row starts 16-byte aligned and a
//     float4 of A, B or C lies all inside the matrix or all outside: float4 loads and
//     stores, each tested once (zeros outside); where K is whole tiles and a block lies
//     inside C, the loads of every block as kNone's (TileRectangleReadInside).
//   kAPerFloat: N is a multiple of 4, K not: A's values are tested and loaded alone, B's
//     and C's float4s as kPerFloat4 tests them.
//   kBCPerFloat: K is a multiple of 4, N not: A's float4s as kPerFloat4, B's and C's
//     values alone.
//   kPerFloat: any shape: every value is tested and loaded or stored alone.
enum class EdgeTests { kNone, kPerFloat4, kAPerFloat, kBCPerFloat, kPerFloat };

__host__ __device__ constexpr bool a_per_float(EdgeTests e) {
    return e == EdgeTests::kAPerFloat || e == EdgeTests::kPerFloat;
}
__host__ __device__ constexpr bool bc_per_float(EdgeTests e) {
    return e == EdgeTests::kBCPerFloat || e == EdgeTests::kPerFloat;
}

// Where a thread's 4x4 quads start in the block's tile (the conflict-free pattern of stage 7).
template <class Config>
__device__ __forceinline__ TileOrigin thread_quad_origin() {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    return TileOrigin{warp / Config::kWarpsN * Config::kWarpM + lane / Config::kLanesN * 4,
                      warp % Config::kWarpsN * Config::kWarpN + lane % Config::kLanesN * 4};
}

// The order of a K step's FMAs, acc[r][c] += a[r] b[c], f = 0 .. ThreadM ThreadN - 1. Where a
// thread holds at most 64 sums: strips of kStripColumns columns, the rows down one strip and
// up the next, each row's columns in the order the row before ended on, so that each FMA
// shares an operand with the one before, as in cuBLAS's SGEMM loop; at 8 x 16, row by row.
// The width is the one that ran fastest for those threads on an H200, every plan at the
// squares in turns (docs/notes/10_tuned.md): in strips of two the 8 x 8 tiles (32 x 256,
// 128 x 64) 0.79-0.99x row by row's time; in strips of one the 4 x 8 ones (16 x 256) 0.95-0.99x
// strips of two's, where 8 x 4 moved less than 0.5 % and 8 x 8 lost (32 x 256 at 2048: 1.06x).
// At 8 x 16 the 128 x 128 square lost to rows in strips of two (1.05-1.07x) and of eight
// (1.015-1.02x, though there 64 x 256 and K in two parts ran 0.975-0.99x). Strips cut the FFMAs
// reading two registers of one bank (scripts/sass_loop.py) in every loop but the square's.
template <class T>
struct OuterProductOrder {
    static constexpr int kSums = T::kThreadM * T::kThreadN;
    static constexpr int kStripColumns = kSums <= 32 ? 1 : kSums <= 64 ? 2 : 0;  // 0: row by row
    static constexpr bool kInStrips = kStripColumns > 0;
    static_assert(T::kThreadN % (kInStrips ? kStripColumns : 1) == 0, "a thread's columns make whole strips");
    static constexpr int kStripFmas = kStripColumns * T::kThreadM;
    __host__ __device__ static constexpr int row(int f) {
        if constexpr (!kInStrips) {
            return f / T::kThreadN;
        } else {
            const int strip = f / kStripFmas, down = f % kStripFmas / kStripColumns;
            return strip % 2 ? T::kThreadM - 1 - down : down;
        }
    }
    __host__ __device__ static constexpr int column(int f) {
        if constexpr (!kInStrips) {
            return f % T::kThreadN;
        } else {
            const int strip = f / kStripFmas, down = f % kStripFmas / kStripColumns, across = f % kStripColumns;
            return kStripColumns * strip + (down % 2 ? kStripColumns - 1 - across : across);
        }
    }
};

// acc += the block's tile of A B over K tiles [first_tile, tile_count): the main loop of
// stage 10, its loads tested as kEdges says.
template <class Config, EdgeTests kEdges, class Operands>
__device__ __forceinline__ void multiply_tile(const Operands& tile, int k, int first_tile, int tile_count,
                                              float* shared, float (&acc)[Config::kThreadM][Config::kThreadN]) {
    using T = Config;
    const TileOrigin quad = thread_quad_origin<T>();
    const int quad_row = quad.row, quad_col = quad.col;

    const auto buffer_of = [&](int tile_index) { return shared + (tile_index % T::kStages) * T::kBufferFloats; };

    // A goes through registers: 128-bit coalesced loads, then four 32-bit stores that
    // transpose it into a_tile[k][m] (a 4-byte cp.async could transpose too, but the
    // tuner measured it 15-20 % slower: four times the memory requests). Where A's rows
    // need not be 16-byte aligned (a_per_float), the same four values are loaded alone.
    // (Loading them by consecutive lanes along A's rows, as B's below, ran 10-20 % slower:
    // docs/notes/10_tuned.md.)
    float4 a_next[T::kALoads];
    OperandRow a_rows[T::kALoads];
#pragma unroll
    for (int j = 0; j < T::kALoads; ++j) a_rows[j] = tile.a_row((threadIdx.x + j * T::kThreads) / (T::kBlockK / 4));
    const auto load_a = [&](int tile_index) {
#pragma unroll
        for (int j = 0; j < T::kALoads; ++j) {
            const int f = threadIdx.x + j * T::kThreads;
            const int col = tile_index * T::kBlockK + f % (T::kBlockK / 4) * 4;
            const OperandRow& row = a_rows[j];
            if constexpr (a_per_float(kEdges)) {
                float v[4];
#pragma unroll
                for (int e = 0; e < 4; ++e) v[e] = row.exists && col + e < k ? row.values[col + e] : 0.0f;
                a_next[j] = make_float4(v[0], v[1], v[2], v[3]);
            } else if constexpr (kEdges == EdgeTests::kNone) {
                a_next[j] = load_float4(row.values + col);
            } else {
                a_next[j] = row.exists && col < k ? load_float4(row.values + col) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            }
        }
    };
    const auto store_a = [&](int tile_index) {
        float* const a_tile = buffer_of(tile_index);  // [kBlockK][kBlockM + kAPad]
#pragma unroll
        for (int j = 0; j < T::kALoads; ++j) {
            const int f = threadIdx.x + j * T::kThreads;
            const int row = f / (T::kBlockK / 4);
            const int col = f % (T::kBlockK / 4) * 4;
            const int stride = T::kBlockM + T::kAPad;
            a_tile[(col + 0) * stride + row] = a_next[j].x;
            a_tile[(col + 1) * stride + row] = a_next[j].y;
            a_tile[(col + 2) * stride + row] = a_next[j].z;
            a_tile[(col + 3) * stride + row] = a_next[j].w;
        }
    };
    // B needs no transpose: it is copied asynchronously, a float4 at a time, zeros outside.
    // Where its rows need not be 16-byte aligned (bc_per_float), a float at a time, by
    // consecutive lanes along a row: value i of a thread is the tile's element i kThreads +
    // threadIdx.x, in one of kBColumnsHeld columns. A warp's copy then touches 128
    // consecutive bytes, where a float4's pattern a float at a time touches 512 with gaps,
    // four times over. A value past K's rows or B's columns is copied as a zero from inside
    // B: each column's address (clamped to B's first) at the thread's first row, once a K
    // tile, plus the value's row offset clamped to K's last row, whatever the tests say. On an
    // H200 that took the fp32 track's problems with N odd to 0.91-0.93x the time of choosing
    // each address after its tests; reading past-B columns as B's first (lanes on one
    // address) and pointers stepped down B (1.06x on the 128 x 128 tile) did not pay
    // (docs/notes/10_tuned.md).
    constexpr bool kBAlone = bc_per_float(kEdges);
    static_assert(T::kBlockN % T::kThreads == 0 || T::kThreads % T::kBlockN == 0,
                  "a thread's values alone of B fall in a few columns");
    constexpr int kBColumnsHeld = !kBAlone ? T::kBLoads : T::kBlockN > T::kThreads ? T::kBlockN / T::kThreads : 1;
    int b_columns[kBColumnsHeld];
#pragma unroll
    for (int j = 0; j < kBColumnsHeld; ++j)
        b_columns[j] = tile.b_column(kBAlone ? (j * T::kThreads + threadIdx.x) % T::kBlockN
                                             : (threadIdx.x + j * T::kThreads) % (T::kBlockN / 4) * 4);
    const auto copy_b = [&](int tile_index) {
        const int k0 = tile_index * T::kBlockK;
        float* const b_tile = buffer_of(tile_index) + T::kATileFloats;  // [kBlockK][kBlockN]
        if constexpr (kBAlone) {
            // Value i: `down` = i / kBColumnsHeld kRowsApart rows below the thread's first row,
            // read from its column's address there plus `down` rows, clamped to K's last row.
            constexpr int kRowsApart = T::kThreads > T::kBlockN ? T::kThreads / T::kBlockN : 1;
            const int first = k0 + static_cast<int>(threadIdx.x) / T::kBlockN;
            const int rows_below = max(k - 1 - first, 0);  // of B, below `first` (clamped at K's last)
            const float* sources[kBColumnsHeld];
#pragma unroll
            for (int j = 0; j < kBColumnsHeld; ++j) sources[j] = tile.b_row(min(first, k - 1)) + max(b_columns[j], 0);
#pragma unroll
            for (int i = 0; i < 4 * T::kBLoads; ++i) {
                const int down = i / kBColumnsHeld * kRowsApart;
                cp_async_4_or_zero(b_tile + i * T::kThreads + threadIdx.x,
                                   sources[i % kBColumnsHeld] + min(down, rows_below) * tile.n,
                                   first + down < k && b_columns[i % kBColumnsHeld] >= 0);
            }
        } else {
#pragma unroll
            for (int j = 0; j < T::kBLoads; ++j) {
                const int f = threadIdx.x + j * T::kThreads;
                const int row = f / (T::kBlockN / 4);
                const int col = f % (T::kBlockN / 4) * 4;
                float* const destination = b_tile + row * T::kBlockN + col;
                if constexpr (kEdges == EdgeTests::kNone) {
                    cp_async_16(destination, tile.b_row(k0 + row) + b_columns[j]);
                } else {
                    const bool valid = k0 + row < k && b_columns[j] >= 0;
                    cp_async_16_or_zero(shared_address(destination),
                                        valid ? tile.b_row(k0 + row) + b_columns[j] : tile.b_row(0), valid);
                }
            }
        }
    };

    // Sums in parts (kProductsPerPart): every kTilesPerPart K tiles a thread adds its sums into
    // running totals, in as many registers more, and starts again from zero.
    constexpr bool kInParts = T::kProductsPerPart > 0;
    constexpr int kTilesPerPart = kInParts ? T::kProductsPerPart / T::kBlockK : 1;
    float totals[kInParts ? T::kThreadM : 1][kInParts ? T::kThreadN : 1] = {};

    // Fragments are double-buffered in registers: the slices for step i + 1 are loaded
    // from shared memory while the FMAs of step i run.
    float a_slice[2][T::kThreadM];
    float b_slice[2][T::kThreadN];
    const auto load_slices = [&](const float* buffer, int i, float (&a_out)[T::kThreadM],
                                 float (&b_out)[T::kThreadN]) {
        const float* a_tile = buffer;
        const float* b_tile = buffer + T::kATileFloats;
#pragma unroll
        for (int q = 0; q < T::kQuadsM; ++q) {
            const float4 v = load_float4(a_tile + i * (T::kBlockM + T::kAPad) + quad_row + q * T::kQuadStrideM);
            a_out[4 * q] = v.x, a_out[4 * q + 1] = v.y, a_out[4 * q + 2] = v.z, a_out[4 * q + 3] = v.w;
        }
#pragma unroll
        for (int q = 0; q < T::kQuadsN; ++q) {
            const float4 v = load_float4(b_tile + i * T::kBlockN + quad_col + q * T::kQuadStrideN);
            b_out[4 * q] = v.x, b_out[4 * q + 1] = v.y, b_out[4 * q + 2] = v.z, b_out[4 * q + 3] = v.w;
        }
    };

    // Prologue: A of the first tile in shared memory, B of the next kStages - 1 in flight.
    load_a(first_tile);
    store_a(first_tile);
#pragma unroll
    for (int stage = 0; stage < T::kStages - 1; ++stage) {
        if (first_tile + stage < tile_count) copy_b(first_tile + stage);
        cp_async_commit();  // one group per tile, empty or not, keeps the wait counts fixed
    }
    cp_async_wait<T::kStages - 2>();
    __syncthreads();
    load_slices(buffer_of(first_tile), 0, a_slice[0], b_slice[0]);

    for (int t = first_tile; t < tile_count; ++t) {
        const bool has_next = t + 1 < tile_count;
        // A of the next tile into registers, B of tile t + kStages - 1 into the buffer
        // that last held tile t - 1 (every thread finished reading it before the
        // barrier that ended tile t - 1). Both are in flight during the math below.
        if (has_next) load_a(t + 1);
        if (t + T::kStages - 1 < tile_count) copy_b(t + T::kStages - 1);
        cp_async_commit();

        const float* buffer = buffer_of(t);
#pragma unroll
        for (int i = 0; i < T::kBlockK; ++i) {
            if (i + 1 < T::kBlockK) {
                load_slices(buffer, i + 1, a_slice[(i + 1) % 2], b_slice[(i + 1) % 2]);
            } else if (has_next) {
                // The barrier comes before the last step's FMAs, not after them: those
                // independent FMAs then cover both the wait at the barrier and the
                // latency of the next tile's first slices.
                store_a(t + 1);
                cp_async_wait<T::kStages - 2>();
                __syncthreads();
                load_slices(buffer_of(t + 1), 0, a_slice[(i + 1) % 2], b_slice[(i + 1) % 2]);
            }
#pragma unroll
            for (int f = 0; f < T::kThreadM * T::kThreadN; ++f) {
                const int r = OuterProductOrder<T>::row(f), col = OuterProductOrder<T>::column(f);
                acc[r][col] += a_slice[i % 2][r] * b_slice[i % 2][col];
            }
        }
        if constexpr (kInParts) {
            if ((t + 1 - first_tile) % kTilesPerPart == 0 && has_next) {
#pragma unroll
                for (int r = 0; r < T::kThreadM; ++r)
#pragma unroll
                    for (int col = 0; col < T::kThreadN; ++col) totals[r][col] += acc[r][col], acc[r][col] = 0.0f;
            }
        }
    }
    if constexpr (kInParts) {  // the last part's sums and the totals of the others
#pragma unroll
        for (int r = 0; r < T::kThreadM; ++r)
#pragma unroll
            for (int col = 0; col < T::kThreadN; ++col) acc[r][col] += totals[r][col];
    }
}

// bc_per_float: C's rows need not start 16-byte aligned, so a thread cannot store its quads
// as float4s; a float at a time, each store of a warp would write 4 bytes in each of 16
// sectors (8 rows, 64 bytes of each), and every sector 4 times over (5238 x 1010 x 20:
// 166 MB of L2 traffic for a C of 21 MB, 66 us where cuBLAS takes 20). Instead each warp
// stages the outputs of one step r of its threads' ThreadM rows in shared memory (kStepRows
// rows of WarpN consecutive columns) and stores them a row at a time, 32 consecutive
// floats per store: store(row, col, value) with row and col within the block's tile.
template <class Config, class Store>
__device__ __forceinline__ void store_by_rows(float* shared, const float (&acc)[Config::kThreadM][Config::kThreadN],
                                              const Store& store) {
    using T = Config;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_row = warp / T::kWarpsN * T::kWarpM, warp_col = warp % T::kWarpsN * T::kWarpN;
    const TileOrigin quads = thread_quad_origin<T>();
    float* const staged = shared + warp * T::kStepRows * T::kStagedPitch;
    __syncthreads();  // every warp is done with the pipeline's buffers
#pragma unroll
    for (int r = 0; r < T::kThreadM; ++r) {
#pragma unroll
        for (int q = 0; q < T::kQuadsN; ++q)
            store_float4(staged + lane / T::kLanesN * T::kStagedPitch + quads.col - warp_col + q * T::kQuadStrideN,
                         make_float4(acc[r][4 * q], acc[r][4 * q + 1], acc[r][4 * q + 2], acc[r][4 * q + 3]));
        __syncwarp();
        // Lane group i's row of step r (thread_quad_origin puts group i's quads 4i rows down).
#pragma unroll
        for (int i = 0; i < T::kStepRows; ++i)
#pragma unroll
            for (int col = lane; col < T::kWarpN; col += 32)
                store(warp_row + 4 * i + (r / 4) * T::kQuadStrideM + r % 4, warp_col + col,
                      staged[i * T::kStagedPitch + col]);
        __syncwarp();
    }
}

// Whether a launch has work (the kernel's Gate): always, for stage 10. A caller that
// learns only on the GPU whether a problem is its own to compute gives a Gate that says so,
// and the blocks return at once where it is not.
struct Ungated {
    __device__ bool open() const { return true; }
};

// kEdges: what loads and stores test at the matrix edges (EdgeTests).
// kSplitK: the block sums part blockIdx.y of K into split.partials (see KSplit).
// group_rows: block rasterization, see 10_tuned.cu.
template <class Config, EdgeTests kEdges, bool kSplitK, class Gate = Ungated>
__global__ void __launch_bounds__(Config::kThreads, Config::kMinBlocksPerSm)
    tuned_kernel(GemmProblem problem, const float* a, const float* b, float* c, int group_rows, KSplit split,
                 Gate gate) {
    using T = Config;
    if (!gate.open()) return;
    // The sum of the parts may be launched as soon as every block has started: its launch is
    // paid while the last blocks run, and it waits for them before it reads their sums.
    if constexpr (kSplitK) allow_dependent_launch();
    extern __shared__ float4 shared_storage[];  // float4: 16-byte alignment
    float* const shared = reinterpret_cast<float*>(shared_storage);

    const int m = problem.shape.m, n = problem.shape.n, k = problem.shape.k;

    const TileOrigin origin = rasterized_tile_origin<T::kBlockM, T::kBlockN>(m, n, group_rows);
    const int row0 = origin.row, col0 = origin.col;
    if constexpr (kSplitK) c = split.partials + static_cast<std::size_t>(blockIdx.y) * m * n;
    c += row0 * n + col0;

    const TileOrigin quads = thread_quad_origin<T>();
    float acc[T::kThreadM][T::kThreadN] = {};

    // This block's K tiles [first_tile, tile_count): all of them, or its part of K.
    const int k_tiles = ceil_div(k, T::kBlockK);
    const int first_tile = kSplitK ? static_cast<int>(blockIdx.y) * k_tiles / split.parts : 0;
    const int tile_count = kSplitK ? (static_cast<int>(blockIdx.y) + 1) * k_tiles / split.parts : k_tiles;
    const TileRectangle tile{a, b, row0, col0, m, n, k};
    // With rows 16-byte aligned and K whole tiles, a launch with blocks inside C and blocks
    // on its edges runs them all on one untested loop: on an untested loop inside and a
    // tested one on the edges, they ran up to twice the time of either loop alone, their
    // warps waiting for instructions ten times as often. Where no block lies inside C (C
    // narrower or shorter than the tile) the launch has one loop already, and keeps the
    // tested one: the untested one there ran 14-26 % slower on 16 x 256 blocks of 1-12 rows
    // (docs/notes/10_tuned.md).
    if (kEdges == EdgeTests::kPerFloat4 && k % T::kBlockK == 0 && m >= T::kBlockM && n >= T::kBlockN)
        multiply_tile<T, EdgeTests::kNone>(TileRectangleReadInside{tile}, k, first_tile, tile_count, shared, acc);
    else
        multiply_tile<T, kEdges>(tile, k, first_tile, tile_count, shared, acc);
    if constexpr (bc_per_float(kEdges)) {
        store_by_rows<T>(shared, acc, [&](int row, int col, float value) {
            if (row0 + row >= m || col0 + col >= n) return;
            float& out = c[row * n + col];
            out = kSplitK ? value : scale_and_accumulate(value, problem.alpha, problem.beta, out);  // split: the part's sums
        });
    } else {
#pragma unroll
        for (int r = 0; r < T::kThreadM; ++r)
#pragma unroll
            for (int q = 0; q < T::kQuadsN; ++q) {
                const int row = quads.row + (r / 4) * T::kQuadStrideM + r % 4;
                const int col = quads.col + q * T::kQuadStrideN;
                const float quad[4] = {acc[r][4 * q], acc[r][4 * q + 1], acc[r][4 * q + 2], acc[r][4 * q + 3]};
                // A quad inside C, where quads are tested (N a multiple of 4: all of it or none).
                const bool quad_inside = kEdges == EdgeTests::kNone || (row0 + row < m && col0 + col < n);
                if constexpr (kSplitK) {  // the part's sums, as they are
                    if (quad_inside) store_float4(c + row * n + col, make_float4(quad[0], quad[1], quad[2], quad[3]));
                } else if (quad_inside) {
                    store_scaled_float4(c + row * n + col, quad, problem.alpha, problem.beta);
                }
            }
    }
}

// C = alpha * (the sum of the parts, in part order) + beta * C, a value a thread (and the
// grid's size on, where the grid is smaller than C).
constexpr int kPartSumThreads = 256;

// Launched as dependent on the parts' kernel (launch_dependent): it waits for their sums first.
// Gate as the parts' kernel's.
template <int kThreads, class Gate = Ungated>
__global__ void __launch_bounds__(kThreads) sum_k_parts_kernel(GemmProblem problem, KSplit split, float* c, Gate gate) {
    wait_for_prior_kernel();
    if (!gate.open()) return;
    const std::size_t values = static_cast<std::size_t>(problem.shape.m) * problem.shape.n;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; i < values;
         i += static_cast<std::size_t>(gridDim.x) * kThreads) {
        float sum = 0.0f;
        for (int part = 0; part < split.parts; ++part) sum += split.partials[part * values + i];
        c[i] = scale_and_accumulate(sum, problem.alpha, problem.beta, c[i]);
    }
}

template <class Config, EdgeTests kEdges, bool kSplitK = false, class Gate = Ungated>
void launch_tuned_kernel(const GemmProblem& problem, const float* a, const float* b, float* c,
                         int group_rows, cudaStream_t stream, KSplit split = {1, nullptr}, Gate gate = {}) {
    const auto kernel = tuned_kernel<Config, kEdges, kSplitK, Gate>;
    if constexpr (Config::kSharedBytes > 48 * 1024)  // above 48 KB only on request
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(Config::kSharedBytes));
    const int tiles = ceil_div(problem.shape.m, Config::kBlockM) * ceil_div(problem.shape.n, Config::kBlockN);
    kernel<<<dim3(tiles, split.parts), Config::kThreads, Config::kSharedBytes, stream>>>(problem, a, b, c, group_rows,
                                                                                       split, gate);
}

// The partial sums of a split K, kept between calls and grown as problems grow.
inline float* k_split_partials(std::size_t values) {
    static GrowingWorkspace partials("stage 10's partial sums");
    return static_cast<float*>(partials.at_least(values * sizeof(float)));
}

// The blocks of Config's kernel the GPU runs at once.
template <class Config>
int tile_config_slots() {
    static const int slots =
        resident_blocks(tuned_kernel<Config, EdgeTests::kNone, false>, Config::kThreads, Config::kSharedBytes);
    return slots;
}

// EdgeTests as a type, for a launch chosen at run time (with_edge_tests) to pass on as a
// template argument; callable on the GPU, as std::integral_constant's conversion is not.
template <EdgeTests kEdges>
struct EdgeTestsConstant {
    static constexpr EdgeTests value = kEdges;
};

// The tests a shape's blocks need (EdgeTests), passed to `launch` as an EdgeTestsConstant (on
// the host or the GPU).
#pragma nv_exec_check_disable  // the host's launches call it with host lambdas, the GPU's with its own
template <class Config, class Launch>
__host__ __device__ void with_edge_tests(const GemmShape& s, const Launch& launch) {
    const bool whole_tiles = s.m % Config::kBlockM == 0 && s.n % Config::kBlockN == 0 && s.k % Config::kBlockK == 0;
    if (whole_tiles)
        launch(EdgeTestsConstant<EdgeTests::kNone>{});
    else if (s.n % 4 == 0 && s.k % 4 == 0)
        launch(EdgeTestsConstant<EdgeTests::kPerFloat4>{});
    else if (s.n % 4 == 0)
        launch(EdgeTestsConstant<EdgeTests::kAPerFloat>{});
    else if (s.k % 4 == 0)
        launch(EdgeTestsConstant<EdgeTests::kBCPerFloat>{});
    else
        launch(EdgeTestsConstant<EdgeTests::kPerFloat>{});
}

// Config's kernel with the tests the shape needs (with_edge_tests). K is split into
// `parts` (at most one a K tile), and the parts are added up after. A Gate other than
// Ungated (a caller that learns on the GPU whether the problem is its own) closes both
// kernels; the sum's grid is then at most kMostGatedSumBlocks, so that a closed gate costs
// few blocks.
constexpr int kMostGatedSumBlocks = 1024;

template <class Config, class Gate = Ungated>
void launch_tile_config_in_parts(const GemmProblem& problem, const float* a, const float* b, float* c,
                                 int group_rows, cudaStream_t stream, int parts, Gate gate = {}) {
    const GemmShape& s = problem.shape;
    parts = std::max(1, std::min(parts, ceil_div(s.k, Config::kBlockK)));
    if (parts == 1) {
        with_edge_tests<Config>(s, [&](auto edges) {
            launch_tuned_kernel<Config, decltype(edges)::value, false, Gate>(problem, a, b, c, group_rows, stream,
                                                                            KSplit{1, nullptr}, gate);
        });
        return;
    }
    const KSplit split{parts, k_split_partials(static_cast<std::size_t>(parts) * s.m * s.n)};
    with_edge_tests<Config>(s, [&](auto edges) {
        launch_tuned_kernel<Config, decltype(edges)::value, true, Gate>(problem, a, b, c, group_rows, stream, split,
                                                                       gate);
    });
    const std::size_t values = static_cast<std::size_t>(s.m) * s.n;
    const std::size_t a_value_a_thread = (values + kPartSumThreads - 1) / kPartSumThreads;
    const int blocks = static_cast<int>(std::is_same_v<Gate, Ungated>
                                            ? a_value_a_thread
                                            : std::min<std::size_t>(a_value_a_thread, kMostGatedSumBlocks));
    launch_dependent(sum_k_parts_kernel<kPartSumThreads, Gate>, blocks, kPartSumThreads, 0, stream, problem, split, c,
                     gate);
}

}  // namespace sgemm
