// The CSV files the binary writes, which scripts/ turn into the Markdown tables and
// charts under results/<gpu>/; the column names are their contract. results.csv: one row
// per stage and problem. ceilings.csv: one row per ceiling `sgemm peak` measured.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

namespace sgemm {

struct ResultRow {
    std::string stage;  // a stage's number, "20", or a track's name, "bf16"
    std::string name;
    std::string precision;
    int m = 0, n = 0, k = 0;
    double alpha = 1.0, beta = 0.0;
    double median_ms = 0.0;
    double tflops = 0.0;
    double cublas_median_ms = 0.0;
    double cublas_tflops = 0.0;
    double ratio_to_cublas = 0.0;
    // tflops over the ceiling named in `ceiling`; empty where that ceiling was not measured
    // (this GPU or build cannot run its instruction)
    std::optional<double> fraction_of_peak;
    std::string ceiling;  // a ceilings.csv name: "fp32_ffma", "mma_sync_bf16", "wgmma_fp8"
    std::optional<double> rel_error_fp64;           // empty when not verified
    std::optional<double> worst_error_over_budget;  // empty when not verified
    std::string verified;                           // "true", "false" or "skipped"
    std::string gpu, driver, cuda;
    std::string timing;  // how the stage and cuBLAS took turns: "launches" or "blocks" (timing.hpp)
    int reps = 0;
    std::uint64_t seed = 0;
    // The SM clock (src/measuring/sm_clock.hpp) over the stage's timed launches, over cuBLAS's,
    // and over the ceiling's fastest launch; empty where it could not be read.
    std::optional<double> sm_clock_mhz;
    std::optional<double> cublas_sm_clock_mhz;
    std::optional<double> ceiling_sm_clock_mhz;
    std::string data = "uniform";  // what the inputs held (verification/input_data.hpp)
    std::string kernel;  // whose kernel ran the problem: "20", "20 padded" (a track's choice)
    std::string sources;  // the hash of the stage's or track's sources (driver/source_hashes.hpp)
};

std::string csv_header();
std::string csv_line(const ResultRow& row);

// Appends the rows to `path`, writing the header first when the file is new or empty.
void append_csv_rows(const std::filesystem::path& path, std::span<const ResultRow> rows);

struct CeilingRow {
    std::string ceiling;  // "fp32_ffma", "dram", ... (ceilings.hpp)
    std::string unit;     // "TFLOPS" or "TB/s"
    double value = 0.0;
    std::string gpu;
    std::optional<double> sm_clock_mhz;  // of the launch that measured it; empty where none was read
};

std::string ceilings_csv_header();
std::string ceilings_csv_line(const CeilingRow& row);

// Writes the header and the rows to `path`, replacing what it held: one GPU's ceilings.
void write_ceilings_csv(const std::filesystem::path& path, std::span<const CeilingRow> rows);

}  // namespace sgemm
