// The command line, parsed and validated without touching the GPU: every mistake a
// user can make in it is reported here, in one line, before any device work starts.
#pragma once

#include <string>

#include "driver/stage.hpp"
#include "driver/stage_runner.hpp"

namespace sgemm {

struct Request {
    bool list_stages = false;
    bool run_all = false;         // "all" or "FIRST-LAST": every available stage in that range, in order
    int first_stage = 0, last_stage = 0;  // the range (run_all)
    bool profile = false;         // one launch of one stage for a profiler, nothing else
    bool profile_cublas = false;  // with profile: the cuBLAS call the stage is timed against, not the stage
    bool peak = false;            // "peak": measure this GPU's ceilings, no stage
    const Stage* stage = nullptr;  // the one stage or track otherwise
    RunSettings settings;
    std::string csv_path;  // empty: no CSV; with peak, the ceilings' CSV
};

struct ParsedCommandLine {
    enum class Outcome { run, print_and_exit, usage_error };
    Outcome outcome = Outcome::run;
    Request request;   // when outcome == run
    std::string text;  // help (stdout) or the one-line error (stderr)
};

ParsedCommandLine parse_command_line(int argc, const char* const argv[]);

// Rejects sizes whose element count overflows the kernels' 32-bit indices.
constexpr long long kMaxMatrixElements = (1LL << 31) - 1;

}  // namespace sgemm
