#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "driver/stage_runner.hpp"
#include "measuring/timing.hpp"

namespace sgemm {
namespace {

TEST(Timing, MedianOfOddAndEvenCounts) {
    EXPECT_DOUBLE_EQ(median({5.0, 1.0, 3.0}), 3.0);
    EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
    EXPECT_DOUBLE_EQ(median({}), 0.0);
}

TEST(Timing, RepsFitTheBudgetWithinLimits) {
    EXPECT_EQ(reps_for_budget(10.0, 1.0), 100);            // 10 ms a pair, 1 s
    EXPECT_EQ(reps_for_budget(5000.0, 1.0), kMinAutoReps);  // the naive stage at 8192
    EXPECT_EQ(reps_for_budget(0.01, 1.0), kMaxAutoReps);
}

TEST(Timing, EachKernelGetsAtLeastTwoBlocks) {
    EXPECT_EQ(blocks_per_kernel(0.001), 2);  // one before and one after the other kernel
    EXPECT_EQ(blocks_per_kernel(1.0), 2);
    EXPECT_EQ(blocks_per_kernel(4.0), 4);    // 4 s: four turns of 0.5 s each
    EXPECT_EQ(blocks_per_kernel(10.0), 10);
}

TEST(Timing, MethodsHaveTheirCsvNames) {
    EXPECT_EQ(to_string(TimingMethod::launches), "launches");
    EXPECT_EQ(to_string(TimingMethod::blocks), "blocks");
    EXPECT_EQ(to_string(TimingMethod::graph), "graph");
}

TEST(Timing, MethodsAreFoundByTheirNames) {
    for (const TimingMethod method : {TimingMethod::launches, TimingMethod::blocks, TimingMethod::graph})
        EXPECT_EQ(timing_method_named(to_string(method)), method);
    EXPECT_EQ(timing_method_names(), (std::vector<std::string>{"launches", "blocks", "graph"}));
    EXPECT_THROW(timing_method_named("alone"), std::invalid_argument);
}

TEST(Timing, TflopsCountsTwoFlopsPerMultiplyAdd) {
    EXPECT_NEAR(tflops(GemmShape{4096, 4096, 4096}, 2.0), 2.0 * 4096.0 * 4096 * 4096 / 2e-3 / 1e12, 1e-9);
}

TEST(Timing, MemoryEstimateCountsVerificationBuffers) {
    const GemmProblem problem{GemmShape{1000, 2000, 3000}, 1.0f, 0.0f};
    const std::size_t timed_only = device_bytes_needed(problem, false, 0);
    // float A, B, C, and room for bf16 copies of A and B
    EXPECT_EQ(timed_only, 4u * (1000u * 3000 + 3000u * 2000 + 1000u * 2000) + 2u * (1000u * 3000 + 3000u * 2000));
    // + a float copy of C and float64 A, B and C: 4 * 2000000 + 8 * (3000000 + 6000000 + 2000000)
    EXPECT_EQ(device_bytes_needed(problem, true, 0) - timed_only, 4u * 2000000 + 8u * 11000000);
    EXPECT_EQ(host_bytes_needed(problem, false), 0u);
}

TEST(Timing, GraphOperandSetsReachTwiceTheL2) {
    constexpr std::size_t kL2 = 50u << 20;
    EXPECT_EQ(graph_copies_for(kL2, kL2), 2);
    EXPECT_EQ(graph_copies_for(kL2 / 4, kL2), 8);
    EXPECT_EQ(graph_copies_for(kL2 / 4 + 1, kL2), 8);  // rounded up: 7.99 sets take 8
    EXPECT_EQ(graph_copies_for(4 * kL2, kL2), 1);             // one set is past the L2 already
    EXPECT_EQ(graph_copies_for(1024, kL2), kMaxGraphCopies);  // tiny problems: as many as allowed
}

TEST(Timing, OperandBytesCountWhatALaunchMustMove) {
    const GemmProblem problem{GemmShape{1000, 2000, 3000}, 1.0f, 0.0f};
    EXPECT_EQ(operand_bytes(problem, Precision::fp32), 4u * (3000000 + 6000000) + 4u * 2000000);
    EXPECT_EQ(operand_bytes(problem, Precision::bf16), 2u * (3000000 + 6000000) + 4u * 2000000);
    const GemmProblem with_c{GemmShape{1000, 2000, 3000}, 1.0f, 0.5f};
    EXPECT_EQ(operand_bytes(with_c, Precision::fp32), 4u * (3000000 + 6000000) + 8u * 2000000);
}

}  // namespace
}  // namespace sgemm
