// The candidate tile shapes of stages 10 and 14 that sgemm_tune times (see 10_tuned.cu
// and 14_multistage.cu).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/common/gemm_problem.hpp"

namespace sgemm {

struct TuningCandidate {
    std::string name;  // the config type, as written in the stage file
    int group_rows = 1;
    int threads = 0;
    std::size_t shared_bytes = 0;
    int registers = 0;
    Fp32Launcher launch = nullptr;       // stage 10
    Bf16Launcher launch_bf16 = nullptr;  // stage 14
    // What the candidate's kernel needs the sizes to be multiples of: stages 10 and 14 run
    // the kernel that tests no edge (whole tiles), stage 20 TMA's rows (K and N by 8).
    GemmShape multiples{1, 1, 1};
};

// Candidates for stage 10 or 14; empty for any other stage.
std::vector<TuningCandidate> tuning_candidates(int stage);

}  // namespace sgemm
