// How many parts stage 10 splits K into (k_parts in kernels/10_tuned.cuh), on a GPU that
// runs 264 of its blocks at once, like the H100 (132 SMs, two 128x128 blocks each); and
// which edge tests its kernel takes for a shape (with_edge_tests); which tile an id names
// (with_stage10_tile); the order of a K step's FMAs (OuterProductOrder).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "10_tuned.cuh"

namespace sgemm {
namespace {

constexpr int kSlots = 264;

int parts_for(int m, int n, int k) { return k_parts(ceil_div(m, 128) * ceil_div(n, 128), ceil_div(k, 8), kSlots); }

TEST(KSplit, SquaresThatFillTheGpuAreNotSplit) {
    for (const int size : {2048, 4096, 8192, 16384}) EXPECT_EQ(parts_for(size, size, size), 1) << size;
}

TEST(KSplit, FewTilesSplitUntilTheyFillAWave) {
    EXPECT_EQ(parts_for(1024, 1024, 1024), 4);   // 64 tiles: 256 blocks
    EXPECT_EQ(parts_for(1024, 1024, 16384), 4);  // the same tiles, a long K
    EXPECT_EQ(parts_for(64, 4096, 4096), 8);     // 32 tiles of a 64-token layer
}

TEST(KSplit, ALastWaveHalfEmptyIsSplitWhenThatSavesTime) {
    // 384 tiles: two waves, the second half empty; in two parts, three full ones of half the K.
    EXPECT_EQ(parts_for(1024, 6144, 4096), 2);
}

TEST(KSplit, PartsKeepAtLeastSixteenKTiles) {
    EXPECT_EQ(parts_for(1024, 1024, 128), 1);  // 16 K tiles
    EXPECT_EQ(parts_for(1024, 1024, 256), 2);
}

TEST(KSplit, WithoutAnOccupancyFigureNothingIsSplit) { EXPECT_EQ(k_parts(64, 128, 0), 1); }

EdgeTests edge_tests_for(const GemmShape& shape) {
    EdgeTests chosen{};
    with_edge_tests<TunedConfig>(shape, [&](auto edges) { chosen = decltype(edges)::value; });
    return chosen;
}

// Each operand keeps its float4s where its own rows allow: A's rows are K floats long, B's
// and C's N.
TEST(EdgeTestsFor, EachOperandAsItsOwnRowsAllow) {
    EXPECT_EQ(edge_tests_for({256, 256, 256}), EdgeTests::kNone);        // whole tiles
    EXPECT_EQ(edge_tests_for({100, 68, 260}), EdgeTests::kPerFloat4);    // rows 16-byte aligned
    EXPECT_EQ(edge_tests_for({256, 256, 252}), EdgeTests::kPerFloat4);   // K off the tile, not off 4
    EXPECT_EQ(edge_tests_for({256, 256, 131}), EdgeTests::kAPerFloat);   // K off 4: A alone
    EXPECT_EQ(edge_tests_for({256, 45, 256}), EdgeTests::kBCPerFloat);   // N off 4: B and C alone
    EXPECT_EQ(edge_tests_for({77, 45, 131}), EdgeTests::kPerFloat);      // both
    EXPECT_TRUE(a_per_float(EdgeTests::kAPerFloat) && !bc_per_float(EdgeTests::kAPerFloat));
    EXPECT_TRUE(bc_per_float(EdgeTests::kBCPerFloat) && !a_per_float(EdgeTests::kBCPerFloat));
}

// An id names its tile's Config; an id of no tile throws rather than launch nothing.
TEST(Stage10TileIds, EachIdNamesItsTileAndNoOtherIdIsTaken) {
    int block_m = 0;
    with_stage10_tile(kTunedTileId, [&](auto config) { block_m = decltype(config)::kBlockM; });
    EXPECT_EQ(block_m, TunedConfig::kBlockM);
    with_stage10_tile(3, [&](auto config) { block_m = decltype(config)::kBlockM; });
    EXPECT_EQ(block_m, Rows16Config::kBlockM);
    EXPECT_THROW(with_stage10_tile(7, [](auto) {}), std::logic_error);
    EXPECT_THROW(with_stage10_tile(-1, [](auto) {}), std::logic_error);
}

}  // namespace
}  // namespace sgemm

namespace sgemm {
namespace {

// A K step's FMAs (OuterProductOrder) take every sum of a thread once, in every tile, and each
// shares an operand with the one before: a row or a column. Strips of one column where a
// thread holds at most 32 sums, of two at 64, row by row at 8 x 16.
template <class Config>
void expect_each_sum_once_each_fma_sharing_an_operand() {
    using Order = OuterProductOrder<Config>;
    constexpr int kSums = Config::kThreadM * Config::kThreadN;
    std::vector<int> seen(kSums, 0);
    for (int f = 0; f < kSums; ++f) {
        const int row = Order::row(f), column = Order::column(f);
        ASSERT_TRUE(row >= 0 && row < Config::kThreadM && column >= 0 && column < Config::kThreadN);
        ++seen[row * Config::kThreadN + column];
        if (f > 0 && Order::kInStrips)
            EXPECT_TRUE(row == Order::row(f - 1) || column == Order::column(f - 1)) << f;
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), kSums);
}

TEST(OuterProductOrder, EverySumOnceInEveryTileInStripsOfOneOrTwoWhereAThreadHoldsAtMost64) {
    for (int id = 0; id < 7; ++id)
        with_stage10_tile(id, [](auto config) { expect_each_sum_once_each_fma_sharing_an_operand<decltype(config)>(); });
    EXPECT_FALSE(OuterProductOrder<TunedConfig>::kInStrips);          // 8 x 16
    EXPECT_EQ(OuterProductOrder<Rows32Config>::kStripColumns, 2);     // 8 x 8
    EXPECT_EQ(OuterProductOrder<Rows16Config>::kStripColumns, 1);     // 4 x 8
    EXPECT_EQ(OuterProductOrder<Columns32Config>::kStripColumns, 1);  // 8 x 4
    // Down the 16-row blocks' first column to row 3, then up the second from row 3.
    EXPECT_EQ(OuterProductOrder<Rows16Config>::row(3), 3);
    EXPECT_EQ(OuterProductOrder<Rows16Config>::row(4), 3);
    EXPECT_EQ(OuterProductOrder<Rows16Config>::column(4), 1);
    // Down the first strip of two columns, its last row (7) ending on column 0; up the next
    // from row 7, column 2.
    EXPECT_EQ(OuterProductOrder<Rows32Config>::row(15), 7);
    EXPECT_EQ(OuterProductOrder<Rows32Config>::column(15), 0);
    EXPECT_EQ(OuterProductOrder<Rows32Config>::row(16), 7);
    EXPECT_EQ(OuterProductOrder<Rows32Config>::column(16), 2);
}

}  // namespace
}  // namespace sgemm
