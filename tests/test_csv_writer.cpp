#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "driver/csv_writer.hpp"
#include "scratch_file.hpp"

namespace sgemm {
namespace {

// Splits one CSV line, honouring RFC 4180 quotes.
std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char ch = line[i];
        if (quoted && ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
            fields.back() += '"';
            ++i;
        } else if (ch == '"') {
            quoted = !quoted;
        } else if (ch == ',' && !quoted) {
            fields.emplace_back();
        } else {
            fields.back() += ch;
        }
    }
    return fields;
}

ResultRow sample_row() {
    ResultRow row;
    row.stage = "5";
    row.name = "2d_blocktiling";
    row.precision = "fp32";
    row.m = row.n = row.k = 4096;
    row.alpha = 1.5;
    row.beta = -0.25;
    row.median_ms = 6.25;
    row.tflops = 21.99;
    row.cublas_median_ms = 2.7;
    row.cublas_tflops = 50.9;
    row.ratio_to_cublas = 0.432;
    row.fraction_of_peak = 0.33;
    row.ceiling = "fp32_ffma";
    row.rel_error_fp64 = 1.5e-7;
    row.worst_error_over_budget = 0.02;
    row.verified = "true";
    row.gpu = "NVIDIA H100 80GB HBM3";
    row.driver = "580.95.05";
    row.cuda = "13.0";
    row.timing = "blocks";
    row.reps = 100;
    row.seed = 424242;
    row.sm_clock_mhz = 1453.25;
    row.cublas_sm_clock_mhz = 1370.5;
    row.ceiling_sm_clock_mhz = 1980.0;
    row.data = "wide";
    row.kernel = "5";
    row.sources = "0123456789ab";
    return row;
}

std::vector<std::string> read_lines(const std::filesystem::path& path) {
    std::ifstream file(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(file, line);) lines.push_back(line);
    return lines;
}

TEST(CsvWriter, LineHasOneFieldPerColumn) {
    const auto header = split_csv(csv_header());
    const auto fields = split_csv(csv_line(sample_row()));
    ASSERT_EQ(header.size(), 30u);
    ASSERT_EQ(fields.size(), header.size());
    EXPECT_EQ(header[0], "stage");
    EXPECT_EQ(fields[0], "5");
    EXPECT_EQ(fields[1], "2d_blocktiling");
    EXPECT_EQ(fields[6], "1.5");
    EXPECT_EQ(fields[7], "-0.25");
    EXPECT_EQ(header[12], "ratio_to_cublas");
    EXPECT_EQ(fields[12], "0.432");
    EXPECT_EQ(header[13], "fraction_of_peak");
    EXPECT_EQ(fields[13], "0.33");
    EXPECT_EQ(header[14], "ceiling");
    EXPECT_EQ(fields[14], "fp32_ffma");
    EXPECT_EQ(fields[17], "true");
    EXPECT_EQ(fields[18], "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(header[21], "timing");
    EXPECT_EQ(fields[21], "blocks");
    EXPECT_EQ(header[22], "reps");
    EXPECT_EQ(fields[22], "100");
    EXPECT_EQ(fields[23], "424242");
    EXPECT_EQ(header[24], "sm_clock_mhz");
    EXPECT_EQ(fields[24], "1453.25");
    EXPECT_EQ(header[25], "cublas_sm_clock_mhz");
    EXPECT_EQ(fields[25], "1370.5");
    EXPECT_EQ(header[26], "ceiling_sm_clock_mhz");
    EXPECT_EQ(fields[26], "1980");
    EXPECT_EQ(header[27], "data");
    EXPECT_EQ(fields[27], "wide");
    EXPECT_EQ(header[28], "kernel");
    EXPECT_EQ(fields[28], "5");
    EXPECT_EQ(header[29], "sources");
    EXPECT_EQ(fields[29], "0123456789ab");
}

// A track's row names the track in the stage column and the kernel it chose in the last.
TEST(CsvWriter, TrackRowNamesTheTrackAndItsKernel) {
    ResultRow row = sample_row();
    row.stage = "fp32-tc";
    row.name = "fp32-tc";
    row.kernel = "24 padded";
    const auto fields = split_csv(csv_line(row));
    ASSERT_EQ(fields.size(), 30u);
    EXPECT_EQ(fields[0], "fp32-tc");
    EXPECT_EQ(fields[28], "24 padded");
}

TEST(CsvWriter, UnreadClocksLeaveTheirFieldsEmpty) {
    ResultRow row = sample_row();
    row.sm_clock_mhz.reset();
    row.cublas_sm_clock_mhz.reset();
    row.ceiling_sm_clock_mhz.reset();
    const auto fields = split_csv(csv_line(row));
    ASSERT_EQ(fields.size(), 30u);
    EXPECT_EQ(fields[24], "");
    EXPECT_EQ(fields[25], "");
    EXPECT_EQ(fields[26], "");
}

// A ceiling this GPU or build could not measure: the fraction's field is empty, never 0, and
// the ceiling it would be of is still named.
TEST(CsvWriter, UnmeasuredCeilingLeavesTheFractionEmpty) {
    ResultRow row = sample_row();
    row.fraction_of_peak.reset();
    row.ceiling = "wgmma_fp8";
    const auto fields = split_csv(csv_line(row));
    ASSERT_EQ(fields.size(), 30u);
    EXPECT_EQ(fields[13], "");
    EXPECT_EQ(fields[14], "wgmma_fp8");
}

TEST(CsvWriter, UnverifiedRowLeavesErrorFieldsEmpty) {
    ResultRow row = sample_row();
    row.rel_error_fp64.reset();
    row.worst_error_over_budget.reset();
    row.verified = "skipped";
    const auto fields = split_csv(csv_line(row));
    EXPECT_EQ(fields[15], "");
    EXPECT_EQ(fields[16], "");
    EXPECT_EQ(fields[17], "skipped");
}

TEST(CsvWriter, QuotesFieldsWithCommasAndQuotes) {
    ResultRow row = sample_row();
    row.gpu = "Odd, \"quoted\" GPU";
    const auto fields = split_csv(csv_line(row));
    ASSERT_EQ(fields.size(), 30u);
    EXPECT_EQ(fields[18], "Odd, \"quoted\" GPU");
}

TEST(CsvWriter, AppendWritesHeaderOnce) {
    const ScratchFile csv("sgemm_append.csv");
    const auto& path = csv.path();
    const std::vector<ResultRow> rows{sample_row(), sample_row()};
    append_csv_rows(path, rows);
    append_csv_rows(path, std::vector<ResultRow>{sample_row()});
    const auto lines = read_lines(path);
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_EQ(lines[0], csv_header());
    EXPECT_EQ(lines[3], csv_line(sample_row()));
}

TEST(CsvWriter, UnwritablePathThrows) {
    EXPECT_THROW(append_csv_rows("/nonexistent-dir/rows.csv", std::vector<ResultRow>{sample_row()}),
                 std::runtime_error);
}

TEST(CeilingsCsv, WritesHeaderAndRowsReplacingTheFile) {
    const ScratchFile csv("sgemm_ceilings.csv");
    const auto& path = csv.path();
    const std::vector<CeilingRow> first{{"fp32_ffma", "TFLOPS", 63.7, "NVIDIA H100 80GB HBM3"}};
    write_ceilings_csv(path, first);
    const std::vector<CeilingRow> second{{"fp32_ffma", "TFLOPS", 63.25, "Odd, GPU", 1979.5},
                                         {"dram", "TB/s", 3.012, "Odd, GPU", std::nullopt}};
    write_ceilings_csv(path, second);
    const auto lines = read_lines(path);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0], "ceiling,unit,value,gpu,sm_clock_mhz");
    EXPECT_EQ(lines[1], "fp32_ffma,TFLOPS,63.25,\"Odd, GPU\",1979.5");
    EXPECT_EQ(split_csv(lines[2]), (std::vector<std::string>{"dram", "TB/s", "3.012", "Odd, GPU", ""}));
}

TEST(CeilingsCsv, UnwritablePathThrows) {
    EXPECT_THROW(write_ceilings_csv("/nonexistent-dir/ceilings.csv", std::vector<CeilingRow>{}), std::runtime_error);
}

}  // namespace
}  // namespace sgemm
