"""scripts/compare_binaries.py: an old and a new stand-in binary take turns on every problem
of the suite's groups and a draw, each run in its own process; dealt over two GPUs, each
worker alternates old and new on its own problems with CUDA_VISIBLE_DEVICES set; the old
binary's CSV, written before the kernel column, is read; refusals are rows, a failed
verification fails the run; the report's geomeans, points and problems that moved most are
right."""
import csv
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "scripts"))
import compare_binaries  # noqa: E402
import draw_problems  # noqa: E402
import results_csv  # noqa: E402
import shape_suite  # noqa: E402

# Mimics `sgemm <run> -m M -n N -k K --time-budget T --csv FILE --timing METHOD`, as the OLD
# binary (stages only; the CSV of before the kernel column; stage 20 refuses N off 8; ratio
# to cuBLAS 0.8) or the NEW one (tracks too; a kernel column, bf16's 20 or 20 padded, fp32's
# 10; ratio 0.9, 1.2 where M is 16, a failed verification on FAKE_FAIL's "run:m"; on
# FAKE_CUT_OFF's "kind:m" it kills the comparison, as a time limit would; each run takes
# FAKE_SECONDS). Logs its kind, argv and CUDA_VISIBLE_DEVICES.
FAKE_BINARY = textwrap.dedent("""\
    #!{python}
    import os, sys, time
    sys.path.insert(0, {tests!r})
    time.sleep(float(os.environ.get("FAKE_SECONDS") or 0))
    from fake_sgemm import append_row, fail_verification
    kind, log, columns = {kind!r}, {log!r}, {columns!r}
    with open(log, "a") as f:
        f.write(f"{{kind}} {{os.environ.get('CUDA_VISIBLE_DEVICES', '-')}} " + " ".join(sys.argv[1:]) + "\\n")
    run, options = sys.argv[1], dict(zip(sys.argv[2::2], sys.argv[3::2]))
    m, n, k = int(options["-m"]), int(options["-n"]), int(options["-k"])
    if not run.isdigit() and kind == "old":
        print(f"sgemm: error: unknown stage {{run}}", file=sys.stderr)
        sys.exit(2)
    if run == "20" and n % 8:
        print(f"sgemm: error: stage 20 (fake) needs N a multiple of 8; got N={{n}}", file=sys.stderr)
        sys.exit(2)
    stage = {{"bf16": "20", "fp32": "10"}}.get(run, run)
    failed = os.environ.get("FAKE_FAIL") == f"{{run}}:{{m}}" and kind == "new"
    if os.environ.get("FAKE_CUT_OFF") == f"{{kind}}:{{m}}":  # a time limit ends the comparison here
        os.kill(os.getppid(), 9)
    row = dict.fromkeys(columns, "")
    row.update(stage=run, name="fake", precision="bf16" if stage == "20" else "fp32", m=m, n=n, k=k, alpha=1.0,
               beta=0.0, median_ms=1, tflops=100, cublas_median_ms=1, cublas_tflops=100,
               ratio_to_cublas=0.8 if kind == "old" else 1.2 if m == 16 else 0.9, fraction_of_peak=0.1,
               ceiling="wgmma_bf16", verified="false" if failed else "true", gpu="Fixture GPU", driver="1",
               cuda="13.0", timing=options["--timing"], reps=10, seed=1, data="uniform",
               kernel=stage + (" padded" if run == "bf16" and n % 8 else ""), sources="0123456789ab")
    append_row(options["--csv"], columns, row)
    if failed:
        fail_verification()
    """)

SEED, COUNT = 5, 6


class BandSummaryTest(unittest.TestCase):
    def test_problems_below_the_old_by_more_than_two_percent_are_counted(self):
        def pair(m, old, new):
            return {"m": m, "ratio_to_cublas": old}, {"m": m, "ratio_to_cublas": new}
        # 0.97 and 0.5 of the old are below; 0.99 of it is not.
        summary = compare_binaries.band_summary([pair(16, 1.0, 0.97), pair(2048, 1.0, 0.99), pair(2048, 0.8, 0.4)])
        self.assertEqual(summary[-1][0], compare_binaries.ALL_BANDS)
        self.assertEqual((summary[-1][1], summary[-1][4]), (3, 2))


class CompareTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.log = self.root / "fake_sgemm.log"
        columns = {"old": results_csv.COLUMNS_BEFORE_KERNEL, "new": results_csv.COLUMNS}
        for kind in ("old", "new"):
            binary = self.root / f"{kind}_sgemm"
            binary.write_text(FAKE_BINARY.format(python=sys.executable, kind=kind, log=str(self.log),
                                                 columns=list(columns[kind]), tests=str(REPO_ROOT / "tests")))
            binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
        self.out = self.root / "out"

    def tearDown(self):
        self.tmp.cleanup()

    def compare(self, *arguments, fail="", cut_off="", seconds=""):
        command = [sys.executable, str(REPO_ROOT / "scripts" / "compare_binaries.py"), "--old",
                   str(self.root / "old_sgemm"), "--new", str(self.root / "new_sgemm"), "--out", str(self.out),
                   *arguments]
        return subprocess.run(command, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "FAKE_FAIL": fail,
                                   "FAKE_CUT_OFF": cut_off, "FAKE_SECONDS": seconds})

    def test_old_and_new_take_turns_on_every_problem_dealt_over_the_gpus(self):
        result = self.compare("--suite", "--groups", "skinny", "--draw", str(SEED), "--count", str(COUNT),
                              "--old-stages", "20", "10", "--new-stages", "bf16", "fp32", "--gpus", "0,1")
        self.assertEqual(result.returncode, 0, result.stderr)
        suite = [(name, m, n, k) for name, group, m, n, k in shape_suite.suite() if group == "skinny"]
        drawn = [(p.name, p.m, p.n, p.k) for p in draw_problems.draw(SEED, COUNT) if not draw_problems.skip_reason(p)]
        problems = suite + drawn
        calls = [line.split() for line in self.log.read_text().splitlines()]
        self.assertEqual(len(calls), len(problems) * 2 * 2)
        for gpu, dealt in (("0", problems[0::2]), ("1", problems[1::2])):
            mine = [call for call in calls if call[1] == gpu]
            # Each worker: per problem and pair, the old binary then the new one.
            self.assertEqual([call[0] for call in mine], ["old", "new"] * (len(mine) // 2))
            self.assertEqual([call[2] for call in mine], ["20", "bf16", "10", "fp32"] * len(dealt))
            self.assertEqual([(int(call[4]), int(call[6]), int(call[8])) for call in mine[::4]],
                             [(m, n, k) for _, m, n, k in dealt])
            self.assertEqual(mine[0][9:], ["--time-budget", "0.25", "--csv", mine[0][12], "--timing", "launches"])

        with open(self.out / compare_binaries.CSV_NAME, newline="") as file:
            reader = csv.DictReader(file)
            self.assertEqual(tuple(reader.fieldnames), results_csv.COLUMNS + compare_binaries.COMPARE_COLUMNS)
            rows = list(reader)
        self.assertEqual(len(rows), len(problems) * 2 * 2)
        first = [(row["problem"], row["source"], row["pair"], row["binary"], row["status"], row["kernel"])
                 for row in rows[:4]]
        self.assertEqual(first, [(suite[0][0], "suite", "stage 20 vs track bf16", "old", "ok", ""),
                                 (suite[0][0], "suite", "stage 20 vs track bf16", "new", "ok", "20"),
                                 (suite[0][0], "suite", "stage 10 vs track fp32", "old", "ok", ""),
                                 (suite[0][0], "suite", "stage 10 vs track fp32", "new", "ok", "10")])
        self.assertEqual(rows[-1]["source"], f"draw {SEED}")
        refused = [p for p in problems if p[2] % 8]
        self.assertTrue(refused)
        self.assertEqual([(row["problem"], row["stage"]) for row in rows if row["status"] == "refused"],
                         [(name, "20") for name, *_ in refused])
        self.assertTrue(all(row["kernel"] == "20 padded" for row in rows
                            if row["stage"] == "bf16" and (row["problem"], "20") in {(p[0], "20") for p in refused}))

        markdown = (self.out / compare_binaries.TABLE_NAME).read_text(encoding="utf-8")
        ran = len(problems) - len(refused)
        self.assertIn(f"| stage 20 vs track bf16 | all | {ran} | 80.0 % | ", markdown)
        at_16 = sum(p[1] == 16 for p in problems)
        new = 1.2 ** (at_16 / len(problems)) * 0.9 ** (1 - at_16 / len(problems))
        self.assertIn(f"| stage 10 vs track fp32 | all | {len(problems)} | 80.0 % | {new * 100:.1f} % | "
                      f"{(new - 0.8) * 100:+.1f} | {new / 0.8:.3f} | 0 |", markdown)
        self.assertIn(f"## stage 10 vs track fp32: the {len(problems)} problems that moved most", markdown)
        self.assertIn("| m16 | 16 | 4096 | 4096 | 80.0 % | 120.0 % | +40.0 | 10 |", markdown)
        self.assertIn("## Runs that did not run", markdown)
        self.assertIn(f"| {refused[0][0]} | stage 20 vs track bf16 | old | refused | stage 20 (fake) needs", markdown)
        # The short table comes last.
        last = result.stdout.strip().splitlines()[-3:]
        self.assertTrue(last[0].startswith("pair"))
        self.assertEqual(last[2].split(), ["stage", "10", "vs", "track", "fp32", str(len(problems)), "80.0", "%",
                                           f"{new * 100:.1f}", "%", f"{(new - 0.8) * 100:+.1f}"])

    def test_a_part_of_the_problems_runs_alone(self):
        result = self.compare("--suite", "--groups", "skinny", "--draw", str(SEED), "--count", str(COUNT),
                              "--old-stages", "10", "--new-stages", "fp32", "--problems", "2-4")
        self.assertEqual(result.returncode, 0, result.stderr)
        suite = [(m, n, k) for _, group, m, n, k in shape_suite.suite() if group == "skinny"]
        drawn = [(p.m, p.n, p.k) for p in draw_problems.draw(SEED, COUNT) if not draw_problems.skip_reason(p)]
        calls = [line.split() for line in self.log.read_text().splitlines()]
        self.assertEqual([(int(call[4]), int(call[6]), int(call[8])) for call in calls[::2]], (suite + drawn)[1:4])
        self.assertIn("counted from 1", self.compare("--suite", "--problems", "0-2").stderr)

    def test_parts_run_apart_make_one_report(self):
        arguments = ("--suite", "--groups", "skinny", "--old-stages", "10", "--new-stages", "fp32")
        whole = self.root / "whole"
        self.assertEqual(self.compare(*arguments, "--out", str(whole)).returncode, 0)
        parts = []
        for part in ("1-2", "3-3"):
            out = self.root / part
            self.assertEqual(self.compare(*arguments, "--problems", part, "--out", str(out)).returncode, 0)
            parts.append(str(out / compare_binaries.CSV_NAME))
        joined = self.root / "joined"
        command = [sys.executable, str(REPO_ROOT / "scripts" / "compare_binaries.py"), "--rows", *parts,
                   "--out", str(joined)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((joined / compare_binaries.CSV_NAME).read_text(),
                         (whole / compare_binaries.CSV_NAME).read_text())
        self.assertEqual(result.stdout.splitlines()[-2:], self.compare(*arguments, "--out", str(whole)).stdout.splitlines()[-2:])

    def test_a_comparison_cut_off_keeps_the_runs_it_made(self):
        skinny = [(m, n, k) for _, group, m, n, k in shape_suite.suite() if group == "skinny"]
        result = self.compare("--suite", "--groups", "skinny", "--old-stages", "10", "--new-stages", "fp32",
                              cut_off=f"new:{skinny[1][0]}")
        self.assertEqual(result.returncode, -9)
        with open(self.out / compare_binaries.CSV_NAME, newline="") as file:
            kept = [(row["problem"], row["binary"]) for row in csv.DictReader(file)]
        first = next(name for name, group, *_ in shape_suite.suite() if group == "skinny")
        self.assertEqual(kept, [(first, "old"), (first, "new"), (kept[2][0], "old")])

    def test_no_problem_starts_after_the_seconds_given_and_the_report_says_how_many_ran(self):
        # Each run takes 0.5 s: the first problem's two runs outlast the 0.6 s given, so it alone runs.
        result = self.compare("--suite", "--groups", "skinny", "--old-stages", "10", "--new-stages", "fp32",
                              "--seconds", "0.6", seconds="0.5")
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(self.out / compare_binaries.CSV_NAME, newline="") as file:
            ran = [(row["problem"], row["binary"]) for row in csv.DictReader(file)]
        skinny = [name for name, group, *_ in shape_suite.suite() if group == "skinny"]
        self.assertEqual(ran, [(skinny[0], "old"), (skinny[0], "new")])
        self.assertIn(f"ran 1 of the {len(skinny)} problems", (self.out / compare_binaries.TABLE_NAME).read_text())

    def test_a_failed_verification_fails_the_run_and_the_stage_lists_must_pair(self):
        result = self.compare("--suite", "--groups", "skinny", "--new-stages", "fp32", "--old-stages", "10",
                              fail="fp32:16")
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("m16 stage 10 vs track fp32, new binary: C[0][0] = 1", result.stderr)
        self.assertIn("| m16 | stage 10 vs track fp32 | new | failed | C[0][0] = 1 but the reference is 2 |",
                      (self.out / compare_binaries.TABLE_NAME).read_text(encoding="utf-8"))
        runs = len(self.log.read_text().splitlines())
        result = self.compare("--suite", "--old-stages", "20", "10", "--new-stages", "bf16")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("pair by position: got 2 and 1", result.stderr)
        result = self.compare("--old-stages", "20")
        self.assertIn("choose the problems: --suite and/or --draw SEED", result.stderr)
        self.assertEqual(len(self.log.read_text().splitlines()), runs)


if __name__ == "__main__":
    unittest.main()
