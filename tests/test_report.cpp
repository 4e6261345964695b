// What the binary reports of a stage's fraction of its ceiling: where the ceiling was
// measured, the fraction in the summary and the CSV row; where it was not (a GPU or build
// that cannot run its instruction), a dash in the summary and an empty field in the row,
// never 0.
#include <gtest/gtest.h>

#include <string>

#include "driver/report.hpp"
#include "driver/stage_registry.hpp"
#include "measuring/ceilings.hpp"

namespace sgemm {
namespace {

// Stage 26 at 4096, timed at 0.1 ms (1374.4 TFLOPS), against an FP8 wgmma ceiling of
// `ceiling_tflops` (0: not measured). The figures are made up.
StageResult fp8_result(double ceiling_tflops) {
    StageResult result;
    result.stage = find_stage(26);
    result.problem = GemmProblem{GemmShape{4096, 4096, 4096}, 1.0f, 0.0f};
    result.timing.stage_median_ms = 0.1;
    result.timing.cublas_median_ms = 0.1;
    result.ceiling = Ceiling{"FP8 wgmma ceiling", kWgmmaFp8Ceiling, ceiling_tflops, std::nullopt};
    result.c_output = COutput::bf16;
    result.kernel = KernelChoice{26};
    result.fp8_scaling = Fp8Scaling::tensor;
    return result;
}

DeviceInfo test_device() {
    DeviceInfo device;
    device.name = "Test GPU";
    return device;
}

// The summary's line of a result: its last line.
std::string summary_line(const StageResult& result) {
    std::string table = summary_table(std::span<const StageResult>(&result, 1));
    table.pop_back();  // the final newline
    return table.substr(table.rfind('\n') + 1);
}

// Characters as they show, an en dash one: the columns line up when these agree.
std::size_t display_width(const std::string& text) {
    std::size_t width = 0;
    for (const char ch : text) width += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    return width;
}

TEST(Report, MeasuredCeilingGivesTheFraction) {
    const StageResult result = fp8_result(2000.0);
    ASSERT_TRUE(result.fraction_of_ceiling());
    EXPECT_NEAR(*result.fraction_of_ceiling(), tflops(result.problem.shape, 0.1) / 2000.0, 1e-12);
    const ResultRow row = to_result_row(result, test_device());
    EXPECT_EQ(row.ceiling, "wgmma_fp8");
    ASSERT_TRUE(row.fraction_of_peak);
    EXPECT_DOUBLE_EQ(*row.fraction_of_peak, *result.fraction_of_ceiling());
    EXPECT_NE(summary_line(result).find(" 68.7% "), std::string::npos) << summary_line(result);
}

TEST(Report, UnmeasuredCeilingIsADashAndAnEmptyField) {
    const StageResult result = fp8_result(0.0);
    EXPECT_FALSE(result.fraction_of_ceiling());
    const ResultRow row = to_result_row(result, test_device());
    EXPECT_FALSE(row.fraction_of_peak);
    EXPECT_EQ(row.ceiling, "wgmma_fp8");  // which ceiling it would be of
    EXPECT_NE(csv_line(row).find(",1,,wgmma_fp8,"), std::string::npos) << csv_line(row);  // ratio, fraction, ceiling

    const std::string line = summary_line(result);
    EXPECT_EQ(line.find(" 0.0%"), std::string::npos) << line;
    // The dash stands where the fraction stands, right-aligned in the same column.
    EXPECT_EQ(display_width(line), display_width(summary_line(fp8_result(2000.0))));
    EXPECT_EQ(line.find("–"), summary_line(fp8_result(2000.0)).find("68.7%") + 4);
}

}  // namespace
}  // namespace sgemm
