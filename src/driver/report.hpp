// What the user reads: the stage list, one block per stage run, the summary table, and
// the table of measured ceilings (sgemm peak).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "driver/csv_writer.hpp"
#include "driver/stage_runner.hpp"
#include "gpu/device_info.hpp"
#include "measuring/ceilings.hpp"

namespace sgemm {

// `device` may be null (no GPU): availability is then left out.
std::string stage_list(const DeviceInfo* device, const BuildTarget& build);

// The ceilings the stages are measured against; a bf16 ceiling of 0 TFLOPS is left out.
std::string run_header(const DeviceInfo& device, const Ceiling& fp32, const Ceiling& bf16,
                       const RunSettings& settings);
std::string stage_started(const Stage& stage);
std::string stage_skipped(const Stage& stage, const std::string& reason);
std::string stage_report(const StageResult& result);
std::string summary_table(std::span<const StageResult> results);

// The message that names the first element past its budget.
std::string first_bad_element(const StageResult& result);

ResultRow to_result_row(const StageResult& result, const DeviceInfo& device);

// The GPU in one line: architecture, SMs, clock, FP32 paper peak, driver, CUDA.
std::string device_line(const DeviceInfo& device);
std::string ceilings_table(const DeviceInfo& device, std::span<const MeasuredCeiling> ceilings);
// The ceilings that were measured, one row each.
std::vector<CeilingRow> to_ceiling_rows(std::span<const MeasuredCeiling> ceilings, const DeviceInfo& device);

}  // namespace sgemm
