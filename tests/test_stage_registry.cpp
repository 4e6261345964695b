// The registry and the kernels/ directory must tell the same story: every stage file
// is registered under its number and name, and every registered stage has its file.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <ostream>
#include <regex>

#include "kernels/common/padded_launch.cuh"
#include "driver/stage_registry.hpp"

namespace sgemm {

// Names a kind where an assertion on it fails (gtest finds this beside StageKind).
static void PrintTo(StageKind kind, std::ostream* out) {
    *out << (kind == StageKind::cublas ? "cublas" : kind == StageKind::stage ? "stage" : "track");
}

namespace {

std::map<int, std::string> stage_files() {
    std::map<int, std::string> files;
    const std::regex pattern(R"((\d\d)_(\w+)\.cu)");
    for (const auto& entry : std::filesystem::directory_iterator(SGEMM_SOURCE_DIR "/kernels")) {
        std::smatch match;
        const std::string filename = entry.path().filename().string();
        if (std::regex_match(filename, match, pattern)) files[std::stoi(match[1])] = match[2];
    }
    return files;
}

TEST(StageRegistry, MatchesTheFilesInKernels) {
    const auto files = stage_files();
    ASSERT_FALSE(files.empty());
    for (const auto& [number, name] : files) {
        const Stage* stage = find_stage(number);
        ASSERT_NE(stage, nullptr) << fmt::format("kernels/{:02}_{}.cu is not registered", number, name);
        EXPECT_EQ(stage->name, name) << "stage " << number;
    }
    for (const Stage& stage : all_stages()) {
        if (stage.is_cublas()) continue;
        EXPECT_TRUE(files.count(stage.number))
            << fmt::format("stage {} has no kernels/{:02}_{}.cu", stage.number, stage.number, stage.name);
    }
}

TEST(StageRegistry, NumberedInReadingOrderFromCublas) {
    const auto stages = all_stages();
    ASSERT_GE(stages.size(), 6u);
    EXPECT_TRUE(stages[0].is_cublas());
    EXPECT_EQ(stages[0].number, 0);
    for (std::size_t i = 0; i < stages.size(); ++i) {
        EXPECT_EQ(stages[i].number, static_cast<int>(i));
        EXPECT_FALSE(stages[i].summary.empty());
        if (i == 0) continue;
        // Exactly one launcher, the one of the stage's precision; an FP8 stage takes a scaling.
        const Precision precision = stages[i].precision;
        EXPECT_EQ(stages[i].launch != nullptr, precision == Precision::fp32) << "stage " << i;
        EXPECT_EQ(stages[i].launch_bf16 != nullptr, precision == Precision::bf16) << "stage " << i;
        EXPECT_EQ(stages[i].launch_fp8 != nullptr, precision == Precision::fp8) << "stage " << i;
        EXPECT_EQ(stages[i].fp8_scalings != 0, precision == Precision::fp8) << "stage " << i;
    }
    EXPECT_EQ(find_stage(-1), nullptr);
    EXPECT_EQ(find_stage(static_cast<int>(stages.size())), nullptr);
}

int launcher_count(const Stage& stage) {
    return (stage.launch != nullptr) + (stage.launch_bf16 != nullptr) + (stage.launch_fp8 != nullptr);
}

bool has_launcher_of_its_precision(const Stage& stage) {
    switch (stage.precision) {
        case Precision::fp32: return stage.launch != nullptr;
        case Precision::bf16: return stage.launch_bf16 != nullptr;
        case Precision::fp8: return stage.launch_fp8 != nullptr;
    }
    return false;
}

// The kind is declared, not read off the launchers: it must still agree with them. Stage 0
// alone is cuBLAS, with no launcher; every other stage and every track has the launcher of
// its precision and no other; every track, and nothing else, has a choice of kernel.
TEST(StageRegistry, KindsMatchTheLaunchers) {
    for (const Stage& stage : all_stages()) {
        const bool cublas = stage.number == 0;
        EXPECT_EQ(stage.kind, cublas ? StageKind::cublas : StageKind::stage) << "stage " << stage.number;
        EXPECT_EQ(stage.is_cublas(), cublas) << "stage " << stage.number;
        EXPECT_FALSE(stage.is_track()) << "stage " << stage.number;
        EXPECT_EQ(stage.choose, nullptr) << "stage " << stage.number;
        EXPECT_EQ(launcher_count(stage), cublas ? 0 : 1) << "stage " << stage.number;
        if (!cublas) EXPECT_TRUE(has_launcher_of_its_precision(stage)) << "stage " << stage.number;
    }
    for (const Stage& track : all_tracks()) {
        EXPECT_EQ(track.kind, StageKind::track) << "track " << track.name;
        EXPECT_TRUE(track.is_track()) << "track " << track.name;
        EXPECT_FALSE(track.is_cublas()) << "track " << track.name;
        EXPECT_EQ(track.number, kTrackNumber) << "track " << track.name;
        EXPECT_NE(track.choose, nullptr) << "track " << track.name;
        EXPECT_EQ(launcher_count(track), 1) << "track " << track.name;
        EXPECT_TRUE(has_launcher_of_its_precision(track)) << "track " << track.name;
    }
}

TEST(StageRegistry, FirstThreeStagesTakeAnyShape) {
    for (int number = 1; number <= 3; ++number) {
        EXPECT_TRUE(find_stage(number)->shape_rule.accepts(GemmShape{1, 1, 1}));
        EXPECT_TRUE(find_stage(number)->shape_rule.accepts(GemmShape{127, 33, 65}));
    }
}

TEST(ShapeRule, DescribesAndRefuses) {
    const ShapeRule rule{128, 128, 8};
    EXPECT_EQ(rule.describe(), "M%128 N%128 K%8");
    EXPECT_EQ(ShapeRule{}.describe(), "any");
    EXPECT_TRUE(rule.accepts(GemmShape{256, 128, 16}));
    EXPECT_FALSE(rule.accepts(GemmShape{256, 128, 12}));

    const Stage& stage = *find_stage(5);
    EXPECT_FALSE(shape_refusal(stage, GemmShape{4096, 4096, 4096}).has_value());
    const auto refusal = shape_refusal(stage, GemmShape{1000, 1000, 1000});
    ASSERT_TRUE(refusal.has_value());
    EXPECT_NE(refusal->find("stage 5"), std::string::npos);
    EXPECT_NE(refusal->find("M=1000"), std::string::npos);
}

TEST(ShapeRule, PaddedStagesTakeAnyShape) {
    const ShapeRule padded{1, 8, 8, true};
    EXPECT_EQ(padded.describe(), "any (N%8 K%8 padded)");
    EXPECT_FALSE(padded.accepts(GemmShape{127, 129, 67}));  // the kernels do not...
    EXPECT_TRUE(padded.runs(GemmShape{127, 129, 67}));      // ...the stage does, padded
    const GemmShape multiples{padded.m_multiple, padded.n_multiple, padded.k_multiple};
    const GemmShape shape = padded_shape(GemmShape{127, 129, 67}, multiples);
    EXPECT_EQ(shape.m, 127);
    EXPECT_EQ(shape.n, 136);
    EXPECT_EQ(shape.k, 72);
    EXPECT_EQ(padded_shape(GemmShape{128, 136, 72}, multiples).n, 136);  // already whole: as it is
    EXPECT_TRUE(takes_as_is(GemmShape{128, 136, 72}, multiples));
    EXPECT_FALSE(takes_as_is(GemmShape{128, 136, 71}, multiples));
    for (int number = 15; number <= 24; ++number)
        EXPECT_FALSE(shape_refusal(*find_stage(number), GemmShape{1000, 1001, 999}).has_value()) << number;
}

TEST(COutputRefusal, Bf16COnlyOnStagesThatWriteItAndOnTmaRows) {
    const GemmShape aligned{256, 264, 136}, odd_n{256, 100, 136};
    EXPECT_FALSE(c_output_refusal(*find_stage(10), COutput::fp32, odd_n).has_value());
    const auto fp32_only = c_output_refusal(*find_stage(10), COutput::bf16, aligned);
    ASSERT_TRUE(fp32_only.has_value());
    EXPECT_NE(fp32_only->find("writes FP32 C only"), std::string::npos);
    for (const int number : {19, 20, 25, 30}) {
        EXPECT_FALSE(c_output_refusal(*find_stage(number), COutput::bf16, aligned).has_value()) << number;
        EXPECT_TRUE(c_output_refusal(*find_stage(number), COutput::bf16, odd_n).has_value()) << number;
    }
    for (const Stage& stage : all_stages())
        EXPECT_EQ(stage.launch_bf16_c != nullptr, stage.number == 19 || stage.number == 20 || stage.number == 25 ||
                                                     stage.number == 30)
            << stage.number;
    EXPECT_FALSE(c_output_refusal(*find_track("bf16"), COutput::bf16, aligned).has_value());
    EXPECT_TRUE(c_output_refusal(*find_track("bf16"), COutput::bf16, odd_n).has_value());
    EXPECT_TRUE(c_output_refusal(*find_track("fp32-tc"), COutput::bf16, aligned).has_value());
}

// A stage runs its own kernel: on padded copies off its multiples, never another stage's.
TEST(KernelChoice, AStageRunsItsOwnKernel) {
    for (const Stage& stage : all_stages())
        for (const GemmShape shape : {GemmShape{4096, 4096, 4096}, GemmShape{1000, 1001, 999}}) {
            if (shape_refusal(stage, shape)) continue;
            const KernelChoice choice = kernel_choice(stage, shape);
            EXPECT_EQ(choice.stage, stage.number);
            EXPECT_EQ(choice.padded, !stage.shape_rule.accepts(shape)) << stage.number;
        }
    EXPECT_EQ(kernel_label(KernelChoice{20, true}), "20 padded");
    EXPECT_EQ(kernel_label(KernelChoice{10}), "10");
    EXPECT_EQ(label(*find_stage(7)), "7");
    EXPECT_EQ(label(*find_track("fp32-tc")), "fp32-tc");
    EXPECT_EQ(describe(*find_stage(7)), "stage 7 (bank_conflict_free)");
    EXPECT_EQ(describe(*find_track("bf16")), "track bf16");
}

TEST(ArchitectureRefusal, NamesWhatIsMissing) {
    Stage hopper_only = *find_stage(1);
    hopper_only.min_compute_capability = 90;
    EXPECT_FALSE(architecture_refusal(hopper_only, 90, BuildTarget{90, false}).has_value());
    const auto old_gpu = architecture_refusal(hopper_only, 80, BuildTarget{90, false});
    ASSERT_TRUE(old_gpu.has_value());
    EXPECT_NE(old_gpu->find("this GPU is sm_80"), std::string::npos);
    const auto old_build = architecture_refusal(hopper_only, 90, BuildTarget{80, false});
    ASSERT_TRUE(old_build.has_value());
    EXPECT_NE(old_build->find("built for sm_80"), std::string::npos);
}

TEST(ArchitectureRefusal, Sm90aStagesNeedHopperAndAnSm90aBuild) {
    for (const Stage& stage : all_stages()) {
        if (!stage.needs_sm90a) continue;
        EXPECT_FALSE(architecture_refusal(stage, 90, BuildTarget{90, true}).has_value()) << stage.number;
        const auto plain_sm90 = architecture_refusal(stage, 90, BuildTarget{90, false});
        ASSERT_TRUE(plain_sm90.has_value());
        EXPECT_NE(plain_sm90->find("make ARCH=90a"), std::string::npos);
        const auto blackwell = architecture_refusal(stage, 100, BuildTarget{90, true});
        ASSERT_TRUE(blackwell.has_value());
        EXPECT_NE(blackwell->find("only on Hopper"), std::string::npos);
        EXPECT_TRUE(architecture_refusal(stage, 80, BuildTarget{80, false}).has_value());
    }
}

}  // namespace
}  // namespace sgemm
