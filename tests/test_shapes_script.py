"""scripts/shapes.py: the suite holds the shapes the issue names, each track runs every shape,
a run keeps the rows of the shapes it does not run, and the summary's geomean and worst are
right. A fake sgemm binary writes one row per call."""
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

# Mimics `sgemm <stage> -m M -n N -k K --time-budget T --csv FILE`: appends the fixture's first
# row with that stage and shape, its ratio to cuBLAS 1 + stage / 100 + M / 1e6 (so that each
# stage and shape reads apart), and logs its argv.
FAKE_BINARY = textwrap.dedent("""\
    #!{python}
    import csv, os, sys
    fixture, log = {fixture!r}, {log!r}
    with open(log, "a") as f:
        f.write(" ".join(sys.argv[1:]) + "\\n")
    stage, _, m, _, n, _, k, _, budget, _, out = sys.argv[1:]
    with open(fixture, newline="") as f:
        header, first, *_ = list(csv.reader(f))
    row = dict(zip(header, first))
    row.update(stage=stage, m=m, n=n, k=k, ratio_to_cublas=str(1 + int(stage) / 100 + int(m) / 1e6))
    new_file = not os.path.exists(out)
    with open(out, "a", newline="") as f:
        writer = csv.writer(f, lineterminator="\\n")
        if new_file:
            writer.writerow(header)
        writer.writerow([row[column] for column in header])
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
        rows = [{"stage": 20, "shape": name, "m": m, "n": 4096, "ratio_to_cublas": ratio}
                for name, m, ratio in (("a", 64, 0.5), ("b", 128, 2.0), ("c", 4096, 1.0))]
        bands = {band: (count, mean, worst["shape"]) for band, count, mean, worst in shapes.summary(rows, 20)}
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
        self.binary.write_text(FAKE_BINARY.format(python=sys.executable, fixture=str(FIXTURE), log=str(self.log)))
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
        self.assertEqual(len(calls), len(skinny) * len(shapes.TRACKS))
        self.assertEqual(calls[0].split()[:7], ["20", "-m", "16", "-n", "4096", "-k", "4096"])
        out_dir = self.results / results_csv.gpu_slug("Fixture GPU")
        result = self.run_groups("k-heavy")
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = results_csv.read_rows(out_dir / shapes.CSV_NAME, shapes.SHAPE_COLUMNS)
        self.assertEqual({row["group"] for row in rows}, {"skinny", "k-heavy"})
        self.assertEqual(len(rows), 6 * len(shapes.TRACKS))
        result = self.run_groups("skinny", "--stages", "10")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(results_csv.read_rows(out_dir / shapes.CSV_NAME, shapes.SHAPE_COLUMNS)), len(rows))
        self.assertEqual([call.split()[0] for call in self.log.read_text().splitlines()[-3:]], ["10"] * 3)
        table = (out_dir / shapes.TABLE_NAME).read_text(encoding="utf-8")
        self.assertIn("| 24 | FP32 on tensor cores | cuBLAS SGEMM | M ≤ 256 | 2 |", table)
        self.assertIn("| m16 | skinny | 16 | 4096 | 4096 | 120.0 % (", table)
        self.assertEqual((out_dir / shapes.CHART_NAME).read_bytes()[:8], b"\x89PNG\r\n\x1a\n")

    def test_named_shapes_run_alone_and_unknown_names_are_refused(self):
        result = self.run_groups("skinny", "--shapes", "n16", "--stages", "20")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.log.read_text().split()[:7], ["20", "-m", "8192", "-n", "16", "-k", "8192"])
        self.assertEqual(len(self.log.read_text().splitlines()), 1)
        result = self.run_groups("skinny", "--shapes", "qkv_64")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("no shape qkv_64", result.stderr)


if __name__ == "__main__":
    unittest.main()
