// Stage 30's kernel (read 30_any_tile.cu first): one warp-specialized kernel composed of
// five parts, each a type, as CUTLASS composes its collectives:
//   - the tile and its operands (TokensAsRows, WeightsAsRows): which operand is wgmma's A,
//     how each operand's K tile lies in a ring stage, how TMA fills it, how wgmma reads it;
//   - the producer (produce_k_tiles): TMA into a ring of stages, the operand the cluster
//     shares multicast to every CTA of it (stage 18);
//   - the mainloop (multiply_piece): one to three consumer warpgroups, one or two m64
//     blocks each, wgmma of any N that is a multiple of 16 (common/wgmma_widths.cuh);
//   - the epilogue: C = alpha * sums + beta * C, in FP32 or bf16: unswapped through shared
//     memory and TMA stores (TmaChunkStores, stage 19's chunks; where C's rows are off 16
//     bytes, the mainloop's own stores, Mainloop::AnyNStores), swapped from registers at
//     C[column][row] (DirectStores);
//   - the tile scheduler: stage 20's persistent schedule (20_stream_k.cuh), tiles rasterized,
//     the stacks left after the whole rounds shared out by K (stream-K); or, where the tiles
//     are fewer than the SMs, stage 25's split of each tile's K over the CTAs of a cluster,
//     their sums added through distributed shared memory (ClusterSplit). The plan decides.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "19_persistent_c_stores.cuh"
#include "20_hopper_tuned.cuh"
#include "20_stream_k.cuh"
#include "30_any_tile.hpp"
#include "common/cluster.cuh"
#include "common/cluster_sums.cuh"
#include "common/gemm_problem.hpp"
#include "common/hopper_tiles.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/tma.cuh"
#include "common/tma_prefetch.cuh"
#include "common/wgmma.cuh"
#include "common/wgmma_widths.cuh"

namespace sgemm {
namespace any_tile {

// ---- Operands: one operand's K tile (64 values of K) in a ring stage.

// K-major (K contiguous in the operand's rows: A, M x K): Rows rows of 128 bytes, the
// 128-byte swizzle (hopper_tiles.cuh), in TMA boxes of Rows / Parts rows: a cluster's CTA
// of rank p loads part p, p + Parts, ... and multicasts it.
template <int Rows, int Parts = 1>
struct KMajorTile {
    static constexpr int kBytes = Rows * 128, kParts = Parts, kBoxRows = Rows / Parts;
    static constexpr bool kMnMajor = false;
    static_assert(Rows % (8 * Parts) == 0 && kBoxRows <= 256, "whole 8-row swizzle patterns; a box of 256 rows at most");

    static CUtensorMap map(const __nv_bfloat16* matrix, int rows, int k) {
        return make_bf16_tensor_map(matrix, rows, k, kBoxRows, 64);
    }
    // The k16 step `step` of the 64 (or kColumns) rows from `first`.
    __device__ static std::uint64_t descriptor(const std::uint8_t* tile, int first, int step) {
        return a_step_descriptor(tile, first, step);
    }
    // Part `part` of K tile kt of rows first..: copy(destination, column, row) issues a box.
    template <class Copy>
    __device__ static void load_part(std::uint8_t* tile, int first, int kt, int part, Copy copy) {
        copy(tile + part * kBoxRows * 128, kt * 64, first + part * kBoxRows);
    }
};

// MN-major (the operand's rows run along K: B, K x N): Columns / 64 slabs of 64 rows of K
// by 64 values (hopper_tiles.cuh's kBSlabBytes), one TMA box each; a cluster's CTA of rank p
// loads slabs p, p + Parts, ... and multicasts them.
template <int Columns, int Parts = 1>
struct MnMajorTile {
    static constexpr int kSlabs = Columns / 64, kBytes = kSlabs * kBSlabBytes, kParts = Parts;
    static constexpr bool kMnMajor = true;
    static_assert(Columns % 64 == 0 && kSlabs % Parts == 0, "whole slabs, in equal shares");

    static CUtensorMap map(const __nv_bfloat16* matrix, int k, int n) {
        return make_bf16_tensor_map(matrix, k, n, 64, 64);
    }
    // The k16 step `step` of the values from `first` (a multiple of 64) on.
    __device__ static std::uint64_t descriptor(const std::uint8_t* tile, int first, int step) {
        return b_step_descriptor(tile + first / 64 * kBSlabBytes, step);
    }
    template <class Copy>
    __device__ static void load_part(std::uint8_t* tile, int first, int kt, int part, Copy copy) {
        for (int slab = part; slab < kSlabs; slab += Parts) copy(tile + slab * kBSlabBytes, first + 64 * slab, kt * 64);
    }
};

// ---- The tile: Rows (wgmma's M, 64 x blocks) by Columns (wgmma's N) of sums, and which
// operand gives each side. A cluster stacks ClusterM tiles along the rows; they share the
// columns' operand.

// Stage 20's: the rows are C's rows (A's), the columns C's columns (B's slabs, MN-major).
template <int Rows, int Columns, int ClusterM>
struct TokensAsRows {
    using RowTile = KMajorTile<Rows>;
    using ColumnTile = MnMajorTile<Columns, ClusterM>;
    static constexpr bool kSwapped = false;
    static CUtensorMap row_map(const GemmShape& s, const __nv_bfloat16* a, const __nv_bfloat16*) {
        return RowTile::map(a, s.m, s.k);
    }
    static CUtensorMap column_map(const GemmShape& s, const __nv_bfloat16*, const __nv_bfloat16* b) {
        return ColumnTile::map(b, s.k, s.n);
    }
    __host__ __device__ static int rows(const GemmShape& s) { return s.m; }
    __host__ __device__ static int columns(const GemmShape& s) { return s.n; }
};

// Stage 25's: C^T = B^T A^T. The rows are C's columns (B's slabs, which wgmma reads
// transposed), the columns C's rows (A's, K-major): a token count any multiple of 16.
template <int Rows, int Columns, int ClusterM>
struct WeightsAsRows {
    using RowTile = MnMajorTile<Rows>;
    using ColumnTile = KMajorTile<Columns, ClusterM>;
    static constexpr bool kSwapped = true;
    static CUtensorMap row_map(const GemmShape& s, const __nv_bfloat16*, const __nv_bfloat16* b) {
        return RowTile::map(b, s.k, s.n);
    }
    static CUtensorMap column_map(const GemmShape& s, const __nv_bfloat16* a, const __nv_bfloat16*) {
        return ColumnTile::map(a, s.m, s.k);
    }
    __host__ __device__ static int rows(const GemmShape& s) { return s.n; }
    __host__ __device__ static int columns(const GemmShape& s) { return s.m; }
};

// A kernel's configuration: the tile (Consumers warpgroups of MBlocks m64 blocks each, by
// Columns), its orientation and cluster; the ring as deep as shared memory holds. A stage
// holds the operands' K tiles and StageExtraBytes beside them, for what a mainloop's producer
// part loads with them (none for bf16; stage 31's scales).
template <template <int, int, int> class Orientation_, int Consumers, int MBlocks, int Columns, int ClusterM,
          int StageExtraBytes = 0>
struct AnyTileConfig {
    static constexpr int kRows = 64 * MBlocks * Consumers, kColumns = Columns, kConsumers = Consumers;
    using Orientation = Orientation_<kRows, Columns, ClusterM>;
    using RowTile = typename Orientation::RowTile;
    using ColumnTile = typename Orientation::ColumnTile;
    static constexpr int kStageBytes = RowTile::kBytes + ColumnTile::kBytes;
    // Unswapped, C leaves through shared memory and TMA stores (stage 19's chunks, two
    // buffers a consumer); swapped, straight from registers (DirectStores).
    static constexpr bool kTmaStores = !Orientation::kSwapped;
    static constexpr int kCBufferBytes = kTmaStores ? 2 * kCChunkBytes : 1024;
    static constexpr int kStageExtraBytes = (StageExtraBytes + 127) / 128 * 128;
    static constexpr int kExtraSlotBytes = kStageExtraBytes > 0 ? kStageExtraBytes : 16;
    static constexpr int kStages =
        std::min(12, (226 * 1024 - Consumers * kCBufferBytes) / (kStageBytes + kStageExtraBytes));
    static constexpr int kThreads = 128 * (1 + Consumers);
    // Registers after setmaxnreg: what the launch gives the CTA (65536 at most, in 8s a
    // thread), the producer's few, the rest split among the consumers, who hold the sums.
    static constexpr int kProducerRegisters = Consumers <= 2 ? 56 : 40;
    static constexpr int kLaunchRegisters = std::min(255, 65536 / kThreads) / 8 * 8;
    static constexpr int kConsumerRegisters =
        std::min(232, (kLaunchRegisters * (1 + Consumers) - kProducerRegisters) / Consumers / 8 * 8);
    // The names stream-K's hand-over reads (20_stream_k.cuh): a consumer's part of a tile.
    static constexpr int kMBlocks = MBlocks, kColumnsPerConsumer = Columns, kClusterM = ClusterM;
    static constexpr int kBlockM = kRows, kBlockN = Columns;
    static constexpr bool kSplitColumns = false;
    // K split over a cluster (ClusterSplit): the cluster is the split's, and the tile's sums
    // (C's rows of it, padded) must fit in the ring.
    static constexpr int kSplitSumBytes = 4 * (Orientation::kSwapped ? Columns * (kRows + 8) : kRows * (Columns + 8));
    static constexpr bool kSplitsK = ClusterM == 1 && kSplitSumBytes <= kStages * kStageBytes;

    struct SharedMemory {
        alignas(1024) std::uint8_t ring[kStages][kStageBytes];
        alignas(1024) std::uint8_t c_buffers[Consumers][kCBufferBytes];
        alignas(128) std::uint8_t extras[kStages][kExtraSlotBytes];
        std::uint64_t full[kStages], empty[kStages];
    };
    static constexpr int kSharedBytes = sizeof(SharedMemory);
    __device__ static std::uint8_t* row_tile(std::uint8_t* ring, int stage) { return ring + stage * kStageBytes; }
    template <class Byte>
    __device__ static Byte* stage_extras(Byte* extras, int stage) { return extras + stage * kExtraSlotBytes; }
    __device__ static std::uint8_t* column_tile(std::uint8_t* ring, int stage) {
        return ring + stage * kStageBytes + RowTile::kBytes;
    }

    static_assert(Columns % 16 == 0 && Columns <= 256, "wgmma's N: a multiple of 16 up to 256");
    static_assert(kStages >= 2, "a ring of two stages at least");
    static_assert(kSharedBytes <= 227 * 1024, "an H100 block has at most 227 KB of shared memory");
    static_assert(kConsumerRegisters >= MBlocks * Columns / 2 + 24, "the sums fit in a consumer's registers");
};

// ---- The producer: warpgroup 0's first thread walks its pieces of work (pieces(index,
// piece), false past the last) and fills the ring, K tile by K tile (stage 19's loop), with
// the mainloop's own loads of each K tile beside the operands' (StageLoads: kBytes and
// load(to, tile, kt, full), into the stage's extras).
template <class Config, class StageLoads, class Pieces, class TileOf>
__device__ __forceinline__ void produce_k_tiles(Pieces pieces, unsigned rank, TileOf tile_of, std::uint8_t* ring,
                                                std::uint8_t* extras,
                                                std::uint64_t* full, std::uint64_t* empty,
                                                const CUtensorMap* row_map, const CUtensorMap* column_map,
                                                const StageLoads& stage_loads) {
    static_assert(StageLoads::kBytes <= Config::kStageExtraBytes, "a stage holds the mainloop's loads");
    using RowTile = typename Config::RowTile;
    using ColumnTile = typename Config::ColumnTile;
    constexpr int kStages = Config::kStages, kClusterM = Config::kClusterM;
    int passed = 0;
    WorkPiece piece{};
    for (int index = 0; pieces(index, piece); ++index) {
        const TileOrigin tile = tile_of(piece.stack);
        for (int kt = piece.k_begin; kt < piece.k_end; ++kt, ++passed) {
            const int stage = passed % kStages;
            mbarrier_wait(&empty[stage], (passed / kStages % 2) ^ 1);  // parity 1 first: free
            mbarrier_arrive_expect_tx(&full[stage], Config::kStageBytes + StageLoads::kBytes);
            stage_loads.load(Config::stage_extras(extras, stage), tile, kt, &full[stage]);
            RowTile::load_part(Config::row_tile(ring, stage), tile.row, kt, 0, [&](void* to, int x, int y) {
                tma_load_2d(to, row_map, x, y, &full[stage]);
            });
            // The shared operand: this CTA's parts, into every CTA of the cluster.
            ColumnTile::load_part(Config::column_tile(ring, stage), tile.col, kt, static_cast<int>(rank),
                                  [&](void* to, int x, int y) {
                                      if constexpr (kClusterM > 1)
                                          tma_load_2d_multicast(to, column_map, x, y, &full[stage], (1u << kClusterM) - 1);
                                      else
                                          tma_load_2d(to, column_map, x, y, &full[stage]);
                                  });
        }
    }
}

// ---- The mainloop: a consumer's K tiles of one piece into its sums; each stage goes back
// to the producer (of every CTA of the cluster) once the wgmmas after it are issued.
template <class Config>
__device__ __forceinline__ void multiply_piece(WarpgroupAccumulators<Config::kMBlocks, Config::kColumns>& acc,
                                               const WorkPiece& piece, int first_row, std::uint8_t* ring,
                                               std::uint64_t* full, std::uint64_t* empty, int& passed,
                                               bool signals) {
    using RowTile = typename Config::RowTile;
    using ColumnTile = typename Config::ColumnTile;
    constexpr int kStages = Config::kStages, kMBlocks = Config::kMBlocks, kColumns = Config::kColumns;
    const auto release = [&](int stage) {
        if (!signals) return;
        if constexpr (Config::kClusterM > 1) {
            for (int cta = 0; cta < Config::kClusterM; ++cta) mbarrier_arrive_in_cta(&empty[stage], cta);
        } else {
            mbarrier_arrive(&empty[stage]);
        }
    };
    zero_accumulators<kMBlocks, kColumns>(acc);
    for (int kt = piece.k_begin; kt < piece.k_end; ++kt, ++passed) {
        const int stage = passed % kStages;
        mbarrier_wait(&full[stage], passed / kStages % 2);
        const std::uint8_t* rows = Config::row_tile(ring, stage);
        const std::uint8_t* columns = Config::column_tile(ring, stage);
        wgmma_fence();
#pragma unroll
        for (int step = 0; step < 4; ++step)
#pragma unroll
            for (int i = 0; i < kMBlocks; ++i)
                Wgmma<kColumns>::template mma<__nv_bfloat16, ColumnTile::kMnMajor, RowTile::kMnMajor>(
                    acc[i], RowTile::descriptor(rows, first_row + 64 * i, step), ColumnTile::descriptor(columns, 0, step),
                    true);
        wgmma_commit_group();
        wgmma_wait_group<1>();
        if (kt > piece.k_begin) release((passed - 1) % kStages);
    }
    warpgroup_finish<kMBlocks, kColumns>(acc);
    release((passed - 1) % kStages);
}

// The mainloop as a part the kernel is composed with: Arguments (what it needs beside the
// ring, passed to the kernel), kValuesPerKTile (K's values a ring stage holds: the schedule
// counts K in them), StageMaps (tensor maps of what the producer loads beside the operands, a
// kernel parameter), StageLoads<Config>(&stage_maps) (the producer's loads of a K tile into the
// stage's extras: kBytes and load(to, tile, kt, full)) and Consumer<Config>(arguments,
// problem), made once a consumer, whose run(acc, piece, tile, first_row, ring, extras, full,
// empty, passed, releases) multiplies a piece's K tiles into acc, and kReleasingWarps<Config>:
// how many of a consumer's warps arrive to free a stage (`releases`: the thread that does; 1,
// its first thread, where only its wgmmas read the stage). This stage's: bf16 K tiles of 64
// values, summed in the MMA (multiply_piece), nothing beside them; stage 31 defines FP8's.
struct Bf16Mainloop {
    static constexpr int kValuesPerKTile = 64;
    static constexpr bool kTakesNOff8 = false;  // B's rows are N values: TMA's start 16-byte aligned
    // (a mainloop that takes N off 8 names the stores of its unswapped tiles there: AnyNStores)
    template <class Config>
    static constexpr int kReleasingWarps = 1;
    struct Arguments {};
    struct StageMaps {};
    template <class Config>
    struct StageLoads {
        static constexpr int kBytes = 0;
        __device__ explicit StageLoads(const StageMaps*) {}
        __device__ void load(std::uint8_t*, TileOrigin, int, std::uint64_t*) const {}
    };
    template <class Config>
    struct Consumer {
        __device__ Consumer(const Arguments&, const GemmProblem&) {}
        __device__ __forceinline__ void run(WarpgroupAccumulators<Config::kMBlocks, Config::kColumns>& acc,
                                            const WorkPiece& piece, TileOrigin, int first_row, std::uint8_t* ring,
                                            const std::uint8_t*, std::uint64_t* full, std::uint64_t* empty,
                                            int& passed, bool signals) const {
            multiply_piece<Config>(acc, piece, first_row, ring, full, empty, passed, signals);
        }
    };
};

// ---- The epilogues. One sum into C: row and column of the tile's sums, which are C's
// column and row where the tile is swapped. C = alpha * sum + beta * C, nothing read where
// beta is 0 (BLAS's rule: C may hold NaNs then).
template <bool kSwapped, class COut>
__device__ __forceinline__ void store_sum(const GemmProblem& problem, COut* c, int row, int column, float sum) {
    const int c_row = kSwapped ? column : row, c_column = kSwapped ? row : column;
    if (c_row >= problem.shape.m || c_column >= problem.shape.n) return;
    COut* const out = c + static_cast<std::size_t>(c_row) * problem.shape.n + c_column;
    if constexpr (std::is_same_v<COut, __nv_bfloat16>) {
        float value = problem.alpha * sum;
        if (problem.beta != 0.0f) value += problem.beta * __bfloat162float(*out);
        *out = __float2bfloat16_rn(value);
    } else {
        *out = problem.beta != 0.0f ? problem.alpha * sum + problem.beta * *out : problem.alpha * sum;
    }
}

// Swapped: a consumer's sums, rows first_row.. (C's columns) and columns first_column..
// (C's rows, the tokens) of the tile's sums, into C from registers, one value at a time:
// a thread's two adjacent sums are one column of two rows of C, and a warp's store covers
// 8 adjacent columns of 4 rows (whole 32-byte sectors in FP32).
struct DirectStores {
    template <int kMBlocks, int kColumns, class COut>
    __device__ static void store(const WarpgroupAccumulators<kMBlocks, kColumns>& acc, const GemmProblem& problem,
                                 COut* c, int first_row, int first_column) {
        const int thread = threadIdx.x % 128;
#pragma unroll
        for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
            for (int half = 0; half < 2; ++half)
#pragma unroll
                for (int j = 0; j < kColumns / 8; ++j) {
                    const AccumulatorPosition at = wgmma_accumulator_position(thread, j, half);
#pragma unroll
                    for (int p = 0; p < 2; ++p)
                        store_sum<true>(problem, c, first_row + 64 * i + at.row, first_column + at.column + p,
                                        acc[i][4 * j + 2 * half + p]);
                }
    }
};

// Unswapped, C through shared memory and TMA stores, chunk by chunk (stage 19's
// store_c_chunk_through_tma): the consumer is free for its next tile once a chunk is in
// shared memory. `chunks` counts the consumer's chunks (its buffers take turns).
struct TmaChunkStores {
    template <int kMBlocks, int kColumns, class COut>
    __device__ static void store(WarpgroupAccumulators<kMBlocks, kColumns>& acc, const GemmProblem& problem,
                                 COut* c, const CUtensorMap* c_map, std::uint8_t* buffers, int& chunks,
                                 int first_row, int first_column, int barrier_id) {
        static_assert(kColumns % kCChunkColumnsOf<COut> == 0, "whole chunks of C");
#pragma unroll
        for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
            for (int chunk = 0; chunk < kColumns / kCChunkColumnsOf<COut>; ++chunk)
                store_c_chunk_through_tma<2>(acc[i] + chunk * kCChunkValuesOf<COut>, problem, c, c_map, buffers,
                                             chunks++, first_row + 64 * i,
                                             first_column + chunk * kCChunkColumnsOf<COut>, barrier_id);
    }
};

// ---- The split in the cluster (stage 25's): the `splits` CTAs of a cluster each multiply
// an even range of one tile's K. Each writes its sums into its ring, free once its
// consumers' wgmmas are done, laid out as the tile lies in C (C's rows of the tile, each
// padded by 8 values so that a warp's writes spread over the banks); after a cluster
// barrier each adds up a share of those rows from every CTA's ring, in rank order (the
// same sums whichever CTA adds them), four adjacent values of a row at a time
// (ld.shared::cluster), and stores them as one 16-byte store (8 bytes in bf16).
template <class Config>
struct ClusterSplit {
    static constexpr bool kSwapped = Config::Orientation::kSwapped;
    static constexpr int kCRows = kSwapped ? Config::kColumns : Config::kRows;
    static constexpr int kCColumns = kSwapped ? Config::kRows : Config::kColumns;
    static constexpr int kPitch = kCColumns + 8;
    static constexpr int kQuadsPerRow = kCColumns / 4, kQuads = kCRows * kQuadsPerRow;
    static_assert(Config::kSplitsK, "a tile of no multicast whose sums fit in the ring");

    // CTA `split` of the cluster of tile `stack`: an even range of its K tiles.
    __device__ static WorkPiece piece(int stack, int split, int splits, int k_tiles) {
        return WorkPiece{stack, split * k_tiles / splits, (split + 1) * k_tiles / splits};
    }
    // A consumer's sums, rows first_row.. of the tile's, into the ring at their place in C.
    __device__ static void write_sums(const WarpgroupAccumulators<Config::kMBlocks, Config::kColumns>& acc,
                                      float* partial, int first_row) {
        const int thread = threadIdx.x % 128;
#pragma unroll
        for (int i = 0; i < Config::kMBlocks; ++i)
#pragma unroll
            for (int half = 0; half < 2; ++half)
#pragma unroll
                for (int j = 0; j < Config::kColumns / 8; ++j) {
                    const AccumulatorPosition at = wgmma_accumulator_position(thread, j, half);
                    const int row = first_row + 64 * i + at.row;
                    const float first = acc[i][4 * j + 2 * half], second = acc[i][4 * j + 2 * half + 1];
                    if constexpr (kSwapped) {
                        partial[at.column * kPitch + row] = first;
                        partial[(at.column + 1) * kPitch + row] = second;
                    } else {
                        *reinterpret_cast<float2*>(partial + row * kPitch + at.column) = make_float2(first, second);
                    }
                }
    }
    // The consumers' threads (threadIdx.x 128..): CTA `rank`'s share of the tile at `tile`.
    template <bool kCAtAnyN, class COut>
    __device__ static void add_and_store(const float* partial, int splits, unsigned rank, const GemmProblem& problem,
                                         COut* c, const TileOrigin& tile) {
        const int first_c_row = kSwapped ? tile.col : tile.row, first_c_column = kSwapped ? tile.row : tile.col;
        const int end = (static_cast<int>(rank) + 1) * kQuads / splits;
        for (int quad = static_cast<int>(rank) * kQuads / splits + static_cast<int>(threadIdx.x) - 128; quad < end;
             quad += 128 * Config::kConsumers) {
            const int row = quad / kQuadsPerRow, column = quad % kQuadsPerRow * 4;
            store_four<kCAtAnyN>(problem, c, first_c_row + row, first_c_column + column,
                       sum_float4_over_cluster(partial + row * kPitch + column, splits));
        }
    }
    // Four adjacent sums of a row of C: one store where all four lie in C (N a multiple of
    // 8, so 16-byte aligned in FP32, 8 in bf16), else each that does (and each always where
    // C's rows are off 16 bytes, kCAtAnyN).
    template <bool kCAtAnyN, class COut>
    __device__ static void store_four(const GemmProblem& problem, COut* c, int c_row, int c_column, float4 sum) {
        const int m = problem.shape.m, n = problem.shape.n;
        if (c_row >= m) return;
        if (kCAtAnyN || c_column + 4 > n) {
            const float sums[4] = {sum.x, sum.y, sum.z, sum.w};
            for (int i = 0; i < 4; ++i) store_sum<false>(problem, c, c_row, c_column + i, sums[i]);
            return;
        }
        COut* const out = c + static_cast<std::size_t>(c_row) * n + c_column;
        float4 value = make_float4(problem.alpha * sum.x, problem.alpha * sum.y, problem.alpha * sum.z,
                                   problem.alpha * sum.w);
        if constexpr (std::is_same_v<COut, __nv_bfloat16>) {
            __nv_bfloat162* const pairs = reinterpret_cast<__nv_bfloat162*>(out);
            if (problem.beta != 0.0f) {
                const float2 low = __bfloat1622float2(pairs[0]), high = __bfloat1622float2(pairs[1]);
                value.x += problem.beta * low.x;
                value.y += problem.beta * low.y;
                value.z += problem.beta * high.x;
                value.w += problem.beta * high.y;
            }
            pairs[0] = __float22bfloat162_rn(make_float2(value.x, value.y));
            pairs[1] = __float22bfloat162_rn(make_float2(value.z, value.w));
        } else {
            if (problem.beta != 0.0f) {
                const float4 old = *reinterpret_cast<const float4*>(out);
                value.x += problem.beta * old.x;
                value.y += problem.beta * old.y;
                value.z += problem.beta * old.z;
                value.w += problem.beta * old.w;
            }
            *reinterpret_cast<float4*>(out) = value;
        }
    }
};

// ---- The kernel: the parts above, composed. Mainloop: Bf16Mainloop here (stage 31's for
// FP8). COut: C's type, float or __nv_bfloat16. kCAtAnyN: C's rows off 16 bytes (N off 8),
// never through TMA (Mainloop::AnyNStores where unswapped; c_map unused). splits: 1, the
// persistent schedule; more, one tile a cluster of that many CTAs, its K split among them
// (ClusterSplit).
template <class Config, class Mainloop, class COut, bool kCAtAnyN = false>
__global__ void __launch_bounds__(Config::kThreads, 1)
    any_tile_kernel(const __grid_constant__ CUtensorMap row_map, const __grid_constant__ CUtensorMap column_map,
                    const __grid_constant__ CUtensorMap c_map, COut* c, GemmProblem problem,
                    typename Mainloop::Arguments arguments,
                    const __grid_constant__ typename Mainloop::StageMaps stage_maps, int group_rows,
                    const __grid_constant__ TileSchedule schedule, StreamKWorkspace workspace, int splits) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using Orientation = typename Config::Orientation;
    using Cluster = ClusterOf<Config::kClusterM>;
    constexpr int kClusterM = Config::kClusterM;
    // The descriptors' fetch overlaps the barriers' set-up (a short kernel waits on both).
    if (threadIdx.x == 0) {
        prefetch_tensor_map(&row_map);
        prefetch_tensor_map(&column_map);
        if constexpr (Config::kTmaStores && !kCAtAnyN) prefetch_tensor_map(&c_map);
    }
    auto& shared = shared_memory_as<typename Config::SharedMemory>();
    std::uint8_t* const ring = &shared.ring[0][0];
    constexpr int kReleasingWarps = Mainloop::template kReleasingWarps<Config>;
    init_ring_barriers(shared.full, shared.empty, Config::kStages, Config::kConsumers * kClusterM * kReleasingWarps);
    Cluster::sync();  // the other CTAs' barriers are initialized before anyone arrives on them

    const unsigned rank = Cluster::rank();
    const int cluster = blockIdx.x / kClusterM;
    const int rows = Orientation::rows(problem.shape), columns = Orientation::columns(problem.shape);
    const auto tile_of = [&](int stack) {
        TileOrigin origin =
            rasterized_tile_origin<kClusterM * Config::kRows, Config::kColumns>(stack, rows, columns, group_rows);
        origin.row += rank * Config::kRows;
        return origin;
    };
    // This CTA's pieces of work, in order: the schedule's, or its share of one tile's K.
    const auto pieces = [&](int index, WorkPiece& piece) {
        if constexpr (Config::kSplitsK) {
            if (splits > 1) {
                piece = ClusterSplit<Config>::piece(blockIdx.x / splits, blockIdx.x % splits, splits, schedule.k_tiles);
                return index == 0;
            }
        }
        return schedule.piece(cluster, index, piece);
    };
    float* const partial = reinterpret_cast<float*>(ring);
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        if constexpr (Config::kConsumers > 1) warpgroup_release_registers<Config::kProducerRegisters>();
        if (threadIdx.x == 0)
            produce_k_tiles<Config>(pieces, rank, tile_of, ring, &shared.extras[0][0], shared.full, shared.empty,
                                    &row_map, &column_map,
                                    typename Mainloop::template StageLoads<Config>(&stage_maps));
    } else {
        if constexpr (Config::kConsumers > 1) warpgroup_claim_registers<Config::kConsumerRegisters>();
        const int first_row = (warpgroup - 1) * 64 * Config::kMBlocks;
        const bool signals = threadIdx.x % 128 == 0;
        const bool releases = threadIdx.x % (128 / kReleasingWarps) == 0;  // frees stages for its warps
        // Named barrier 1: the consumers, who hand stream-K's partial sums over together.
        const HandOverThreads consumers{static_cast<int>(threadIdx.x) - 128, Config::kConsumers * 128, 1};
        const typename Mainloop::template Consumer<Config> mainloop(arguments, problem);
        WarpgroupAccumulators<Config::kMBlocks, Config::kColumns> acc;
        WorkPiece piece{};
        int passed = 0, chunks = 0;
        for (int index = 0; pieces(index, piece); ++index) {
            const TileOrigin tile = tile_of(piece.stack);
            mainloop.run(acc, piece, tile, first_row, ring, &shared.extras[0][0], shared.full, shared.empty, passed,
                         releases);
            if constexpr (Config::kSplitsK) {
                if (splits > 1) {
                    // The ring is free once every consumer's wgmmas are done reading it.
                    named_barrier_sync(1, Config::kConsumers * 128);
                    ClusterSplit<Config>::write_sums(acc, partial, first_row);
                    continue;
                }
            }
            // A piece of a leftover stack writes C only where it finishes the stack's sums.
            if (schedule.shared_piece(index) &&
                !hand_over_piece<Config, false>(acc, schedule, piece, index, cluster, rank, workspace, consumers))
                continue;
            if constexpr (Config::kTmaStores && !kCAtAnyN)
                // Named barriers 2, 3, ...: each consumer's own (its C chunks).
                TmaChunkStores::store<Config::kMBlocks, Config::kColumns>(
                    acc, problem, c, &c_map, shared.c_buffers[warpgroup - 1], chunks, tile.row + first_row, tile.col,
                    1 + warpgroup);
            else if constexpr (Config::kTmaStores)
                Mainloop::AnyNStores::template store<Config::kMBlocks, Config::kColumns>(
                    acc, problem, c, shared.c_buffers[warpgroup - 1], tile.row + first_row, tile.col, 1 + warpgroup);
            else
                DirectStores::store<Config::kMBlocks, Config::kColumns>(
                    acc, problem, c, tile.row + first_row, tile.col);
        }
        // Shared memory must outlive the copy engine's reads of it.
        if (Config::kTmaStores && signals) tma_store_wait<0>();
    }
    if constexpr (Config::kSplitsK) {
        if (splits > 1) {
            __syncwarp();
            cluster_sync();  // every CTA's sums are in its ring
            if (warpgroup > 0)
                ClusterSplit<Config>::template add_and_store<kCAtAnyN>(partial, splits, cluster_cta_rank(), problem, c,
                                                    tile_of(blockIdx.x / splits));
            __syncwarp();
            cluster_sync();  // no CTA leaves while another may still read its ring
        }
    }
    Cluster::sync_before_leaving();
#endif
}

// The schedule of a plan (30_any_tile.hpp) for Config's tiles and K in k_tiles: `ctas` CTAs
// in clusters, each a stack of whole tiles a round; with split_tail the stacks left after
// the whole rounds shared out by K (20_stream_k.cuh), their partial sums handed over through
// the workspace by the last sharer of each (never in shares).
template <class Config>
TileSchedule schedule_for(const GemmShape& shape, const AnyTilePlan& plan, int k_tiles) {
    using Orientation = typename Config::Orientation;
    const int stacks = ceil_div(Orientation::rows(shape), Config::kClusterM * Config::kRows) *
                       ceil_div(Orientation::columns(shape), Config::kColumns);
    const int clusters = std::max(1, std::min(plan.ctas / Config::kClusterM, plan.split_tail ? plan.ctas : stacks));
    TileSchedule schedule{stacks, k_tiles, clusters, ceil_div(stacks, clusters), false, false};
    if (plan.split_tail && stacks % clusters != 0 &&
        static_cast<long long>(stacks % clusters) * schedule.k_tiles >= 2LL * clusters) {
        schedule.whole_rounds = stacks / clusters;
        schedule.split_tail = true;
    }
    return schedule;
}

// Config's kernel with Mainloop on a plan, from the operands' tensor maps: K and N multiples
// of 8 (TMA's rows start 16-byte aligned).
template <class Config, class Mainloop, class COut>
void launch_plan(const AnyTilePlan& plan, const GemmProblem& problem, const CUtensorMap& row_map,
                 const CUtensorMap& column_map, COut* c, const typename Mainloop::Arguments& arguments,
                 const typename Mainloop::StageMaps& stage_maps, cudaStream_t stream) {
    using Orientation = typename Config::Orientation;
    // N off 8: C's rows off 16 bytes, which TMA cannot write (Mainloop's operands must take them).
    const bool c_at_any_n = problem.shape.n % 8 != 0;
    if (c_at_any_n && !Mainloop::kTakesNOff8)
        throw std::invalid_argument("this kernel's operands take N a multiple of 8 only");
    const CUtensorMap c_map = Config::kTmaStores && !c_at_any_n
                                  ? make_c_tensor_map(c, problem.shape.m, problem.shape.n)
                                  : CUtensorMap{};
    const auto at_any_n = any_tile_kernel<Config, Mainloop, COut, Mainloop::kTakesNOff8>;
    const auto kernel = c_at_any_n ? at_any_n : any_tile_kernel<Config, Mainloop, COut>;
    // Once a process, for both kernels: the track launches them every call, and the attribute stays set.
    static const cudaError_t more_shared_memory =
        cudaFuncSetAttribute(any_tile_kernel<Config, Mainloop, COut>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             Config::kSharedBytes) == cudaSuccess
            ? cudaFuncSetAttribute(at_any_n, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSharedBytes)
            : cudaErrorInvalidValue;
    (void)more_shared_memory;  // a failure shows as the launch's error
    const int k_tiles = ceil_div(problem.shape.k, Mainloop::kValuesPerKTile);
    if (plan.splits > 1) {
        // A cluster of `splits` CTAs a tile, each an even range of its K tiles (none empty).
        const int stacks = ceil_div(Orientation::rows(problem.shape), Config::kRows) *
                           ceil_div(Orientation::columns(problem.shape), Config::kColumns);
        if (!Config::kSplitsK || plan.splits > kMaxClusterSplits || plan.splits > k_tiles)
            throw std::invalid_argument("this tile cannot split K " + std::to_string(plan.splits) + " ways");
        const TileSchedule schedule{stacks, k_tiles, stacks, 1, false, false};
        launch_with_cluster(kernel, stacks * plan.splits, Config::kThreads, plan.splits, Config::kSharedBytes, stream,
                            row_map, column_map, c_map, c, problem, arguments, stage_maps, plan.group_rows, schedule,
                            StreamKWorkspace{}, plan.splits);
        return;
    }
    const TileSchedule schedule = schedule_for<Config>(problem.shape, plan, k_tiles);
    StreamKWorkspace workspace;
    if (schedule.split_tail)
        workspace = stream_k_workspace(schedule.clusters * Config::kClusterM, Config::kRows * Config::kColumns);
    launch_with_cluster(kernel, schedule.clusters * Config::kClusterM, Config::kThreads, Config::kClusterM,
                        Config::kSharedBytes, stream, row_map, column_map, c_map, c, problem, arguments,
                        stage_maps, plan.group_rows, schedule, workspace, 1);
}

// Config's kernel on a plan, on bf16 A and B.
template <class Config, class COut>
void launch_config(const AnyTilePlan& plan, const GemmProblem& problem, const __nv_bfloat16* a,
                   const __nv_bfloat16* b, COut* c, cudaStream_t stream) {
    using Orientation = typename Config::Orientation;
    launch_plan<Config, Bf16Mainloop>(plan, problem, Orientation::row_map(problem.shape, a, b),
                                      Orientation::column_map(problem.shape, a, b), c, Bf16Mainloop::Arguments{},
                                      Bf16Mainloop::StageMaps{}, stream);
}

// What the occupancy calculator says of Config's kernel with Mainloop: CTAs the GPU holds at
// once in clusters of `cluster_size` (0 where it cannot launch them).
template <class Config, class Mainloop>
int resident_ctas(int cluster_size) {
    const auto kernel = any_tile_kernel<Config, Mainloop, float>;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSharedBytes);
    return cluster_size * max_active_clusters(kernel, Config::kThreads, cluster_size, Config::kSharedBytes);
}

// A list of compiled tiles (Configs, each run with Mainloop): what each is (AnyTile), the
// CTAs of each the GPU holds at once in clusters of its own size and of every split, and a
// call of visit(TileTag<Config>{}) for the index-th.
template <class Config>
struct TileTag {
    using type = Config;
};

template <class Config>
constexpr AnyTile tile_of() {
    return AnyTile{Config::Orientation::kSwapped, Config::kRows, Config::kColumns, Config::kConsumers,
                   Config::kClusterM, Config::kSplitsK};
}

template <class Mainloop, class... Configs>
struct TileList {
    static const std::vector<AnyTile>& tiles() {
        static const std::vector<AnyTile> list{tile_of<Configs>()...};
        return list;
    }
    template <class Config>
    static ResidentByCluster resident_of() {
        ResidentByCluster ctas{};
        for (int size = 1; size <= kMaxClusterSplits; ++size)
            if (size == Config::kClusterM || (Config::kSplitsK && size > 1))
                ctas[size] = resident_ctas<Config, Mainloop>(size);
        return ctas;
    }
    static const std::vector<ResidentByCluster>& resident_ctas_by_cluster() {
        static const std::vector<ResidentByCluster> ctas{resident_of<Configs>()...};
        return ctas;
    }
    // False where there is no index-th tile.
    template <class Visit>
    static bool visit(int index, Visit visit) {
        int at = 0;
        return ((at++ == index ? (visit(TileTag<Configs>{}), true) : false) || ...);
    }
};

}  // namespace any_tile
}  // namespace sgemm
