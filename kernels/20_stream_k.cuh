// Stage 20's schedule (read 20_hopper_tuned.cu first): which work each cluster of the
// persistent grid takes, with the stacks left over after its whole rounds shared out by
// K (stream-K), and the hand-over of partial sums between clusters that this needs.
//
// The unit is a stack (stage 18: the ClusterM vertically adjacent tiles one cluster
// computes at once), in raster order. A "piece" of work is K tiles [k_begin, k_end) of
// one stack. A "round" gives every cluster one whole stack.
// Cluster c takes stacks c, c + clusters, ..., whole, as in stage 19, for the whole
// rounds; the stacks left over after them (fewer than the clusters, which would leave the
// rest idle for a whole tile's time) are shared out by K tiles instead, each cluster an
// equal run of the leftover stacks' K tiles. A run is shorter than one stack's K, so it
// covers the start of one stack (the "late" piece), or the end of another (the "early"
// piece), or both. A cluster does its late piece first and leaves its partial sums in a
// workspace; the cluster that finishes a stack adds those of every earlier cluster whose
// run reaches into it, in a fixed order, and writes C. Where many clusters share a stack,
// each leaves its partial sums, and once its run is done adds up an equal share of the
// stack's and writes that share of C. Where sharing does not pay, every stack is whole.
#pragma once

#include <cstddef>
#include <type_traits>

#include "common/epilogue.cuh"
#include "common/gemm_problem.hpp"
#include "common/hopper_tiles.cuh"
#include "common/launch.cuh"
#include "common/sync.cuh"
#include "common/workspace.cuh"

namespace sgemm {

struct WorkPiece {
    int stack;
    int k_begin;
    int k_end;
};

struct TileSchedule {
    int stacks = 0;
    int k_tiles = 0;
    int clusters = 0;
    int whole_rounds = 0;     // rounds of whole stacks, one per cluster each
    bool split_tail = false;  // stacks after the whole rounds are shared out by K tiles
    bool sliced = false;      // the sharers of a leftover stack each write a share of it

    __host__ __device__ int tail_first_stack() const { return whole_rounds * clusters; }
    __host__ __device__ long long tail_k_tiles() const {
        return static_cast<long long>(stacks - tail_first_stack()) * k_tiles;
    }
    // The run of the leftover stacks' K tiles (counted from the first leftover stack's
    // first) that `cluster` takes: [run_begin, run_begin(cluster + 1)).
    __host__ __device__ long long run_begin(int cluster) const { return tail_k_tiles() * cluster / clusters; }

    // Whether the index-th piece of a cluster's work is part of a leftover stack.
    __host__ __device__ bool shared_piece(int index) const { return split_tail && index >= whole_rounds; }
    // The cluster whose run holds K tile `tail_k_tile` of the leftover stacks (counted as run_begin counts).
    __host__ __device__ int cluster_of(long long tail_k_tile) const {
        int cluster = static_cast<int>(tail_k_tile * clusters / tail_k_tiles());
        while (run_begin(cluster + 1) <= tail_k_tile) ++cluster;
        while (run_begin(cluster) > tail_k_tile) --cluster;
        return cluster;
    }
    // The clusters whose runs reach into leftover stack `tail_stack` (counted from the first
    // leftover stack): first_sharer(tail_stack) and the ones after it, sharers(tail_stack) in all.
    __host__ __device__ int first_sharer(int tail_stack) const {
        return cluster_of(static_cast<long long>(tail_stack) * k_tiles);
    }
    __host__ __device__ int sharers(int tail_stack) const {
        return cluster_of(static_cast<long long>(tail_stack + 1) * k_tiles - 1) - first_sharer(tail_stack) + 1;
    }
    // Which of `cluster`'s pieces in the leftover stacks lies in `tail_stack`: 0 its first
    // (where its run ends), 1 its second (where its run begins, if in an earlier stack).
    __host__ __device__ int shared_piece_in(int cluster, int tail_stack) const {
        return (run_begin(cluster + 1) - 1) / k_tiles == tail_stack ? 0 : 1;
    }

    // The index-th piece of `cluster`'s work; false past the last.
    __host__ __device__ bool piece(int cluster, int index, WorkPiece& piece) const {
        if (index < whole_rounds || !split_tail) {
            const int stack = cluster + index * clusters;
            piece = WorkPiece{stack, 0, k_tiles};
            return stack < stacks;
        }
        const long long begin = run_begin(cluster), end = run_begin(cluster + 1);
        if (begin == end) return false;
        const int late = static_cast<int>((end - 1) / k_tiles), early = static_cast<int>(begin / k_tiles);
        const long long late_start = static_cast<long long>(late) * k_tiles;
        if (index == whole_rounds) {
            piece = WorkPiece{tail_first_stack() + late, static_cast<int>((begin > late_start ? begin : late_start) - late_start),
                              static_cast<int>(end - late_start)};
            return true;
        }
        if (index == whole_rounds + 1 && early != late) {
            piece = WorkPiece{tail_first_stack() + early, static_cast<int>(begin - static_cast<long long>(early) * k_tiles),
                              k_tiles};
            return true;
        }
        return false;
    }
};

// Stream-K pays where it spares each cluster at least this many K tiles of waiting: on
// the H100 the hand-over of partial sums cost about as much as 17-21 K tiles of work
// (docs/notes/20_hopper_tuned.md).
constexpr int kStreamKMinSparedKTiles = 24;

// Where a leftover stack has at least this many sharers on average, each adds up and writes
// a share of it; where fewer, the last adds the others' partial sums to its own and writes
// it all. Measured on the H100 (docs/notes/20_hopper_tuned.md): shares lost 13-18 points
// of cuBLAS at 2-4 sharers (every sharer writes its slot, and waits for the last), drew
// level at 16.5 and gained 25-45 at 33-66; between 4 and 16.5 is not measured.
constexpr int kSlicedMinSharers = 12;

// The schedule of `stacks` stacks of k_tiles K tiles on `clusters` clusters.
inline TileSchedule make_tile_schedule(int stacks, int k_tiles, int clusters) {
    TileSchedule schedule{stacks, k_tiles, clusters, ceil_div(stacks, clusters), false};
    const long long tail = stacks % clusters;
    const long long spared = (clusters - tail) * k_tiles / clusters;
    // Shared out by K, each cluster's run must be at least two K tiles long.
    if (tail != 0 && spared >= kStreamKMinSparedKTiles && tail * k_tiles >= 2LL * clusters) {
        schedule.whole_rounds = stacks / clusters;
        schedule.split_tail = true;
        schedule.sliced = clusters >= kSlicedMinSharers * tail;
    }
    return schedule;
}

// The schedule for a grid of at most `resident` clusters, all that the GPU holds at once
// (0: not known). With fewer stacks than that, one cluster a stack, unless stream-K can
// share those few stacks out by K over every cluster.
inline TileSchedule make_grid_schedule(int stacks, int k_tiles, int resident) {
    if (resident <= 0) return make_tile_schedule(stacks, k_tiles, stacks);
    if (stacks < resident) {
        const TileSchedule spread = make_tile_schedule(stacks, k_tiles, resident);
        if (spread.split_tail) return spread;
    }
    return make_tile_schedule(stacks, k_tiles, stacks < resident ? stacks : resident);
}

// The hand-over, by the consumer threads of a CTA, for the tile of one CTA rank in a
// leftover stack. Each cluster that worked on the stack leaves its partial sums in a slot
// of its own, except, where the stack has few sharers, the last, which adds the others'
// to its own and writes C (add_partial_sums). Where a deep K spreads a stack over many
// clusters, one CTA reading every slot would take longer than its share of the K tiles
// (256 x 256 x 65536: 66 slots of 128 KB); there every sharer leaves its slot, and then
// adds up and writes an equal share of the tile (finish_shared_share), so that no CTA
// reads more than one tile's worth.

// The consumer threads of a CTA, which hand over together: this one is `thread` of
// `threads`, and they meet at named barrier `barrier_id`.
struct HandOverThreads {
    int thread, threads, barrier_id;
};

// publish_partial_sums: float4 q of thread t at q * threads + t of `slot`, so that a warp's
// stores are coalesced; once every consumer has written them, one thread counts them in
// `arrivals` (red.release.gpu): the slot's own ready flag where the last sharer adds the
// slots, the stack's count where every sharer adds a share.
template <int kMBlocks, int kBlockN>
__device__ __forceinline__ void publish_partial_sums(const WarpgroupAccumulators<kMBlocks, kBlockN>& acc, float* slot,
                                                     int* arrivals, const HandOverThreads& who) {
    float4* const slot4 = reinterpret_cast<float4*>(slot);
#pragma unroll
    for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
        for (int v = 0; v < kBlockN / 2; v += 4)
            slot4[(i * kBlockN / 2 + v) / 4 * who.threads + who.thread] =
                make_float4(acc[i][v], acc[i][v + 1], acc[i][v + 2], acc[i][v + 3]);
    __threadfence();
    named_barrier_sync(who.barrier_id, who.threads);
    if (who.thread == 0) add_release(arrivals, 1);
}

// add_partial_sums: once an earlier sharer's slot is ready (one thread waits for `ready`
// with ld.acquire.gpu, then lowers it to zero for the next launch), adds it to the
// accumulators, reading past L1 (ld.global.cg), which may hold a slot from an earlier
// launch. The last sharer calls it slot by slot, adding each as soon as it has arrived.
template <int kMBlocks, int kBlockN>
__device__ __forceinline__ void add_partial_sums(WarpgroupAccumulators<kMBlocks, kBlockN>& acc, const float* slot,
                                                 int* ready, const HandOverThreads& who) {
    if (who.thread == 0) {
        while (load_acquire(ready) == 0) {
        }
        *ready = 0;
    }
    named_barrier_sync(who.barrier_id, who.threads);
    const float4* const slot4 = reinterpret_cast<const float4*>(slot);
#pragma unroll
    for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
        for (int v = 0; v < kBlockN / 2; v += 4) {
            const float4 sums = __ldcg(slot4 + (i * kBlockN / 2 + v) / 4 * who.threads + who.thread);
            acc[i][v] += sums.x;
            acc[i][v + 1] += sums.y;
            acc[i][v + 2] += sums.z;
            acc[i][v + 3] += sums.w;
        }
}

// The float4 at `index` of a slot that publish_partial_sums filled from accumulators of
// kMBlocks m64 blocks by kBlockN columns per consumer, the consumers stacked by rows or
// (kSplitColumns) side by side: where its (x, y) belong, relative to the tile's corner;
// (z, w) are 8 rows below.
template <int kMBlocks, int kBlockN, bool kSplitColumns>
__device__ __forceinline__ AccumulatorPosition slot_position(int index, int threads) {
    const int owner = index % threads, q = index / threads;
    const int consumer = owner / 128;
    const int block = 4 * q / (kBlockN / 2), j = 4 * q % (kBlockN / 2) / 4;
    const AccumulatorPosition at = wgmma_accumulator_position(owner % 128, j, 0);
    const int first_row = kSplitColumns ? 0 : consumer * 64 * kMBlocks;
    const int first_column = kSplitColumns ? consumer * kBlockN : 0;
    return AccumulatorPosition{first_row + 64 * block + at.row, first_column + at.column};
}

// finish_shared_share: once all `sharers` slots of the stack have arrived (one thread waits
// with ld.acquire.gpu, reading past L1 after it, which may hold a slot from an earlier
// launch), adds up share `share` of their float4s and writes that share of C, through the
// kernel's Epilogue (20_hopper_tuned.cuh). A thread's float4s of the share are `cells`; it adds each cell's parts in
// slot order, so that every run gives the same bits, into `sums` (shared memory of its own:
// the idle ring), walking (sharer, cell) pairs sharer by sharer, kInFlight loads at a time.
// A CTA reads one tile's worth whatever the number of sharers, in about tile / (threads x
// kInFlight) round trips to L2: a walk cell by cell waited a round trip per cell (256 x 256
// x 65536 in 128x256 tiles: 63 % of cuBLAS that way, 73 % this way).
// slot_of(i): the i-th sharer's slot. The last CTA through lowers `arrivals` to zero for the
// next launch.
template <int kMBlocks, int kBlockN, bool kSplitColumns, class SlotOf, class COut, class Epilogue>
__device__ __forceinline__ void finish_shared_share(SlotOf slot_of, int sharers, int share, int* arrivals, float4* sums,
                                                    TileOrigin tile, const GemmProblem& problem, COut* c,
                                                    const Epilogue& epilogue, const HandOverThreads& who) {
    const int thread = who.thread, threads = who.threads;
    if (thread == 0)
        while (load_acquire(arrivals) < sharers) {
        }
    named_barrier_sync(who.barrier_id, threads);
    constexpr int kInFlight = 16;
    const int float4s = threads * (kMBlocks * kBlockN / 8);
    const int first = float4s * share / sharers, count = float4s * (share + 1) / sharers - first;
    const int cells = thread < count ? (count - thread + threads - 1) / threads : 0;
    int sharer = 0, cell = 0;  // the next pair to load
    for (int pair = 0; pair < cells * sharers; pair += kInFlight) {
        float4 parts[kInFlight];
        int at[kInFlight];
        bool first_part[kInFlight];
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) {
            at[u] = -1;
            if (pair + u >= cells * sharers) continue;
            at[u] = thread + cell * threads;
            first_part[u] = sharer == 0;
            parts[u] = __ldcg(reinterpret_cast<const float4*>(slot_of(sharer)) + first + at[u]);
            if (++cell == cells) {
                cell = 0;
                ++sharer;
            }
        }
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) {
            if (at[u] < 0) continue;
            float4& sum = sums[at[u]];
            if (first_part[u]) {
                sum = parts[u];
            } else {
                sum.x += parts[u].x;
                sum.y += parts[u].y;
                sum.z += parts[u].z;
                sum.w += parts[u].w;
            }
        }
    }
    for (int cell_index = 0; cell_index < cells; ++cell_index) {
        const int local = thread + cell_index * threads;
        const float4 sum = sums[local];
        const AccumulatorPosition at = slot_position<kMBlocks, kBlockN, kSplitColumns>(first + local, threads);
        const int column = tile.col + at.column;  // N is a multiple of 8: column + 1 < N too
        const float values[2][2] = {{sum.x, sum.y}, {sum.z, sum.w}};
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = tile.row + at.row + 8 * half;
            if (row >= problem.shape.m || column >= problem.shape.n) continue;
            float pair[2] = {values[half][0], values[half][1]};
            epilogue.on_pair(pair, row, column);
            COut* const out = c + static_cast<std::size_t>(row) * problem.shape.n + column;
            if constexpr (std::is_same_v<COut, float>)
                store_scaled_float2(out, pair[0], pair[1], problem.alpha, problem.beta);
            else
                store_scaled_bf16x2(out, pair[0], pair[1], problem.alpha, problem.beta);
        }
    }
    if (thread == 0 && atomicAdd(arrivals, 1) == 2 * sharers - 1) *arrivals = 0;
}

// The workspace: two partial tiles for each CTA of the largest grid asked for so far (with
// shares a cluster may leave one for each of its two pieces in the leftover stacks; without,
// only its first), a ready flag for each CTA's first, and an arrival count for each CTA rank
// of each leftover stack (fewer stacks than clusters). Flags and counts are zero between
// launches, so launches on one stream may share them.
struct StreamKWorkspace {
    float* partial_sums = nullptr;
    int* slot_ready = nullptr;
    int* stack_arrivals = nullptr;
};

inline StreamKWorkspace stream_k_workspace(int ctas, int tile_values) {
    static GrowingWorkspace partial_sums("stream-K's partial tiles");
    static GrowingWorkspace signals("stream-K's ready flags and arrival counts", true);
    int* const flags_and_counts = static_cast<int*>(signals.at_least(2 * static_cast<std::size_t>(ctas) * sizeof(int)));
    return StreamKWorkspace{
        static_cast<float*>(partial_sums.at_least(2 * static_cast<std::size_t>(ctas) * tile_values * sizeof(float))),
        flags_and_counts, flags_and_counts + ctas};
}

// The hand-over of the index-th piece of a cluster's work, a piece of a leftover stack,
// by the consumers of the cluster's CTA of rank `rank` once they have its sums. With
// shares, every piece's sums go to the CTA's slot for it (its first or second piece in
// the leftover stacks) and count towards the stack's arrivals. Without, a piece that
// leaves its stack unfinished (its first in the leftover stacks, so one slot a CTA)
// leaves its sums, and the piece that finishes the stack adds the earlier sharers' slots
// to its own, the latest run first. True where the accumulators then hold the stack's
// whole sums, for the caller to write C.
template <class Config, bool kShares>
__device__ __forceinline__ bool hand_over_piece(
    WarpgroupAccumulators<Config::kMBlocks, Config::kColumnsPerConsumer>& acc, const TileSchedule& schedule,
    const WorkPiece& piece, int index, int cluster, unsigned rank, const StreamKWorkspace& workspace,
    const HandOverThreads& who) {
    constexpr int kMBlocks = Config::kMBlocks, kColumns = Config::kColumnsPerConsumer, kClusterM = Config::kClusterM;
    constexpr int kTileValues = Config::kBlockM * Config::kBlockN;
    const int tail_stack = piece.stack - schedule.tail_first_stack();
    if constexpr (kShares) {
        const std::size_t slot = 2 * static_cast<std::size_t>(blockIdx.x) + index - schedule.whole_rounds;
        publish_partial_sums<kMBlocks, kColumns>(acc, workspace.partial_sums + slot * kTileValues,
                                                 &workspace.stack_arrivals[tail_stack * kClusterM + rank], who);
        return false;
    } else {
        if (piece.k_end < schedule.k_tiles) {
            publish_partial_sums<kMBlocks, kColumns>(
                acc, workspace.partial_sums + static_cast<std::size_t>(blockIdx.x) * kTileValues,
                &workspace.slot_ready[blockIdx.x], who);
            return false;
        }
        const long long tile_start = static_cast<long long>(tail_stack) * schedule.k_tiles;
        for (int earlier = cluster - 1; earlier >= 0 && schedule.run_begin(earlier + 1) > tile_start; --earlier) {
            const int slot = earlier * kClusterM + rank;
            add_partial_sums<kMBlocks, kColumns>(acc, workspace.partial_sums + static_cast<std::size_t>(slot) * kTileValues,
                                                 &workspace.slot_ready[slot], who);
        }
        return true;
    }
}

// With shares, once the cluster's run is done: for each leftover stack the run reaches
// into, the CTA adds up its share of the sharers' slots and writes that share of C
// (finish_shared_share), adding into `sums`. tile_of(stack): the CTA's tile of a stack.
template <class Config, class TileOf, class COut, class Epilogue>
__device__ __forceinline__ void write_shares(const TileSchedule& schedule, int cluster, unsigned rank,
                                             const StreamKWorkspace& workspace, TileOf tile_of, float4* sums,
                                             const GemmProblem& problem, COut* c, const Epilogue& epilogue,
                                             const HandOverThreads& who) {
    constexpr int kClusterM = Config::kClusterM, kTileValues = Config::kBlockM * Config::kBlockN;
    const long long begin = schedule.run_begin(cluster), end = schedule.run_begin(cluster + 1);
    for (int tail_stack = begin / schedule.k_tiles; begin < end && tail_stack <= (end - 1) / schedule.k_tiles;
         ++tail_stack) {
        const int first = schedule.first_sharer(tail_stack), sharers = schedule.sharers(tail_stack);
        // The last sharer's piece here is its second where its run goes on into the next stack.
        const int last_piece = schedule.shared_piece_in(first + sharers - 1, tail_stack);
        const auto slot_of = [&](int sharer) {
            const std::size_t cta = static_cast<std::size_t>(first + sharer) * kClusterM + rank;
            return workspace.partial_sums + (2 * cta + (sharer == sharers - 1 ? last_piece : 0)) * kTileValues;
        };
        finish_shared_share<Config::kMBlocks, Config::kColumnsPerConsumer, Config::kSplitColumns>(
            slot_of, sharers, cluster - first, &workspace.stack_arrivals[tail_stack * kClusterM + rank], sums,
            tile_of(schedule.tail_first_stack() + tail_stack), problem, c, epilogue, who);
    }
}

}  // namespace sgemm
