"""scripts/fit_bf16_tiles.py: its model is dispatch/bf16_tiles.cpp's (by hand, from the
formula); the fit recovers the constants that made a set of times; the header it writes
reads back; the report counts a choice right where the model picks the fastest plan."""
import csv
import random
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "scripts"))
import fit_bf16_tiles  # noqa: E402

TRUE = [3e-6, 3e12, 5e10, 3e12, 5e-9, 1.5e11, 2.5e10, 3e10, 1e11]
HEADER = [name for name in ("m", "n", "k", "tile", "weights_as_rows", "rows", "columns", "consumers", "cluster",
                            "ctas", "split_tail", "splits", *fit_bf16_tiles.TERMS, "predicted_us", "chosen", "median_ms",
                            "cublas_median_ms", "timing")]


def terms(k_tiles=10, step_bytes=32768, step_macs=1 << 20, wgmmas=8, dram=0.0, store=0.0, split=0.0,
          cluster_split=0.0):
    return dict(sm_k_tiles=k_tiles, step_bytes=step_bytes, step_macs=step_macs, step_wgmmas=wgmmas,
                dram_bytes=dram, sm_store_bytes=store, sm_split_bytes=split, sm_cluster_split_bytes=cluster_split)


class ModelTest(unittest.TestCase):
    def test_the_formula(self):
        # MMA-bound K tiles: 2^20 / 3e12 + 8 x 5 ns each, ten of them, a fixed part and C.
        t = terms(step_bytes=1000, store=1.5e6)
        self.assertAlmostEqual(fit_bf16_tiles.predicted(t, False, TRUE),
                               3e-6 + 10 * ((1 << 20) / 3e12 + 8 * 5e-9) + 1e-5, places=12)
        # Swapped, C at its own rate; load-bound steps; DRAM where it takes longer.
        self.assertAlmostEqual(fit_bf16_tiles.predicted(terms(step_bytes=5e5, store=2.5e5), True, TRUE),
                               3e-6 + 10 * 1e-5 + 1e-5, places=12)
        self.assertAlmostEqual(fit_bf16_tiles.predicted(terms(step_bytes=1000, dram=3e8, split=3e5), False, TRUE),
                               3e-6 + 1e-4 + 1e-5, places=12)
        # K split in a cluster: its sums through distributed shared memory at their own rate.
        self.assertAlmostEqual(fit_bf16_tiles.predicted(terms(step_bytes=1000, dram=3e8, cluster_split=1e6), False,
                                                        TRUE), 3e-6 + 1e-4 + 1e-5, places=12)


class FitTest(unittest.TestCase):
    def test_recovers_constants_and_reports_choices(self):
        rng = random.Random(3)
        with tempfile.TemporaryDirectory() as tmp:
            plans = Path(tmp) / "plans.csv"
            with open(plans, "w", newline="") as file:
                writer = csv.DictWriter(file, fieldnames=HEADER)
                writer.writeheader()
                for problem in range(40):
                    for option in range(4):
                        swapped = option % 2 == 1
                        splits = rng.choice([1, 1, 2, 4]) if option < 2 else 1
                        t = terms(k_tiles=rng.randint(1, 200), step_bytes=rng.choice([16384, 32768, 49152]),
                                  step_macs=rng.choice([1 << 18, 1 << 19, 1 << 20, 1 << 21]),
                                  wgmmas=rng.choice([4, 8, 12]), dram=rng.uniform(1e6, 4e8),
                                  store=rng.uniform(1e4, 2e6), split=rng.choice([0.0, rng.uniform(1e4, 1e6)]),
                                  cluster_split=rng.uniform(1e5, 2e6) if splits > 1 else 0.0)
                        seconds = fit_bf16_tiles.predicted(t, swapped or splits > 1, TRUE)
                        writer.writerow({"m": problem + 1, "n": 4096, "k": 4096, "tile": option,
                                         "weights_as_rows": int(swapped), "rows": 128, "columns": 64, "consumers": 2,
                                         "cluster": 1, "ctas": 132, "split_tail": 0, "splits": splits, **t, "predicted_us": 0,
                                         "chosen": 0, "median_ms": seconds * 1e3,
                                         "cublas_median_ms": seconds * 1e3, "timing": "graph"})
            header = Path(tmp) / "fit.hpp"
            shutil.copy(REPO_ROOT / "dispatch" / "bf16_tiles_fit.hpp", header)
            report = Path(tmp) / "fit.md"
            self.assertEqual(fit_bf16_tiles.main(["--plans", str(plans), "--header", str(header), "--fitted-on",
                                                  "test plans", "--report", str(report)]), 0)
            fitted = fit_bf16_tiles.read_header(header)
            for _, _, t, swapped, seconds, _ in fit_bf16_tiles.read_plans(plans):
                self.assertAlmostEqual(fit_bf16_tiles.predicted(t, swapped, fitted) / seconds, 1.0, delta=0.01)
            self.assertIn("Fitted by scripts/fit_bf16_tiles.py on test plans.", header.read_text())
            # The model made the times, so it chooses the fastest plan of every problem.
            self.assertIn("| all | 40 | 1.000 | 40 | 100.0 % | 100.0 % |", report.read_text())


class StageThirtyOneTest(unittest.TestCase):
    def test_its_constants_start_as_stage_thirtys_and_a_fit_writes_its_own(self):
        with tempfile.TemporaryDirectory() as tmp:
            header = Path(tmp) / "fp8_fit.hpp"
            shutil.copy(REPO_ROOT / "dispatch" / "fp8_tiles_fit.hpp", header)
            stage30 = fit_bf16_tiles.read_header(REPO_ROOT / "dispatch" / "bf16_tiles_fit.hpp")
            if "kFp8AnyTileCost = kAnyTileCost;" in header.read_text():
                self.assertEqual(fit_bf16_tiles.read_header(header, "kFp8AnyTileCost"), stage30)
            fit_bf16_tiles.write_header(header, TRUE, "FP8 test plans", "kFp8AnyTileCost")
            text = header.read_text()
            self.assertIn("Fitted by scripts/fit_bf16_tiles.py on FP8 test plans.", text)
            self.assertIn("constexpr AnyTileConstants kFp8AnyTileCost{3e-06, ", text)
            self.assertEqual(fit_bf16_tiles.read_header(header, "kFp8AnyTileCost"), TRUE)
            self.assertEqual(fit_bf16_tiles.read_header(REPO_ROOT / "dispatch" / "bf16_tiles_fit.hpp"), stage30)


if __name__ == "__main__":
    unittest.main()
