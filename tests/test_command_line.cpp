#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/command_line.hpp"

namespace sgemm {
namespace {

ParsedCommandLine parse(std::vector<std::string> words) {
    words.insert(words.begin(), "sgemm");
    std::vector<const char*> argv;
    for (const std::string& word : words) argv.push_back(word.c_str());
    return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

using Outcome = ParsedCommandLine::Outcome;

TEST(CommandLine, StageAndSize) {
    const auto parsed = parse({"3", "512"});
    ASSERT_EQ(parsed.outcome, Outcome::run) << parsed.text;
    EXPECT_EQ(parsed.request.stage->number, 3);
    EXPECT_FALSE(parsed.request.run_all);
    const GemmShape& shape = parsed.request.settings.problem.shape;
    EXPECT_EQ(shape.m, 512);
    EXPECT_EQ(shape.n, 512);
    EXPECT_EQ(shape.k, 512);
    EXPECT_TRUE(parsed.request.settings.verify);
    EXPECT_EQ(parsed.request.settings.problem.alpha, 1.0f);
    EXPECT_EQ(parsed.request.settings.problem.beta, 0.0f);
}

TEST(CommandLine, RectangularAndOptions) {
    const auto parsed = parse({"all", "-m", "100", "-n", "7", "-k", "33", "--alpha", "2.5", "--beta",
                               "-0.5", "--seed", "99", "--reps", "4", "--no-verify", "--csv", "out.csv"});
    ASSERT_EQ(parsed.outcome, Outcome::run) << parsed.text;
    const Request& request = parsed.request;
    EXPECT_TRUE(request.run_all);
    EXPECT_EQ(request.settings.problem.shape.m, 100);
    EXPECT_EQ(request.settings.problem.shape.n, 7);
    EXPECT_EQ(request.settings.problem.shape.k, 33);
    EXPECT_EQ(request.settings.problem.alpha, 2.5f);
    EXPECT_EQ(request.settings.problem.beta, -0.5f);
    EXPECT_EQ(request.settings.seed, 99u);
    EXPECT_EQ(request.settings.timing.reps, 4);
    EXPECT_EQ(request.settings.timing.method, TimingMethod::launches);
    EXPECT_FALSE(request.settings.verify);
    EXPECT_EQ(request.csv_path, "out.csv");
}

// A track by its name, fp32-tc's dash no range.
TEST(CommandLine, Tracks) {
    for (const std::string name : {"fp32", "bf16", "fp32-tc"}) {
        const auto parsed = parse({name, "-m", "384", "-n", "4096", "-k", "1000"});
        ASSERT_EQ(parsed.outcome, Outcome::run) << parsed.text;
        ASSERT_NE(parsed.request.stage, nullptr) << name;
        EXPECT_TRUE(parsed.request.stage->is_track());
        EXPECT_EQ(parsed.request.stage->name, name);
        EXPECT_FALSE(parsed.request.run_all);
    }
    const auto bf16_c = parse({"bf16", "256", "--c-type", "bf16"});
    ASSERT_EQ(bf16_c.outcome, Outcome::run) << bf16_c.text;
    const auto fp32_c_only = parse({"fp32-tc", "256", "--c-type", "bf16"});
    EXPECT_EQ(fp32_c_only.outcome, Outcome::usage_error);
    EXPECT_NE(fp32_c_only.text.find("track fp32-tc writes FP32 C only"), std::string::npos) << fp32_c_only.text;
}

TEST(CommandLine, AllIsEveryStage) {
    const auto parsed = parse({"all", "256"});
    ASSERT_EQ(parsed.outcome, Outcome::run) << parsed.text;
    EXPECT_TRUE(parsed.request.run_all);
    EXPECT_EQ(parsed.request.first_stage, 0);
    EXPECT_GE(parsed.request.last_stage, 22);
}

TEST(CommandLine, StageRange) {
    const auto parsed = parse({"11-14", "256"});
    ASSERT_EQ(parsed.outcome, Outcome::run) << parsed.text;
    EXPECT_TRUE(parsed.request.run_all);
    EXPECT_EQ(parsed.request.stage, nullptr);
    EXPECT_EQ(parsed.request.first_stage, 11);
    EXPECT_EQ(parsed.request.last_stage, 14);
    EXPECT_EQ(parse({"7-7", "256"}).request.last_stage, 7);
}

TEST(CommandLine, DataKinds) {
    EXPECT_EQ(parse({"3", "512"}).request.settings.data, InputData::uniform);
    EXPECT_EQ(parse({"3", "512", "--data", "wide"}).request.settings.data, InputData::wide);
    EXPECT_EQ(parse({"all", "512", "--data", "exact"}).request.settings.data, InputData::exact);
}

TEST(CommandLine, TimingInBlocksIsPacedByTheBudget) {
    const auto parsed = parse({"14", "4096", "--timing", "blocks", "--time-budget", "4"});
    ASSERT_EQ(parsed.outcome, Outcome::run) << parsed.text;
    EXPECT_EQ(parsed.request.settings.timing.method, TimingMethod::blocks);
    EXPECT_EQ(parsed.request.settings.timing.time_budget_s, 4.0);
    EXPECT_EQ(parsed.request.settings.timing.reps, 0);
}

TEST(CommandLine, SizeWithOneOverride) {
    const auto parsed = parse({"1", "64", "-k", "3"});
    ASSERT_EQ(parsed.outcome, Outcome::run) << parsed.text;
    EXPECT_EQ(parsed.request.settings.problem.shape.m, 64);
    EXPECT_EQ(parsed.request.settings.problem.shape.k, 3);
}

TEST(CommandLine, NoArgumentsPrintsUsageWithStageList) {
    const auto parsed = parse({});
    EXPECT_EQ(parsed.outcome, Outcome::print_and_exit);
    EXPECT_NE(parsed.text.find("Usage"), std::string::npos);
    EXPECT_NE(parsed.text.find("2d_blocktiling"), std::string::npos);
}

TEST(CommandLine, ProfileOneStage) {
    const auto parsed = parse({"7", "256", "--profile"});
    ASSERT_EQ(parsed.outcome, Outcome::run) << parsed.text;
    EXPECT_TRUE(parsed.request.profile);
    EXPECT_EQ(parsed.request.stage->number, 7);
}

TEST(CommandLine, ProfileTheCublasCallAStageIsTimedAgainst) {
    const auto parsed = parse({"bf16", "-m", "16", "-n", "4096", "-k", "4096", "--profile-cublas"});
    ASSERT_EQ(parsed.outcome, Outcome::run) << parsed.text;
    EXPECT_TRUE(parsed.request.profile);
    EXPECT_TRUE(parsed.request.profile_cublas);
    EXPECT_FALSE(parse({"7", "256", "--profile"}).request.profile_cublas);
}

TEST(CommandLine, PeakMeasuresCeilingsAndTakesACsv) {
    const auto parsed = parse({"peak", "--csv", "ceilings.csv"});
    ASSERT_EQ(parsed.outcome, Outcome::run) << parsed.text;
    EXPECT_TRUE(parsed.request.peak);
    EXPECT_EQ(parsed.request.stage, nullptr);
    EXPECT_FALSE(parsed.request.run_all);
    EXPECT_EQ(parsed.request.csv_path, "ceilings.csv");
    EXPECT_FALSE(parse({"3", "512"}).request.peak);
}

TEST(CommandLine, ListNeedsNoStage) {
    const auto parsed = parse({"--list"});
    ASSERT_EQ(parsed.outcome, Outcome::run);
    EXPECT_TRUE(parsed.request.list_stages);
}

struct BadInput {
    std::vector<std::string> words;
    std::string expected_message_part;
};

class CommandLineErrors : public ::testing::TestWithParam<BadInput> {};

TEST_P(CommandLineErrors, OneLineUsageError) {
    const auto parsed = parse(GetParam().words);
    ASSERT_EQ(parsed.outcome, Outcome::usage_error);
    EXPECT_NE(parsed.text.find(GetParam().expected_message_part), std::string::npos) << parsed.text;
    EXPECT_EQ(parsed.text.find('\n'), std::string::npos) << parsed.text;
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, CommandLineErrors,
    ::testing::Values(BadInput{{"99", "128"}, "unknown stage or track '99'"},
                      BadInput{{"fast", "128"}, "unknown stage or track 'fast'"},
                      BadInput{{"fp32-tc-2", "128"}, "unknown stage range 'fp32-tc-2'"},
                      BadInput{{"1", "0"}, "size must be a positive integer, got '0'"},
                      BadInput{{"1", "abc"}, "size must be a positive integer, got 'abc'"},
                      BadInput{{"1", "12x"}, "size must be a positive integer"},
                      BadInput{{"1", "--", "-5"}, "size must be a positive integer, got '-5'"},
                      BadInput{{"1", "99999999999"}, "too large"},
                      BadInput{{"1", "100000"}, "fewer than 2^31"},
                      BadInput{{"1"}, "give a size"},
                      BadInput{{"1", "-m", "4", "-n", "4"}, "K is missing"},
                      BadInput{{"1", "64", "-n", "-3"}, ""},
                      BadInput{{"5", "1000"}, "stage 5 (2d_blocktiling) needs M a multiple of 128, N a multiple of 128, K a multiple of 8"},
                      BadInput{{"1", "64", "--reps", "0"}, "--reps"},
                      BadInput{{"1", "64", "--bogus"}, "--bogus"},
                      BadInput{{"1", "64", "--timing", "alone"}, "--timing"},
                      BadInput{{"1", "64", "--data", "normal"}, "--data"},
                      BadInput{{"1", "64", "--timing", "blocks", "--reps", "5"}, "--timing blocks is paced by --time-budget"},
                      BadInput{{"1", "64", "--alpha", "x"}, "--alpha"},
                      BadInput{{"all", "64", "--profile"}, "--profile takes one stage"},
                      BadInput{{"1-4", "64", "--profile"}, "--profile takes one stage, not '1-4'"},
                      BadInput{{"14-11", "64"}, "stage range '14-11' runs backwards"},
                      BadInput{{"3-99", "64"}, "unknown stage range '3-99'"},
                      BadInput{{"3-", "64"}, "unknown stage range '3-'"},
                      BadInput{{"peak", "4096"}, "peak takes no size"},
                      BadInput{{"peak", "-k", "64"}, "peak takes no size"},
                      BadInput{{"peak", "--profile"}, "--profile takes one stage, not 'peak'"},
                      BadInput{{"all", "64", "--profile-cublas"}, "--profile takes one stage"}));

}  // namespace
}  // namespace sgemm
