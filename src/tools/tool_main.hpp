// The entry point the tools beside sgemm share (sgemm_tune, sgemm_survey): whatever their
// run throws becomes one line on stderr, named after the tool, and exit status 1.
#pragma once

#include <fmt/format.h>

#include <exception>

namespace sgemm {

template <class Run>
int run_reporting_errors(const char* tool, Run run, int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& error) {
        fmt::print(stderr, "{}: error: {}\n", tool, error.what());
        return 1;
    }
}

}  // namespace sgemm
