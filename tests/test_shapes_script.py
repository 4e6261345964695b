"""scripts/shapes.py: the suite holds the shapes the issue names, each track runs every shape,
a run keeps the rows of the shapes and runs it does not run, a stage runs on request beside
the tracks, the summary's geomean and worst are right, and a file written before the tracks
(stage rows, no kernel column) still makes its report. A fake sgemm binary writes one row
per call."""
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
import results_csv  # noqa: E402
import shapes  # noqa: E402

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "results_sample.csv"

# Mimics `sgemm <run> -m M -n N -k K --time-budget T --csv FILE`: appends the fixture's first
# row in the binary's columns with that run and shape, for a track the kernel of the stage it
# stands for here (bf16: 20, fp32-tc: 24, fp32: 10), its ratio to cuBLAS
# 1 + that stage / 100 + M / 1e6 (so that each run and shape reads apart), and logs its argv.
FAKE_BINARY = textwrap.dedent("""\
    #!{python}
    import csv, sys
    sys.path.insert(0, {tests!r})
    from fake_sgemm import append_row
    fixture, log, columns = {fixture!r}, {log!r}, {columns!r}
    with open(log, "a") as f:
        f.write(" ".join(sys.argv[1:]) + "\\n")
    run, _, m, _, n, _, k, _, budget, _, out = sys.argv[1:]
    with open(fixture, newline="") as f:
        header, first, *_ = list(csv.reader(f))
    stage = {{"bf16": 20, "fp32-tc": 24, "fp32": 10}}.get(run) or int(run)
    row = dict.fromkeys(columns, "")
    row.update(zip(header, first))
    row.update(stage=run, m=m, n=n, k=k, ratio_to_cublas=str(1 + stage / 100 + int(m) / 1e6), kernel=stage)
    append_row(out, columns, row)
    """)


class SuiteTest(unittest.TestCase):
    def test_holds_squares_layers_skinny_and_k_heavy_shapes_the_hopper_stages_take(self):
        suite = shapes.suite()
        names = [name for name, *_ in suite]
        self.assertEqual(len(names), len(set(names)))
        squares = {m for _, group, m, n, k in suite if group == "square"}
        self.assertEqual(squares, {1024, 2048, 4096, 8192, 16384})
        tokens = {m for _, group, m, _, _ in suite if group == "layer"}
        self.assertEqual(tokens, set(shapes.TOKENS))
        self.assertEqual(min(tokens), 64)
        self.assertEqual(max(tokens), 16384)
        self.assertTrue(all(min(m, n) <= 64 for _, group, m, n, _ in suite if group == "skinny"))
        self.assertTrue(all(k >= 4 * max(m, n) for _, group, m, n, k in suite if group == "k-heavy"))
        # Stages 20 and 24 take K and N in multiples of 8.
        self.assertTrue(all(n % 8 == 0 and k % 8 == 0 for _, _, _, n, k in suite))

    def test_summary_takes_the_geomean_and_the_worst_per_band(self):
        rows = [{"stage": "bf16", "shape": name, "m": m, "n": 4096, "ratio_to_cublas": ratio}
                for name, m, ratio in (("a", 64, 0.5), ("b", 128, 2.0), ("c", 4096, 1.0))]
        bands = {band: (count, mean, worst["shape"]) for band, count, mean, worst in shapes.summary(rows, "bf16")}
        self.assertEqual(bands["M ≤ 256"][0], 2)
        self.assertAlmostEqual(bands["M ≤ 256"][1], 1.0)
        self.assertEqual(bands["M ≤ 256"][2], "a")
        self.assertEqual(bands["M ≥ 1024"], (1, 1.0, "c"))
        self.assertEqual(bands["all shapes"][0], 3)


class RunTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.binary = self.root / "fake_sgemm"
        self.log = self.root / "fake_sgemm.log"
        self.binary.write_text(FAKE_BINARY.format(python=sys.executable, fixture=str(FIXTURE), log=str(self.log),
                                                  columns=list(results_csv.COLUMNS), tests=str(REPO_ROOT / "tests")))
        self.binary.chmod(self.binary.stat().st_mode | stat.S_IXUSR)
        self.results = self.root / "results"

    def tearDown(self):
        self.tmp.cleanup()

    def run_groups(self, *groups):
        command = [sys.executable, str(REPO_ROOT / "scripts" / "shapes.py"), "--binary", str(self.binary),
                   "--results-dir", str(self.results), "--groups", *groups]
        return subprocess.run(command, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})

    def test_every_track_runs_every_shape_and_a_later_run_keeps_the_other_groups(self):
        result = self.run_groups("skinny")
        self.assertEqual(result.returncode, 0, result.stderr)
        skinny = [shape for shape in shapes.suite() if shape[1] == "skinny"]
        calls = self.log.read_text().splitlines()
        self.assertEqual(len(calls), len(skinny) * 3)
        self.assertEqual(calls[0].split()[:7], ["bf16", "-m", "16", "-n", "4096", "-k", "4096"])
        self.assertEqual([call.split()[0] for call in calls[:3]], ["bf16", "fp32-tc", "fp32"])
        out_dir = self.results / results_csv.gpu_slug("Fixture GPU")
        result = self.run_groups("k-heavy")
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = results_csv.read_rows(out_dir / shapes.CSV_NAME, shapes.SHAPE_COLUMNS)
        self.assertEqual({row["group"] for row in rows}, {"skinny", "k-heavy"})
        self.assertEqual(len(rows), 6 * 3)
        self.assertEqual({(row["stage"], row["kernel"]) for row in rows},
                         {("bf16", "20"), ("fp32-tc", "24"), ("fp32", "10")})
        result = self.run_groups("skinny", "--stages", "fp32")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(results_csv.read_rows(out_dir / shapes.CSV_NAME, shapes.SHAPE_COLUMNS)), len(rows))
        self.assertEqual([call.split()[0] for call in self.log.read_text().splitlines()[-3:]], ["fp32"] * 3)
        table = (out_dir / shapes.TABLE_NAME).read_text(encoding="utf-8")
        self.assertIn("| track fp32-tc | FP32 on tensor cores | cuBLAS SGEMM | M ≤ 256 | 2 | 1.24x |", table)
        self.assertIn("| m16 | skinny | 16 | 4096 | 4096 | 120.0 % (23.5, kernel 20) ✓ | 1.24x (23.5, kernel 24) ✓ | "
                      "110.0 % (23.5, kernel 10) ✓ |", table)
        self.assertIn("| bf16 | 20 | 6 | 120.3 % | 120.0 % (m16) |", table)
        self.assertEqual((out_dir / shapes.CHART_NAME).read_bytes()[:8], b"\x89PNG\r\n\x1a\n")

    def test_a_stage_runs_on_request_beside_the_tracks(self):
        result = self.run_groups("skinny", "--shapes", "n16", "--stages", "20", "bf16")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([call.split()[0] for call in self.log.read_text().splitlines()], ["20", "bf16"])
        table = (self.results / "fixture-gpu" / shapes.TABLE_NAME).read_text(encoding="utf-8")
        self.assertIn("| shape | group | M | N | K | stage 20 | track bf16 |", table)
        self.assertIn("| n16 | skinny | 8192 | 16 | 8192 | 120.8 % (23.5) ✓ | 120.8 % (23.5, kernel 20) ✓ |", table)
        self.assertIn("| stage 20 | `cublas` | cuBLAS SGEMM | all shapes | 1 |", table)
        result = self.run_groups("skinny", "--stages", "bf17")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("'bf17' is neither a stage number nor a track (bf16, fp32-tc, fp32, fp8)", result.stderr)

    def test_no_run_reports_a_file_from_before_the_tracks_as_the_stages_it_holds(self):
        fixture = results_csv.read_rows(FIXTURE)[0]
        rows = [{**fixture, "stage": stage, "precision": precision, "shape": "m16", "group": "skinny", "m": 16,
                 "n": 4096, "k": 4096, "ratio_to_cublas": ratio}
                for stage, precision, ratio in ((20, "bf16", 0.9), (24, "fp32", 2.5), (10, "fp32", 0.5))]
        out_dir = self.results / "fixture-gpu"
        out_dir.mkdir(parents=True)
        results_csv.write_rows(rows, out_dir / shapes.CSV_NAME, shapes.SHAPE_COLUMNS)
        self.assertNotIn(",kernel,", (out_dir / shapes.CSV_NAME).read_text())
        self.assertEqual(shapes.main(["--no-run", "--results-dir", str(self.results)]), 0)
        table = (out_dir / shapes.TABLE_NAME).read_text(encoding="utf-8")
        self.assertIn("stages 20, 24 and 10, each against cuBLAS", table)
        self.assertNotIn("| track", table)
        self.assertNotIn("the tracks chose", table)
        self.assertIn("| stage 20 | `cublas` | cuBLAS bf16 | all shapes | 1 | 90.0 % | 90.0 % (m16) |", table)
        self.assertIn("| stage 24 | `cublas` | cuBLAS SGEMM | all shapes | 1 | 2.50x | 2.50x (m16) |", table)
        self.assertIn("| m16 | skinny | 16 | 4096 | 4096 | 90.0 % (23.5) ✓ | 2.50x (23.5) ✓ | 50.0 % (23.5) ✓ |", table)

    def test_named_shapes_run_alone_and_unknown_names_are_refused(self):
        result = self.run_groups("skinny", "--shapes", "n16", "--stages", "bf16")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.log.read_text().split()[:7], ["bf16", "-m", "8192", "-n", "16", "-k", "8192"])
        self.assertEqual(len(self.log.read_text().splitlines()), 1)
        result = self.run_groups("skinny", "--shapes", "qkv_64")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("no shape qkv_64", result.stderr)


if __name__ == "__main__":
    unittest.main()
