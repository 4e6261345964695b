// Which problems stage 14 splits the last wave of (plan_tail_split in
// kernels/14_edges_and_tail_split.cuh), on a GPU of 132 SMs like the H100.
#include <gtest/gtest.h>

#include "14_multistage.cuh"

namespace sgemm {
namespace {

using OnePerSm = Bf16TileConfig<128, 256, 64, 64, 64, 3, 1>;  // stage 14's tuned tiles
using TwoPerSm = Bf16TileConfig<128, 64, 64, 32, 32, 4, 2>;
constexpr int kSms = 132;

TEST(TailSplit, AFewTilesPastFullWavesAreSplitToFillTheSms) {
    const TailSplit at3072 = plan_tail_split<OnePerSm>({3072, 3072, 3072}, kSms);  // 288 tiles
    EXPECT_EQ(at3072.full_tiles, 264);
    EXPECT_EQ(at3072.parts, 5);  // 24 tiles in 5 parts: 120 blocks
    const TailSplit at5120 = plan_tail_split<OnePerSm>({5120, 5120, 5120}, kSms);  // 800 tiles
    EXPECT_EQ(at5120.full_tiles, 792);
    EXPECT_EQ(at5120.parts, 16);
}

TEST(TailSplit, PartsKeepAtLeastFourKTiles) {
    const TailSplit split = plan_tail_split<OnePerSm>({2176, 2048, 2048}, kSms);  // 136 tiles, 32 K tiles
    EXPECT_EQ(split.full_tiles, 132);
    EXPECT_EQ(split.parts, 8);  // not 33
    EXPECT_EQ(plan_tail_split<OnePerSm>({2176, 2048, 2040}, kSms).parts, 8);  // 32, the first partial
}

TEST(TailSplit, ShortKLoopsAreNotSplit) {
    EXPECT_EQ(plan_tail_split<OnePerSm>({2176, 2048, 1984}, kSms).parts, 1);  // 31 K tiles
    EXPECT_EQ(plan_tail_split<OnePerSm>({3072, 3072, 2048}, kSms).parts, 1);  // 32 K tiles for 24 tail tiles
    EXPECT_EQ(plan_tail_split<OnePerSm>({3072, 3072, 3008}, kSms).parts, 1);  // 47
}

TEST(TailSplit, FullerLastWavesAndSmallerProblemsAreNotSplit) {
    for (const GemmShape shape : {GemmShape{4096, 4096, 4096},   // 116 tiles past 396
                                  GemmShape{8192, 8192, 8192},   // 68 past 1980
                                  GemmShape{2048, 2048, 2048},   // 128 tiles, one wave
                                  GemmShape{2560, 2560, 2560}}) {  // 68 past 132
        const TailSplit split = plan_tail_split<OnePerSm>(shape, kSms);
        const int tiles = ceil_div(shape.m, 128) * ceil_div(shape.n, 256);
        EXPECT_EQ(split.parts, 1) << shape.m << "x" << shape.n;
        EXPECT_EQ(split.full_tiles, tiles) << shape.m << "x" << shape.n;
    }
}

TEST(TailSplit, OnlyBlocksThatHaveAnSmEachAreSplit) {
    EXPECT_EQ(plan_tail_split<TwoPerSm>({1536, 1536, 1536}, kSms).parts, 1);  // 288 tiles, 264 at once
}

TEST(TailSplit, FewTilesAreAllSplitToFillTheSmsOnce) {
    const TailSplit split = plan_tail_split<TwoPerSm>({542, 68, 997}, kSms);  // 10 tiles of 16 K tiles
    EXPECT_EQ(split.full_tiles, 0);
    EXPECT_EQ(split.parts, 4);  // at least four K tiles a part, not 13
    EXPECT_EQ(plan_tail_split<TwoPerSm>({542, 68, 4096}, kSms).parts, 13);  // 130 blocks
    EXPECT_EQ(plan_tail_split<OnePerSm>({256, 256, 4096}, kSms).parts, 16);  // 2 tiles of 64 K tiles
}

TEST(TailSplit, FewTilesOfShortKLoopsAreNotSplit) {
    EXPECT_EQ(plan_tail_split<TwoPerSm>({542, 68, 448}, kSms).parts, 1);  // 7 K tiles
    EXPECT_EQ(plan_tail_split<TwoPerSm>({542, 68, 449}, kSms).parts, 2);  // 8
}

TEST(TailSplit, FewTilesMeansAtMostHalfTheSms) {
    EXPECT_EQ(plan_tail_split<TwoPerSm>({1024, 512, 4096}, kSms).parts, 2);  // 64 tiles
    EXPECT_EQ(plan_tail_split<TwoPerSm>({1088, 512, 4096}, kSms).parts, 1);  // 72 tiles
}

TEST(TailSplit, NothingIsSplitWithoutAnSmCount) {
    EXPECT_EQ(plan_tail_split<OnePerSm>({3072, 3072, 3072}, 0).parts, 1);
}

}  // namespace
}  // namespace sgemm
