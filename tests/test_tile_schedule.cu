// Stage 20's tile schedule (kernels/20_stream_k.cuh): every K tile of
// every stack is computed exactly once, and the kernel names exactly the clusters that
// left partial sums in each shared stack, and which of their pieces. And its tiles for a shape
// (kernels/20_hopper_tuned.cu). Stages 23 and 24's runs over split blocks and their partial slots
// (kernels/23_split_in_registers.cuh).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "20_hopper_tuned.cuh"
#include "20_stream_k.cuh"
#include "23_split_in_registers.cuh"

namespace sgemm {
namespace {

struct Case {
    int stacks, k_tiles, clusters;
};

std::vector<WorkPiece> pieces_of(const TileSchedule& schedule, int cluster) {
    std::vector<WorkPiece> pieces;
    WorkPiece piece{};
    for (int index = 0; schedule.piece(cluster, index, piece); ++index) pieces.push_back(piece);
    return pieces;
}

void expect_every_k_tile_once(const TileSchedule& schedule) {
    std::map<int, std::vector<int>> times_computed;  // stack -> count per K tile
    for (int cluster = 0; cluster < schedule.clusters; ++cluster)
        for (const WorkPiece& piece : pieces_of(schedule, cluster)) {
            ASSERT_GE(piece.stack, 0);
            ASSERT_LT(piece.stack, schedule.stacks);
            ASSERT_LT(piece.k_begin, piece.k_end);
            auto& counts = times_computed[piece.stack];
            counts.resize(schedule.k_tiles);
            for (int kt = piece.k_begin; kt < piece.k_end; ++kt) ++counts[kt];
        }
    ASSERT_EQ(static_cast<int>(times_computed.size()), schedule.stacks);
    for (const auto& [stack, counts] : times_computed)
        for (int kt = 0; kt < schedule.k_tiles; ++kt) EXPECT_EQ(counts[kt], 1) << "stack " << stack << " K tile " << kt;
}

TEST(TileSchedule, WholeStacksCoverEveryKTileOnce) {
    for (const Case c : {Case{256, 64, 66}, Case{7, 3, 7}, Case{1, 1, 1}, Case{130, 5, 66}})
        expect_every_k_tile_once(make_tile_schedule(c.stacks, c.k_tiles, std::min(c.stacks, c.clusters)));
}

TEST(TileSchedule, StreamKOnlyWhereItSparesEnough) {
    // N = 4096 and 8192 with 128x256 tiles in clusters of two on the H100's 66 clusters.
    EXPECT_FALSE(make_tile_schedule(256, 64, 66).split_tail);
    EXPECT_TRUE(make_tile_schedule(1024, 128, 66).split_tail);
    EXPECT_FALSE(make_tile_schedule(1056, 128, 66).split_tail);  // no leftover
}

TEST(TileSchedule, FewerStacksThanClustersAreSharedOutByKOverEveryClusterWhereThatPays) {
    // 1024 x 1024 x 16384 in 128x256 tiles, clusters of two: 16 stacks of 256 K tiles on 66 clusters.
    const TileSchedule spread = make_grid_schedule(16, 256, 66);
    EXPECT_EQ(spread.clusters, 66);
    EXPECT_TRUE(spread.split_tail);
    expect_every_k_tile_once(spread);
    // N = 1024 (16 stacks of 16 K tiles) and 2048 (64 of 32): too little K to share out.
    for (const auto [stacks, k_tiles] : {std::pair{16, 16}, std::pair{64, 32}}) {
        const TileSchedule whole = make_grid_schedule(stacks, k_tiles, 66);
        EXPECT_EQ(whole.clusters, stacks);
        EXPECT_FALSE(whole.split_tail);
    }
    EXPECT_EQ(make_grid_schedule(1024, 128, 66).clusters, 66);
    EXPECT_EQ(make_grid_schedule(16, 256, 0).clusters, 16);
}

TEST(TileSchedule, StreamKCoversEveryKTileOnceAndNamesEachStacksSharers) {
    for (const Case c : {Case{1024, 128, 66}, Case{4096, 256, 66}, Case{72, 32, 66}, Case{100, 80, 66}, Case{3, 64, 2},
                         Case{16, 256, 66}, Case{16, 64, 66}, Case{1, 1024, 66}, Case{8, 1024, 132}, Case{2, 2048, 66}}) {
        const TileSchedule schedule = make_tile_schedule(c.stacks, c.k_tiles, c.clusters);
        ASSERT_TRUE(schedule.split_tail) << c.stacks;
        expect_every_k_tile_once(schedule);
        // Who leaves partial sums where: each stack's sharers, in cluster order, and the
        // piece of each that lies in it.
        std::map<int, std::vector<std::pair<int, int>>> sharers;  // tail stack -> (cluster, tail piece)
        for (int cluster = 0; cluster < schedule.clusters; ++cluster) {
            const std::vector<WorkPiece> pieces = pieces_of(schedule, cluster);
            ASSERT_LE(static_cast<int>(pieces.size()), schedule.whole_rounds + 2);
            for (std::size_t i = 0; i < pieces.size(); ++i) {
                const bool shared = pieces[i].k_begin > 0 || pieces[i].k_end < schedule.k_tiles;
                EXPECT_EQ(schedule.shared_piece(static_cast<int>(i)), shared) << "cluster " << cluster;
                if (shared)
                    sharers[pieces[i].stack - schedule.tail_first_stack()].emplace_back(
                        cluster, static_cast<int>(i) - schedule.whole_rounds);
            }
        }
        // The kernel's names for them.
        ASSERT_EQ(static_cast<int>(sharers.size()), schedule.stacks - schedule.tail_first_stack());
        for (const auto& [tail_stack, found] : sharers) {
            std::vector<std::pair<int, int>> named;
            for (int i = 0; i < schedule.sharers(tail_stack); ++i) {
                const int cluster = schedule.first_sharer(tail_stack) + i;
                named.emplace_back(cluster, schedule.shared_piece_in(cluster, tail_stack));
                // Only the last sharer's piece can be its second (the kernel counts on it).
                if (i + 1 < schedule.sharers(tail_stack)) EXPECT_EQ(named.back().second, 0);
            }
            EXPECT_EQ(named, found) << "tail stack " << tail_stack;
        }
    }
}

TEST(TileSchedule, SharesOfAStackWhereManyClustersShareIt) {
    // N = 8192 in 128x256 tiles: 34 leftover stacks on 66 clusters, about two sharers each.
    EXPECT_FALSE(make_tile_schedule(1024, 128, 66).sliced);
    // 256 x 256 x 65536: one stack of 128x256 tiles in clusters of two on 66 clusters; four
    // stacks of 128x128 tiles on 132.
    EXPECT_TRUE(make_grid_schedule(1, 1024, 66).sliced);
    EXPECT_TRUE(make_grid_schedule(4, 1024, 132).sliced);
    // 1024 x 1024 x 16384 in 128x256 tiles: 16 stacks on 66 clusters, about four sharers each.
    EXPECT_FALSE(make_grid_schedule(16, 256, 66).sliced);
}

TEST(TileSchedule, TheGpuTestsOfTheLastSharerReachIt) {
    // tests/test_gpu_stages.cpp's last_sharer cases on an H100's 132 SMs. 50 x 2056 x 3000:
    // 64x128 tiles in clusters of one, 17 stacks of 47 K tiles on 132 clusters.
    constexpr int kSms = 132;
    EXPECT_EQ(tuned_tiles_for({50, 2056, 3000}, kSms), TunedTiles::kFewRows);
    const TileSchedule few_rows = make_grid_schedule(17, 47, kSms);
    EXPECT_TRUE(few_rows.split_tail && !few_rows.sliced);
    EXPECT_EQ(few_rows.whole_rounds, 0);
    // 1100 x 1024 x 3000: 128x64 tiles, 9 x 16 stacks on 132 clusters of one.
    EXPECT_EQ(tuned_tiles_for({1100, 1024, 3000}, kSms), TunedTiles::kNarrow);
    const TileSchedule after_a_round = make_grid_schedule(144, 47, kSms);
    EXPECT_TRUE(after_a_round.split_tail && !after_a_round.sliced);
    EXPECT_EQ(after_a_round.whole_rounds, 1);
}

TEST(TunedTiles, TheLargestTileThatKeepsTwoThirdsOfTheSmsBusy) {
    constexpr int kSms = 132;  // an H100: 88 busy CTAs are enough
    // Squares from 2048 up keep the tuner's 128x256 tiles (128 CTAs at 2048).
    for (const int n : {2048, 4096, 8192, 16384}) EXPECT_EQ(tuned_tiles_for({n, n, n}, kSms), TunedTiles::kWide) << n;
    EXPECT_EQ(tuned_tiles_for({1024, 6144, 4096}, kSms), TunedTiles::kWide);      // 192 CTAs
    EXPECT_EQ(tuned_tiles_for({256, 6144, 4096}, kSms), TunedTiles::kMedium);     // 48, then 96 CTAs
    // 128 rows in clusters of two 128-row CTAs: the second CTA of each has no rows.
    EXPECT_EQ(tuned_tiles_for({128, 6144, 4096}, kSms), TunedTiles::kNarrow);     // 24, 48, 96 CTAs
    EXPECT_EQ(tuned_tiles_for({256, 4096, 4096}, kSms), TunedTiles::kNarrow);     // 32, 64, then 128 CTAs
    EXPECT_EQ(tuned_tiles_for({1024, 1024, 1024}, kSms), TunedTiles::kNarrow);    // 32, 64, then 128 CTAs
    // With a long K, 128x128 tiles where neither larger tile has enough, if their stacks fit.
    EXPECT_EQ(tuned_tiles_for({256, 4096, 14336}, kSms), TunedTiles::kMedium);    // 32, then 64 CTAs
    EXPECT_EQ(tuned_tiles_for({1024, 1024, 16384}, kSms), TunedTiles::kMedium);
    EXPECT_EQ(tuned_tiles_for({256, 256, 65536}, kSms), TunedTiles::kMedium);     // none has enough
    EXPECT_EQ(tuned_tiles_for({128, 4096, 14336}, kSms), TunedTiles::kNarrow);    // a stack is 256 rows
    EXPECT_EQ(tuned_tiles_for({8192, 64, 16384}, kSms), TunedTiles::kNarrow);     // and 128 columns
    EXPECT_EQ(tuned_tiles_for({8192, 16, 8192}, kSms), TunedTiles::kNarrow);      // 64 CTAs of each
    // 64 rows or fewer take 64-row tiles: 64x256 where there are 88 of them.
    for (const int m : {1, 16, 64}) {
        EXPECT_EQ(tuned_tiles_for({m, 128256, 4096}, kSms), TunedTiles::kFewRowsWide) << m;  // 501 CTAs
        EXPECT_EQ(tuned_tiles_for({m, 6144, 4096}, kSms), TunedTiles::kFewRows) << m;        // 24 CTAs
    }
    EXPECT_EQ(tuned_tiles_for({64, 22528, 4096}, kSms), TunedTiles::kFewRowsWide);  // 88 CTAs
    EXPECT_EQ(tuned_tiles_for({64, 22272, 4096}, kSms), TunedTiles::kFewRows);      // 87
    EXPECT_EQ(tuned_tiles_for({65, 4096, 4096}, kSms), TunedTiles::kNarrow);
}

TEST(TunedTiles, NoClusterWhereCHasOneRowOfTiles) {
    constexpr int kSms = 132;
    EXPECT_EQ(tuned_tiles_for({109, 11264, 1792}, kSms), TunedTiles::kMediumOneRow);  // 88 CTAs of 128x128
    EXPECT_EQ(tuned_tiles_for({128, 11264, 1792}, kSms), TunedTiles::kMediumOneRow);
    EXPECT_EQ(tuned_tiles_for({129, 8192, 1792}, kSms), TunedTiles::kMedium);  // two rows: a cluster of two
}

TEST(TunedTiles, SixtyFourRowTilesWhereTheyLeaveFewerRowsEmpty) {
    constexpr int kSms = 132;
    EXPECT_EQ(tuned_tiles_for({137, 3968, 3968}, kSms), TunedTiles::kFewRows);  // 192 rows padded, not 256
    EXPECT_EQ(tuned_tiles_for({663, 1536, 4096}, kSms), TunedTiles::kFewRows);  // 704, not 768
    EXPECT_EQ(tuned_tiles_for({720, 1536, 4096}, kSms), TunedTiles::kNarrow);   // 768 either way
    EXPECT_EQ(tuned_tiles_for({256, 4096, 4096}, kSms), TunedTiles::kNarrow);
}

// Every unit (a split block's K tile) in exactly one run, which run_of names; each piece
// (a run's share of a split block, for one side block) in a slot of its own, below the
// slot count the launcher allocates; and the runs that the last kernel adds for a split
// block exactly the ones that touched it.
TEST(SplitBlockRuns, EveryUnitInOneRunAndEveryPieceInItsOwnSlot) {
    for (const int split_blocks : {1, 3, 32, 48, 1002})
        for (const int k_tiles : {1, 3, 64, 1024})
            for (const int side_blocks : {1, 2, 4, 16, 128}) {
                const long long units = static_cast<long long>(split_blocks) * k_tiles;
                const int runs = static_cast<int>(std::min<long long>(std::max(132 / side_blocks, 1), units));
                const SplitBlockRuns work{k_tiles, side_blocks, units, runs};
                std::set<long long> slots;
                std::vector<std::set<int>> touched(split_blocks);
                long long next_unit = 0;
                for (int run = 0; run < runs; ++run) {
                    ASSERT_EQ(work.run_start(run), next_unit);
                    ASSERT_LT(work.run_start(run), work.run_start(run + 1)) << "an empty run";
                    for (long long unit = work.run_start(run); unit < work.run_start(run + 1); ++unit) {
                        ASSERT_EQ(work.run_of(unit), run) << unit;
                        touched[unit / k_tiles].insert(run);
                    }
                    next_unit = work.run_start(run + 1);
                }
                ASSERT_EQ(next_unit, units);
                for (int split_block = 0; split_block < split_blocks; ++split_block) {
                    const long long first = static_cast<long long>(split_block) * k_tiles;
                    const int first_run = work.run_of(first), last_run = work.run_of(first + k_tiles - 1);
                    ASSERT_EQ(static_cast<int>(touched[split_block].size()), last_run - first_run + 1);
                    ASSERT_EQ(*touched[split_block].begin(), first_run);
                    for (const int run : touched[split_block])
                        for (int side_block = 0; side_block < side_blocks; ++side_block) {
                            const long long slot = work.slot(split_block, run, side_block);
                            ASSERT_LT(slot, work.slot(split_blocks, runs, 0));
                            ASSERT_TRUE(slots.insert(slot).second) << "slot " << slot << " taken twice";
                        }
                }
            }
}

}  // namespace
}  // namespace sgemm
