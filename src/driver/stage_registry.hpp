// The list of stages, in reading order (stage 0 is cuBLAS), and the tracks of the dispatch
// layer (dispatch/).
#pragma once

#include <span>
#include <string_view>

#include "driver/stage.hpp"

namespace sgemm {

std::span<const Stage> all_stages();

// nullptr when no stage has this number.
const Stage* find_stage(int number);

// fp32, bf16, fp32-tc, fp8: each chooses a stage's kernel for a shape.
std::span<const Stage> all_tracks();

// nullptr when no track has this name.
const Stage* find_track(std::string_view name);

}  // namespace sgemm
