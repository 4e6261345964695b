// The candidate tile shapes of stage 10 that sgemm_tune times (see 10_tuned.cu).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/common/gemm_problem.hpp"

namespace sgemm {

struct TuningCandidate {
    std::string name;  // the TileConfig arguments, as written in 10_tuned.cu
    int group_rows = 1;
    int threads = 0;
    std::size_t shared_bytes = 0;
    int registers = 0;
    Fp32Launcher launch = nullptr;
};

std::vector<TuningCandidate> tuning_candidates();

}  // namespace sgemm
