// How many parts stage 10 splits K into (k_parts in kernels/10_tuned.cuh), on a GPU that
// runs 264 of its blocks at once, like the H100 (132 SMs, two 128x128 blocks each).
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sgemm
