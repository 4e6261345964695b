"""scripts/fit_fp32_model.py: the model's form is dispatch/fp32.cpp's (the test fp32_model_agrees
checks it against sgemm_model's predictions); the fit recovers the constants that made a set
of times; the header it writes reads back; the report counts the choices right."""
import csv
import math
import random
import sys
import tempfile
import unittest
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "scripts"))
import fit_fp32_model  # noqa: E402
import source_hashes  # noqa: E402

MODEL = fit_fp32_model.Model((3e-6, 2e-6, 1e-6, 20.0, 1e-11, 2.5e11, 2.8e12),
                             {"128x128": (0.7, 0.4), "128x32": (0.5, 0.2)}, 0.03)


def plan(tile="128x128", block_fmas=1e6, full_waves=0.0, last_wave=1.0, blocks_per_sm=2.0, dram_bytes=0.0,
         split_bytes=0.0, float_loads_per_fma=0.0, parts=1):
    block_m, block_n = (int(x) for x in tile.split("x"))
    return dict(tile=tile, block_m=block_m, block_n=block_n, block_k=8 if tile == "128x128" else 16, block_fmas=block_fmas, full_waves=full_waves, last_wave=last_wave,
                blocks_per_sm=blocks_per_sm, dram_bytes=dram_bytes, split_bytes=split_bytes,
                float_loads_per_fma=float_loads_per_fma,
                parts=parts)


class ModelTest(unittest.TestCase):
    def test_waves_shares_and_split(self):
        start = 1e-6 + 1e-11 * 128 * 128  # a wave's start: fixed, and a 128 x 128 tile's values
        # One block alone: 1e6 FMAs at 0.4 x 2.5e11 = 10 us, plus a start and the launch.
        self.assertAlmostEqual(fit_fp32_model.predicted(plan(), MODEL), 3e-6 + 10e-6 + start, places=12)
        # Two full waves of two blocks, at 0.7 / 2 each: 2 x (1e6 / 8.75e10 + a start).
        self.assertAlmostEqual(fit_fp32_model.predicted(plan(full_waves=2, last_wave=0), MODEL),
                               3e-6 + 2 * (1e6 / 8.75e10 + start), places=12)
        # Loaded value by value, 1/64 values an FMA at 20 FMA times each: 1.3125 as long.
        self.assertAlmostEqual(fit_fp32_model.predicted(plan(float_loads_per_fma=1 / 64), MODEL),
                               3e-6 + 10e-6 * 1.3125 + start, places=12)
        # A split adds a launch and its bytes at DRAM's rate.
        self.assertAlmostEqual(fit_fp32_model.predicted(plan(split_bytes=2.8e6), MODEL),
                               3e-6 + 10e-6 + start + (2e-6 + 1e-6), places=12)
        # A smaller tile's wave starts sooner: 128 x 32 holds a quarter of the values.
        self.assertAlmostEqual(fit_fp32_model.predicted(plan(tile="128x32", block_fmas=0.0), MODEL),
                               3e-6 + 1e-6 + 1e-11 * 128 * 32, places=12)
        # DRAM bounds the kernel where it takes longer than the blocks.
        self.assertAlmostEqual(fit_fp32_model.predicted(plan(dram_bytes=2.8e8), MODEL), 3e-6 + 100e-6, places=12)

    def test_the_fit_recovers_the_constants_that_made_the_times(self):
        rng = random.Random(5)
        problems = {}
        for i in range(60):
            plans = []
            for tile in MODEL.shares:
                for float_loads in (0.0, 1 / 64, 1 / 16):
                    # 128 x 32 as stage 10 builds it, four blocks an SM: its full share binds too.
                    p = plan(tile, block_fmas=10 ** rng.uniform(5, 8), full_waves=rng.choice((0, 1, 3)),
                             blocks_per_sm=4.0 if tile == "128x32" else 2.0,
                             last_wave=rng.choice((1, 2)), split_bytes=rng.choice((0, 1e6, 1e7)),
                             float_loads_per_fma=float_loads, dram_bytes=10 ** rng.uniform(4, 8))
                    p.update(seconds=fit_fp32_model.predicted(p, MODEL), cublas=1e-4)
                    plans.append(p)
            problems[(i, 1, 1)] = plans
        start = MODEL.from_vector(tuple(1.5 * x for x in MODEL.vector()))
        fitted = fit_fp32_model.fit_model(problems, start, 132)
        for got, wanted in zip(fitted.vector(), MODEL.vector()):
            self.assertAlmostEqual(got / wanted, 1.0, places=3)
        self.assertEqual(fitted.constants[fit_fp32_model.FITTED:], start.constants[fit_fp32_model.FITTED:])

    def test_the_header_reads_back(self):
        with tempfile.TemporaryDirectory() as tmp:
            header = Path(tmp) / "fit.hpp"
            fit_fp32_model.write_header(header, MODEL, "Fitted on made-up plans.")
            model, fitted_on = fit_fp32_model.read_header(header)
        self.assertEqual(fitted_on, "Fitted on made-up plans.")
        self.assertEqual(model.constants, MODEL.constants)
        self.assertEqual(model.shares, MODEL.shares)
        self.assertEqual(model.margin, MODEL.margin)

    def test_the_committed_header_names_every_tile(self):
        model, _ = fit_fp32_model.read_header(REPO_ROOT / fit_fp32_model.HEADER)
        self.assertEqual(set(model.shares), {"128x128", "64x256", "32x256", "16x256", "128x64", "128x32", "64x64"})
        self.assertEqual(len(model.constants), len(fit_fp32_model.CONSTANTS))

    def test_the_report_counts_a_wrong_choice_and_what_it_cost(self):
        fast, slow = plan(block_fmas=1e6), plan(block_fmas=2e6)
        fast.update(seconds=30e-6, cublas=15e-6)  # predicted faster, measured slower
        slow.update(seconds=20e-6, cublas=15e-6)
        text = fit_fp32_model.report({(8, 8, 8): [fast, slow]}, MODEL, "t", 132)
        self.assertIn("chose the fastest plan timed on 0 of 1", text)
        self.assertIn("at most 50.0 %", text)
        self.assertIn("| all | 1 | 50.0 % | 50.0 % | 50.0 % | 75.0 % | 75.0 % |", text)

    def test_waves_worked_out_again_for_another_count_of_blocks_an_sm(self):
        # 4096 x 4096 in 32 x 256 tiles: 2048 blocks, 16 on the busiest of 132 SMs; 8 full waves of
        # two, or 5 of three and a last wave of one.
        p = plan("32x256", full_waves=8.0, last_wave=0.0, blocks_per_sm=2.0)
        again = fit_fp32_model.with_blocks_per_sm({(4096, 4096, 4096): [p]}, {"32x256": 3}, 132)
        self.assertEqual([(x["blocks_per_sm"], x["full_waves"], x["last_wave"]) for x in again[(4096, 4096, 4096)]],
                         [(3.0, 5.0, 1.0)])


class OwnPlanTest(unittest.TestCase):
    # Stage 10's own plan as its launcher chooses it (10_tuned.cu): few rows on their tiles,
    # else the tuner's, K split where whole waves finish sooner (k_parts, 10_tuned.cuh). The
    # tool's choices are checked against this one by the test fp32_model_agrees.
    TILES = [plan(t, blocks_per_sm=2.0) for t in ("128x128", "64x256", "32x256", "16x256")]

    def own(self, shape):
        return fit_fp32_model.own_plan(shape, self.TILES, 132)

    def test_the_launchers_tiles(self):
        self.assertEqual(self.own((8, 8192, 4096))[0], "16x256")
        self.assertEqual(self.own((20, 8192, 4096))[0], "32x256")
        self.assertEqual(self.own((40, 8192, 4096))[0], "64x256")  # 32 blocks of 64 rows
        self.assertEqual(self.own((40, 2048, 4096))[0], "128x128")  # 8: too few
        self.assertEqual(self.own((4096, 4096, 4096)), ("128x128", 1))  # 1024 tiles, whole waves of 264

    def test_k_parts_fills_the_slots(self):
        # 1024^3: 64 tiles of 128 K steps for 264 slots. Whole K: one wave of 128 steps; 4 parts
        # of 32 fill 256 slots in one wave, 32 x 1.12 = 35.84; 5 parts take two waves.
        self.assertEqual(fit_fp32_model.k_parts(64, 128, 264), 4)
        self.assertEqual(fit_fp32_model.k_parts(64, 16, 264), 1)  # parts keep 16 K steps at least

    def test_the_track_keeps_its_own_plan_within_the_margin(self):
        own, other = plan("128x128"), plan("128x32", block_fmas=0.2e6)  # 4 us of FMAs against 10
        problems = [own, other]
        for p in problems:
            p["parts"] = 1
        shape = (4096, 4096, 4096)
        near = fit_fp32_model.Model(MODEL.constants, MODEL.shares, 10.0)  # a margin wider than any gain
        self.assertIs(fit_fp32_model.track_choice(shape, problems, near, 132), own)
        self.assertIs(fit_fp32_model.track_choice(shape, problems, MODEL, 132), other)
        self.assertIsNone(fit_fp32_model.track_choice((8, 8, 8), problems, MODEL, 132))  # no 16x256 plan


class SourcesTest(unittest.TestCase):
    # A plan's time measures stage 10's kernel as it was built (sgemm_model's `sources`
    # column): a fit on times of a kernel the tree no longer has models that old kernel.
    def test_only_other_hashes_than_the_trees_are_named(self):
        tree = source_hashes.WorkingTree(REPO_ROOT)
        now = source_hashes.sources_hash("10", tree)
        self.assertEqual(source_hashes.measured_elsewhere([("10", now)], tree), [])
        self.assertEqual(source_hashes.measured_elsewhere([("10", now), ("10", "0123456789ab")], tree),
                         [("10", "0123456789ab", now)])

    def test_the_fit_refuses_them_and_leaves_the_header(self):
        with tempfile.TemporaryDirectory() as tmp:
            header, plans = Path(tmp) / "fit.hpp", Path(tmp) / "plans.csv"
            fit_fp32_model.write_header(header, MODEL, "Fitted on made-up plans.")
            before = header.read_text()
            row = dict(m=1, n=256, k=64, tile="128x128", parts=1, block_m=128, block_n=128, block_k=8,
                       blocks_per_sm=2, block_fmas=1e6, full_waves=0, last_wave=1, dram_bytes=0, split_bytes=0,
                       float_loads_per_fma=0, predicted_us=10, chosen=1, own=1, median_ms=0.01,
                       cublas_median_ms=0.01, timing="graph", sources="0123456789ab")
            with open(plans, "w", newline="") as file:
                writer = csv.DictWriter(file, fieldnames=row.keys())
                writer.writeheader()
                writer.writerow(row)
            with self.assertRaises(SystemExit) as refused:
                fit_fp32_model.main(["--plans", str(plans), "--header", str(header)])
            self.assertIn("stage 10 measured on 0123456789ab", str(refused.exception.code))
            self.assertEqual(header.read_text(), before)


if __name__ == "__main__":
    unittest.main()
