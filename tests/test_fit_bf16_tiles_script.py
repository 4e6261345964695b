"""scripts/fit_bf16_tiles.py: its model is dispatch/bf16_tiles.cpp's (by hand, from the
formula); the fit recovers the constants that made a set of times; the header it writes
reads back; the report counts a choice right where the model picks the fastest plan."""
import csv
import math
import random
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "scripts"))
import fit_bf16_tiles  # noqa: E402

TRUE = [3e-6, 3e12, 5e10, 3e12, 5e-9, 1.5e11, 2.5e10, 3e10, 1e11, 5e-7]
FP8_TRUE = TRUE + [4e-11]
HEADER = [name for name in ("m", "n", "k", "tile", "weights_as_rows", "rows", "columns", "consumers", "cluster",
                            "ctas", "split_tail", "splits", *fit_bf16_tiles.TERMS, "predicted_us", "chosen", "median_ms",
                            "cublas_median_ms", "timing")]


def terms(k_tiles=10, step_bytes=32768, step_macs=1 << 20, wgmmas=8, dram=0.0, store=0.0, split=0.0,
          cluster_split=0.0, tiles=0.0):
    return dict(sm_k_tiles=k_tiles, step_bytes=step_bytes, step_macs=step_macs, step_wgmmas=wgmmas,
                dram_bytes=dram, sm_store_bytes=store, sm_split_bytes=split, sm_cluster_split_bytes=cluster_split,
                sm_tiles=tiles)


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
        # Each tile the SM starts, 0.5 us.
        self.assertAlmostEqual(fit_bf16_tiles.predicted(terms(step_bytes=1000, dram=3e8, tiles=4), False, TRUE),
                               3e-6 + 1e-4 + 2e-6, places=12)


class Fp8ModelTest(unittest.TestCase):
    def test_a_k_block_takes_no_less_than_a_consumers_path(self):
        # Stage 30's step: 2^20 / 3e12 + 8 x 5 ns = 389.5 ns. One consumer of two: half the
        # multiply-adds (174.8 ns), then 8192 sums at 40 ps (327.7 ns): 502.5 ns a step; and
        # two tiles started at 0.5 us (stage 30's term).
        t = {**terms(step_bytes=1000, store=1.5e6, tiles=2.0), "consumers": 2.0, "promoted_values": 8192.0,
             "d_values": 0.0}
        self.assertAlmostEqual(fit_bf16_tiles.predicted(t, False, FP8_TRUE),
                               3e-6 + 10 * ((1 << 20) / 3e12 / 2 + 8192 * 4e-11) + 1e-5 + 1e-6, places=12)
        # Three consumers of fewer sums each: stage 30's step, longer, bounds it.
        t["consumers"] = 3.0
        t["promoted_values"] = 1000.0
        self.assertAlmostEqual(fit_bf16_tiles.predicted(t, False, FP8_TRUE),
                               fit_bf16_tiles.predicted(t, False, TRUE), places=15)
        # DRAM-bound: D's 1.5e8 values at two bytes where stage 30's terms count C's four.
        t.update(dram_bytes=9e8, d_values=1.5e8)
        self.assertAlmostEqual(fit_bf16_tiles.predicted(t, False, FP8_TRUE),
                               fit_bf16_tiles.predicted({**t, "dram_bytes": 6e8}, False, TRUE), places=15)

    def test_the_tiles_an_sm_starts_from_its_k_blocks(self):
        with tempfile.TemporaryDirectory() as tmp:
            plans = Path(tmp) / "plans.csv"
            with open(plans, "w", newline="") as file:
                writer = csv.DictWriter(file, fieldnames=HEADER)
                writer.writeheader()
                # K = 1000: 8 blocks of 128. Three rounds; stream-K's share (2.5 tiles); a third of K.
                for k_blocks in (24, 20, 3):
                    writer.writerow({**{c: "1" for c in HEADER}, "k": 1000, "rows": 192, "columns": 128,
                                     "consumers": 3, "sm_k_tiles": k_blocks, "median_ms": 1, "cublas_median_ms": 1})
            read = fit_bf16_tiles.read_plans(plans)
            self.assertEqual([plan[2]["sm_tiles"] for plan in read], [3, 3, 1])
            # Stage 30's plans count K in tiles of 64: 16 of them.
            self.assertEqual([plan[2]["sm_tiles"] for plan in fit_bf16_tiles.read_plans(plans, 64)], [2, 2, 1])
            self.assertEqual([plan[2]["promoted_values"] for plan in read], [8192] * 3)


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
                        # The tiles started, as read_plans counts them: K = 4096 is 64 tiles of 64.
                        t["sm_tiles"] = math.ceil(t["sm_k_tiles"] / 64)
                        seconds = fit_bf16_tiles.predicted(t, swapped or splits > 1, TRUE)
                        row = {key: value for key, value in t.items() if key != "sm_tiles"}
                        writer.writerow({"m": problem + 1, "n": 4096, "k": 4096, "tile": option,
                                         "weights_as_rows": int(swapped), "rows": 128, "columns": 64, "consumers": 2,
                                         "cluster": 1, "ctas": 132, "split_tail": 0, "splits": splits, **row,
                                         "predicted_us": 0,
                                         "chosen": 0, "median_ms": seconds * 1e3,
                                         "cublas_median_ms": seconds * 1e3, "timing": "graph"})
            header = Path(tmp) / "fit.hpp"
            shutil.copy(REPO_ROOT / "dispatch" / "bf16_tiles_fit.hpp", header)
            report = Path(tmp) / "fit.md"
            self.assertEqual(fit_bf16_tiles.main(["--plans", str(plans), "--header", str(header), "--fitted-on",
                                                  "test plans", "--report", str(report)]), 0)
            fitted = fit_bf16_tiles.read_header(header)
            for _, _, t, swapped, seconds, _ in fit_bf16_tiles.read_plans(plans, 64):
                self.assertAlmostEqual(fit_bf16_tiles.predicted(t, swapped, fitted) / seconds, 1.0, delta=0.01)
            self.assertIn("Fitted by scripts/fit_bf16_tiles.py on test plans.", header.read_text())
            # The model made the times, so it chooses the fastest plan of every problem.
            self.assertIn("| all | 40 | 1.000 | 40 | 100.0 % | 100.0 % |", report.read_text())

    def test_times_of_sources_the_tree_no_longer_has_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            plans, header = Path(tmp) / "plans.csv", Path(tmp) / "fit.hpp"
            shutil.copy(REPO_ROOT / "dispatch" / "bf16_tiles_fit.hpp", header)
            before = header.read_text()
            with open(plans, "w", newline="") as file:
                writer = csv.DictWriter(file, fieldnames=HEADER + ["sources"])
                writer.writeheader()
                writer.writerow({"m": 128, "n": 4096, "k": 4096, "tile": 0, "weights_as_rows": 0, "rows": 128,
                                 "columns": 64, "consumers": 2, "cluster": 1, "ctas": 132, "split_tail": 0,
                                 "splits": 1, **{key: value for key, value in terms().items() if key != "sm_tiles"},
                                 "predicted_us": 0, "chosen": 0, "median_ms": 0.05, "cublas_median_ms": 0.05,
                                 "timing": "graph", "sources": "0123456789ab"})
            with self.assertRaises(SystemExit) as refused:
                fit_bf16_tiles.main(["--plans", str(plans), "--header", str(header)])
            self.assertIn("stage 30 measured on 0123456789ab", str(refused.exception.code))
            self.assertEqual(header.read_text(), before)


class StageThirtyOneTest(unittest.TestCase):
    def test_its_constants_start_as_stage_thirtys_and_a_fit_writes_its_own(self):
        with tempfile.TemporaryDirectory() as tmp:
            header = Path(tmp) / "fp8_fit.hpp"
            shutil.copy(REPO_ROOT / "dispatch" / "fp8_tiles_fit.hpp", header)
            stage30 = fit_bf16_tiles.read_header(REPO_ROOT / "dispatch" / "bf16_tiles_fit.hpp")
            if "kFp8AnyTileCost = kAnyTileCost;" in header.read_text():
                self.assertEqual(fit_bf16_tiles.read_header(header, "kFp8AnyTileCost"), stage30)
            fit_bf16_tiles.write_header(header, FP8_TRUE, "FP8 test plans", "kFp8AnyTileCost")
            text = header.read_text()
            self.assertIn("Fitted by scripts/fit_bf16_tiles.py on FP8 test plans.", text)
            self.assertIn("constexpr Fp8TileConstants kFp8AnyTileCost{3e-06, ", text)
            self.assertEqual(fit_bf16_tiles.read_header(header, "kFp8AnyTileCost"), FP8_TRUE)
            self.assertEqual(fit_bf16_tiles.read_header(REPO_ROOT / "dispatch" / "bf16_tiles_fit.hpp"), stage30)


class StageTwentyNineTest(unittest.TestCase):
    def test_its_constants_start_as_stage_thirty_ones_and_its_rows_say_where_d_leaves_from(self):
        with tempfile.TemporaryDirectory() as tmp:
            header = Path(tmp) / "fp8_fit.hpp"
            shutil.copy(REPO_ROOT / "dispatch" / "fp8_fit.hpp", header)
            stage31 = fit_bf16_tiles.read_header(REPO_ROOT / "dispatch" / "fp8_tiles_fit.hpp", "kFp8AnyTileCost")
            if "kStage29Cost = kFp8AnyTileCost;" in header.read_text():
                self.assertEqual(fit_bf16_tiles.read_header(header, "kStage29Cost"), stage31)
            fit_bf16_tiles.write_header(header, FP8_TRUE, "stage 29's test tiles", "kStage29Cost")
            self.assertEqual(fit_bf16_tiles.read_header(header, "kStage29Cost"), FP8_TRUE)
            plans = Path(tmp) / "plans.csv"
            columns = ["m", "n", "k", "tile", "weights_as_rows", "rows", "columns", "cluster", "split_tail", "splits",
                       *fit_bf16_tiles.TERMS, "median_ms", "cublas_median_ms", "direct_stores"]
            with open(plans, "w", newline="") as file:
                writer = csv.DictWriter(file, fieldnames=columns)
                writer.writeheader()
                for direct in ("0", "1"):
                    writer.writerow({**{c: "1" for c in columns}, "weights_as_rows": "0", "direct_stores": direct})
            self.assertEqual([plan[3] for plan in fit_bf16_tiles.read_plans(plans)], [False, True])


class TrackTest(unittest.TestCase):
    def test_the_track_runs_the_faster_predicted_of_the_two_stages(self):
        # One problem: stage 31's plan predicted faster (by its constants) and timed at 1.2 of
        # cuBLASLt; stage 29's tile, its own model's, at 0.9: the track's choice is 31's.
        c31 = fit_bf16_tiles.read_header(fit_bf16_tiles.HEADERS[31], "kFp8AnyTileCost")
        c29 = fit_bf16_tiles.read_header(fit_bf16_tiles.HEADERS[29], "kStage29Cost")
        with tempfile.TemporaryDirectory() as tmp:
            paths = {}
            for stage, (step_bytes, ratio) in {31: (16384, 1.2), 29: (1 << 22, 0.9)}.items():
                paths[stage] = Path(tmp) / f"{stage}.csv"
                with open(paths[stage], "w", newline="") as file:
                    writer = csv.DictWriter(file, fieldnames=HEADER)
                    writer.writeheader()
                    writer.writerow({**{c: "1" for c in HEADER}, "m": 4096, "n": 4096, "k": 4096, "rows": 128,
                                     "columns": 128, "consumers": 2, "step_bytes": step_bytes, "median_ms": 1,
                                     "cublas_median_ms": ratio})
            plans31, plans29 = fit_bf16_tiles.read_plans(paths[31]), fit_bf16_tiles.read_plans(paths[29])
            self.assertLess(fit_bf16_tiles.predicted(plans31[0][2], False, c31),
                            fit_bf16_tiles.predicted(plans29[0][2], False, c29))
            text = fit_bf16_tiles.track_report(plans31, (plans29, paths[29]), "t", "c")
            self.assertIn("| M ≥ 1024 | 1 | 120.0 % | 1 | 120.0 % | 90.0 % |", text)


if __name__ == "__main__":
    unittest.main()
