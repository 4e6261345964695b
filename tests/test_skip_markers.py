"""The skip pattern the GPU tests are registered with (tests/CMakeLists.txt), against what CTest
makes of each outcome of a run. The probe's tests (skip_probe.cpp, under the project's main
and skip markers) run through CTest itself with the patterns each GPU test has: a run must read
as skipped only where every test that ran skipped for want of a GPU that can run it and none
failed; failed where any test failed, where none ran (a mistyped filter) and where a test
skipped without a marker. The patterns used before fail here: "[  PASSED  ] 0 tests", which a
stage failing every case prints too, and "SKIPPED", which a skipped case beside a failed one
prints.

gtest_discover_tests gives each test it registers a pattern of its own, gtest's "[  SKIPPED ]"
line, beside ours; those tests run one gtest test each, so no skip can stand beside a failure
there, and a skip without a marker, which would read as skipped there, is kept out of the
sources.

    python3 tests/test_skip_markers.py [--tests-dir build/tests] [--probe DIR/skip_probe] [--ctest ctest]
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PATHS = argparse.Namespace()  # set from the command line in __main__

# A --gtest_filter of the probe, and what CTest must report for it.
OUTCOMES = {
    "Probe.Passes": "Passed",
    "Probe.Fails": "Failed",  # every case failed: gtest prints "[  PASSED  ] 0 tests." here too
    "Probe.SkipsWithoutGpu": "Skipped",
    "Probe.SkipsWhereRefused": "Skipped",
    "Probe.SkipsWithoutGpu:Probe.SkipsWhereRefused": "Skipped",
    "Probe.SkipsWithoutGpu:Probe.Fails": "Failed",  # a skip beside a failure
    "Probe.SkipsWhereRefused:Probe.Passes": "Passed",
    "Probe.SkipsWithoutAMarker": "Failed",
    "Probe.NoSuchTest": "Failed",  # no test ran
}
# What gtest_discover_tests adds, and the outcomes of the one-test runs it registers.
DISCOVERY_PATTERN = r"\[  SKIPPED \]"
ONE_TEST_OUTCOMES = {f: OUTCOMES[f] for f in ("Probe.Passes", "Probe.Fails", "Probe.SkipsWithoutGpu",
                                               "Probe.SkipsWhereRefused")}
OLD_PATTERNS = (r"\[  PASSED  \] 0 tests", "SKIPPED")
# The only sources that may call GTEST_SKIP themselves.
SKIPPING_SOURCES = ("skip_markers.hpp", "skip_probe.cpp")


def registered_tests():
    """{name: (command, SKIP_REGULAR_EXPRESSION's patterns)} of the tests the build registered."""
    listing = subprocess.run([PATHS.ctest, "--show-only=json-v1"], cwd=PATHS.tests_dir, capture_output=True,
                             text=True, check=True).stdout
    tests = {}
    for test in json.loads(listing)["tests"]:
        properties = {p["name"]: p["value"] for p in test.get("properties", [])}
        tests[test["name"]] = (test.get("command", []), tuple(properties.get("SKIP_REGULAR_EXPRESSION", ())))
    return tests


def ctest_verdicts(patterns, outcomes):
    """{probe filter: Passed, Failed or Skipped} of `outcomes`, as CTest reports the probe run
    with `patterns` for SKIP_REGULAR_EXPRESSION, CUDA_VISIBLE_DEVICES empty (no GPU, on any
    machine)."""
    skip = " ".join(f"SKIP_REGULAR_EXPRESSION [==[{pattern}]==]" for pattern in patterns)
    with tempfile.TemporaryDirectory() as tmp:
        lines = []
        for i, gtest_filter in enumerate(outcomes):
            lines.append(f"add_test(outcome{i} [==[{PATHS.probe}]==] [==[--gtest_filter={gtest_filter}]==])")
            lines.append(f'set_tests_properties(outcome{i} PROPERTIES {skip} ENVIRONMENT "CUDA_VISIBLE_DEVICES=")')
        Path(tmp, "CTestTestfile.cmake").write_text("\n".join(lines) + "\n")
        output = subprocess.run([PATHS.ctest], cwd=tmp, capture_output=True, text=True).stdout
    verdicts = dict(re.findall(r"Test +#\d+: outcome(\d+) \.+\s*(?:\*\*\*)?(Passed|Failed|Skipped)", output))
    return {gtest_filter: verdicts.get(str(i), f"not reported:\n{output}") for i, gtest_filter in enumerate(outcomes)}


class SkipPatternTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tests = registered_tests()
        cls.gpu = {name: patterns for name, (command, patterns) in tests.items()
                   if name.startswith(("StageCorrectness.", "BinaryOnGpu."))
                   or (command and Path(command[0]).name == "gpu_tests")}
        cls.ours = tests["StageCorrectness.stage0"][1]

    def test_every_gpu_test_skips_by_our_pattern_alone_or_beside_the_discoverys(self):
        self.assertIn("StageCorrectness.stage26", self.gpu)
        self.assertIn("StageCorrectness.track_bf16", self.gpu)
        self.assertIn("VerificationCatches.OneWrongElement", self.gpu)
        self.assertTrue(any(name.startswith("BinaryOnGpu.") for name in self.gpu))
        self.assertEqual(len(self.ours), 1, self.ours)
        for name, patterns in self.gpu.items():
            self.assertIn(patterns, (self.ours, (DISCOVERY_PATTERN, *self.ours)), name)
        self.assertTrue(all(patterns == self.ours for name, patterns in self.gpu.items()
                            if name.startswith("StageCorrectness.")))

    def test_ctest_reads_each_outcome_as_it_should(self):
        self.assertEqual(ctest_verdicts(self.ours, OUTCOMES), OUTCOMES)
        self.assertEqual(ctest_verdicts((DISCOVERY_PATTERN, *self.ours), ONE_TEST_OUTCOMES), ONE_TEST_OUTCOMES)

    def test_the_patterns_used_before_misread_an_outcome(self):
        # What this test would have said of them: a stage that failed every case, and a skip
        # beside a failure, read as skipped.
        for pattern, misread in zip(OLD_PATTERNS, ("Probe.Fails", "Probe.SkipsWithoutGpu:Probe.Fails")):
            self.assertEqual(ctest_verdicts((pattern,), {misread: "Failed"}), {misread: "Skipped"}, pattern)

    def test_every_skip_goes_through_the_markers(self):
        bare = [f"{path.name}:{number}" for path in sorted((REPO_ROOT / "tests").iterdir())
                if path.suffix in (".cpp", ".cu", ".hpp") and path.name not in SKIPPING_SOURCES
                for number, line in enumerate(path.read_text().split("\n"), 1) if "GTEST_SKIP" in line]
        self.assertEqual(bare, [])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests-dir", type=Path, default=REPO_ROOT / "build" / "tests",
                        help="the build's tests directory (default build/tests)")
    parser.add_argument("--probe", type=Path, help="the skip_probe binary (default: in the tests directory)")
    parser.add_argument("--ctest", default=shutil.which("ctest"), help="the ctest to run (default: on PATH)")
    PATHS, unittest_args = parser.parse_known_args()
    PATHS.probe = (PATHS.probe or PATHS.tests_dir / "skip_probe").resolve()
    if not PATHS.probe.exists() or PATHS.ctest is None:
        sys.exit(f"{PATHS.probe} or ctest missing: build first (make)")
    unittest.main(argv=[sys.argv[0], *unittest_args])
