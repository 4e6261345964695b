// The main of the project's GoogleTest binaries: gtest's own, and what CTest is to read of the
// run (skip_markers.hpp). Where every test that ran skipped with a marker and none failed, it
// prints kAllSkipped, which CTest reads as skipped. Two outcomes that gtest reports as passed
// fail here: no test at all (a --gtest_filter that matches none, as a mistyped one), and every
// test skipped where one of them gave no marker.
#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>

#include "skip_markers.hpp"

namespace {

bool starts_with_a_marker(const std::string& message) {
    return message.rfind(sgemm::kNoGpu, 0) == 0 || message.rfind(sgemm::kCannotRun, 0) == 0;
}

}  // namespace

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    const int status = RUN_ALL_TESTS();
    const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
    if (GTEST_FLAG_GET(list_tests)) return status;
    if (unit.test_to_run_count() == 0) {
        std::cout << "no test ran: the filter matches none\n";
        return 1;
    }
    if (status != 0 || unit.skipped_test_count() < unit.test_to_run_count()) return status;
    std::set<std::string> reasons;
    int unmarked = 0;
    for (int i = 0; i < unit.total_test_suite_count(); ++i) {
        const testing::TestSuite& suite = *unit.GetTestSuite(i);
        for (int j = 0; j < suite.total_test_count(); ++j) {
            const testing::TestResult& result = *suite.GetTestInfo(j)->result();
            for (int part = 0; part < result.total_part_count(); ++part) {
                const testing::TestPartResult& skip = result.GetTestPartResult(part);
                if (!skip.skipped()) continue;
                if (starts_with_a_marker(skip.message()))
                    reasons.insert(skip.message());
                else
                    ++unmarked;
            }
        }
    }
    if (unmarked > 0) {
        std::cout << "every test skipped, " << unmarked
                  << " without a marker of tests/skip_markers.hpp: no reason CTest takes for a skip\n";
        return 1;
    }
    std::cout << sgemm::kAllSkipped << ": every test that ran skipped:";
    for (const std::string& reason : reasons) std::cout << "\n  " << reason;
    std::cout << "\n";
    return status;
}
