// The list of stages, in reading order. Stage 0 is cuBLAS.
#pragma once

#include <span>

#include "driver/stage.hpp"

namespace sgemm {

std::span<const Stage> all_stages();

// nullptr when no stage has this number.
const Stage* find_stage(int number);

}  // namespace sgemm
