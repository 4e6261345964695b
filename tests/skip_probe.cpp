// Tests that pass, fail and skip on demand (pick them with --gtest_filter), under the project's
// main and skip markers: tests/test_skip_markers.py runs them through CTest with the skip
// pattern the GPU tests are registered with, and checks what CTest makes of each outcome. Run
// with CUDA_VISIBLE_DEVICES empty, so that SkipsWithoutGpu skips on a GPU machine too. Not a
// test of the suite itself: Fails fails.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "skip_markers.hpp"

namespace {

TEST(Probe, Passes) { SUCCEED(); }

TEST(Probe, Fails) { ADD_FAILURE() << "the probe fails here"; }

TEST(Probe, SkipsWithoutGpu) { SGEMM_SKIP_WITHOUT_GPU(); }

TEST(Probe, SkipsWhereRefused) { SGEMM_SKIP_IF_REFUSED(std::optional<std::string>("the probe refuses every GPU")); }

TEST(Probe, SkipsWithoutAMarker) { GTEST_SKIP() << "a reason CTest does not take"; }

}  // namespace
