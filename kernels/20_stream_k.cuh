// Stage 20's schedule (read 20_hopper_tuned.cu first): which work each cluster of the
// persistent grid takes, with the stacks left over after its whole rounds shared out by
// K (stream-K), and the hand-over of partial sums between clusters that this needs.
//
// The unit is a stack (stage 18: the ClusterM vertically adjacent tiles one cluster
// computes at once), in raster order. A "piece" of work is K tiles [k_begin, k_end) of
// one stack. A "round" gives every cluster one whole stack.
//   kPersistent:        cluster c takes stacks c, c + clusters, ..., whole (stage 19).
//   kPersistentStreamK: the same for the whole rounds; the stacks left over after them
//                       (fewer than the clusters, which would leave the rest idle for a
//                       whole tile's time) are shared out by K tiles instead, each
//                       cluster an equal run of the leftover stacks' K tiles. A run is
//                       shorter than one stack's K, so it covers the start of one stack
//                       (the "late" piece), or the end of another (the "early" piece,
//                       which finishes its stack), or both. A cluster does its late
//                       piece first and leaves its partial sums in a workspace; the
//                       cluster that finishes a stack adds the partial sums of every
//                       earlier cluster whose run reaches into it, in a fixed order, and
//                       writes C.
#pragma once

#include <cstddef>

#include "common/hopper_tiles.cuh"
#include "common/launch.cuh"
#include "common/sync.cuh"
#include "common/workspace.cuh"

namespace sgemm {

enum class Schedule { kPersistent, kPersistentStreamK };

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

    __host__ __device__ int tail_first_stack() const { return whole_rounds * clusters; }
    __host__ __device__ long long tail_k_tiles() const {
        return static_cast<long long>(stacks - tail_first_stack()) * k_tiles;
    }
    // The run of the leftover stacks' K tiles (counted from the first leftover stack's
    // first) that `cluster` takes: [run_begin, run_begin(cluster + 1)).
    __host__ __device__ long long run_begin(int cluster) const { return tail_k_tiles() * cluster / clusters; }

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

// The schedule of `stacks` stacks of k_tiles K tiles on `clusters` clusters.
inline TileSchedule make_tile_schedule(Schedule kind, int stacks, int k_tiles, int clusters) {
    TileSchedule schedule{stacks, k_tiles, clusters, ceil_div(stacks, clusters), false};
    const long long tail = stacks % clusters;
    const long long spared = (clusters - tail) * k_tiles / clusters;
    // Shared out by K, each cluster's run must be at least two K tiles long.
    if (kind == Schedule::kPersistentStreamK && tail != 0 && spared >= kStreamKMinSparedKTiles &&
        tail * k_tiles >= 2LL * clusters) {
        schedule.whole_rounds = stacks / clusters;
        schedule.split_tail = true;
    }
    return schedule;
}

// The schedule for a grid of at most `resident` clusters, all that the GPU holds at once
// (0: not known). With fewer stacks than that, one cluster a stack, unless stream-K can
// share those few stacks out by K over every cluster.
inline TileSchedule make_grid_schedule(Schedule kind, int stacks, int k_tiles, int resident) {
    if (resident <= 0) return make_tile_schedule(kind, stacks, k_tiles, stacks);
    if (stacks < resident) {
        const TileSchedule spread = make_tile_schedule(kind, stacks, k_tiles, resident);
        if (spread.split_tail) return spread;
    }
    return make_tile_schedule(kind, stacks, k_tiles, stacks < resident ? stacks : resident);
}

// The hand-over, by the `threads` consumer threads of a CTA (this one `thread`).
// publish_partial_sums: the partial sums of a piece that does not finish its tile go to
// `slot`, four values at a time (float4 q of thread t at q * threads + t, so that a warp's
// stores are coalesced); once every consumer has written them (barrier `barrier_id`), one
// thread raises `flag` (st.release.gpu). add_partial_sums: one thread waits for `flag`
// (ld.acquire.gpu) and lowers it again for the next launch, then every consumer adds the
// slot's sums to its accumulators, reading past L1 (ld.global.cg), which may hold the slot
// from an earlier launch.
template <int kMBlocks, int kBlockN>
__device__ __forceinline__ void publish_partial_sums(const WarpgroupAccumulators<kMBlocks, kBlockN>& acc, float* slot,
                                                     int* flag, int thread, int threads, int barrier_id) {
    float4* const slot4 = reinterpret_cast<float4*>(slot);
#pragma unroll
    for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
        for (int v = 0; v < kBlockN / 2; v += 4)
            slot4[(i * kBlockN / 2 + v) / 4 * threads + thread] =
                make_float4(acc[i][v], acc[i][v + 1], acc[i][v + 2], acc[i][v + 3]);
    __threadfence();
    named_barrier_sync(barrier_id, threads);
    if (thread == 0) store_release(flag, 1);
}

template <int kMBlocks, int kBlockN>
__device__ __forceinline__ void add_partial_sums(WarpgroupAccumulators<kMBlocks, kBlockN>& acc, const float* slot,
                                                 int* flag, int thread, int threads, int barrier_id) {
    if (thread == 0) {
        while (load_acquire(flag) == 0) {
        }
        *flag = 0;
    }
    named_barrier_sync(barrier_id, threads);
    const float4* const slot4 = reinterpret_cast<const float4*>(slot);
#pragma unroll
    for (int i = 0; i < kMBlocks; ++i)
#pragma unroll
        for (int v = 0; v < kBlockN / 2; v += 4) {
            const float4 sums = __ldcg(slot4 + (i * kBlockN / 2 + v) / 4 * threads + thread);
            acc[i][v] += sums.x;
            acc[i][v + 1] += sums.y;
            acc[i][v + 2] += sums.z;
            acc[i][v + 3] += sums.w;
        }
}

// The workspace: a partial tile and a flag for each CTA of the largest grid asked for so
// far. The flags are zero between launches (whoever reads a partial tile lowers its
// flag), so launches on one stream may share them.
struct StreamKWorkspace {
    float* partial_sums = nullptr;
    int* flags = nullptr;
};

inline StreamKWorkspace stream_k_workspace(int ctas, int tile_values) {
    static GrowingWorkspace partial_sums("stream-K's partial tiles");
    static GrowingWorkspace flags("stream-K's flags", true);
    return StreamKWorkspace{
        static_cast<float*>(partial_sums.at_least(static_cast<std::size_t>(ctas) * tile_values * sizeof(float))),
        static_cast<int*>(flags.at_least(static_cast<std::size_t>(ctas) * sizeof(int)))};
}

}  // namespace sgemm
