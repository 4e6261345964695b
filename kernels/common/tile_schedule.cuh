// Which work each CTA (or cluster) of a Hopper GEMM takes (stages 17-20). The unit is a
// "stack": the ClusterM vertically adjacent block tiles one cluster computes at once,
// in raster order. A piece of work is K tiles [k_begin, k_end) of one stack.
//   kOneTilePerCta:     a grid of one cluster per stack; each takes its own, whole.
//   kPersistent:        a grid of as many clusters as the GPU holds at once; cluster c
//                       takes stacks c, c + clusters, ..., whole.
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

#include "common/launch.cuh"

namespace sgemm {

enum class Schedule { kOneTilePerCta, kPersistent, kPersistentStreamK };

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
// (measured at N = 4096, where it spared 8 and lost 3.5 %, and at 8192, where it spared
// 62 and gained 2 %).
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

}  // namespace sgemm
