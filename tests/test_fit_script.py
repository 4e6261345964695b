"""scripts/fit_bf16_cost.py: the model's form is dispatch/bf16_cost.cpp's; the fit recovers
the constants that made a set of times; the header it writes reads back; the report counts
the choices right and the bands' geomeans; --evaluate reads the header and fits nothing;
--check fails a row of sgemm_model's CSV whose time or choice this model does not give."""
import csv
import math
import random
import sys
import tempfile
import unittest
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "scripts"))
import fit_bf16_cost  # noqa: E402

CONSTANTS = (3e-6, 2.5e12, 5e10, 2.5e12, 4e10, 1e12)


def terms(dram_bytes=0.0, sm_steps=0.0, step_bytes=0.0, step_macs=0.0, split_bytes=0.0, copy_bytes=0.0):
    return dict(dram_bytes=dram_bytes, sm_steps=sm_steps, step_bytes=step_bytes, step_macs=step_macs,
                split_bytes=split_bytes, copy_bytes=copy_bytes)


def random_terms(rng):
    """Terms of a made-up problem where any of the limits may bind."""
    step_bytes = rng.choice((9216, 24576, 49152))
    return terms(dram_bytes=10 ** rng.uniform(5, 9), sm_steps=10 ** rng.uniform(0, 3), step_bytes=step_bytes,
                 step_macs=step_bytes * 10 ** rng.uniform(0.5, 2.5), split_bytes=rng.choice((0, 1e5, 1e6)),
                 copy_bytes=rng.choice((0, 1e6, 1e8)))


class ModelTest(unittest.TestCase):
    def test_the_fixed_part_the_longer_limit_and_the_split(self):
        # DRAM: 1e9 / 2.5e12 = 400 us; the SMs: 100 steps of max(24576 / 5e10, 5e6 / 2.5e12) = 2 us.
        self.assertAlmostEqual(fit_bf16_cost.predicted(terms(1e9, 100, 24576, 5e6, 4e6), CONSTANTS),
                               3e-6 + 400e-6 + 100e-6, places=12)
        # The padded copies run before and after the kernel: 1e8 / 1e12 = 100 us more.
        self.assertAlmostEqual(fit_bf16_cost.predicted(terms(1e9, 100, 24576, 5e6, 4e6, 1e8), CONSTANTS),
                               3e-6 + 400e-6 + 100e-6 + 100e-6, places=12)
        self.assertAlmostEqual(fit_bf16_cost.predicted(terms(1e6, 1000, 24576, 5e6), CONSTANTS),
                               3e-6 + 1000 * 2e-6, places=12)
        self.assertAlmostEqual(fit_bf16_cost.predicted(terms(1e6, 1000, 245760, 5e6), CONSTANTS),
                               3e-6 + 1000 * 245760 / 5e10, places=12)

    def test_the_fit_recovers_the_constants_that_made_the_times(self):
        rng = random.Random(3)
        samples = [(t, fit_bf16_cost.predicted(t, CONSTANTS)) for t in (random_terms(rng) for _ in range(80))]
        fitted = fit_bf16_cost.fit(samples, tuple(2 * c for c in CONSTANTS))
        for got, wanted in zip(fitted, CONSTANTS):
            self.assertAlmostEqual(got / wanted, 1.0, places=3)

    def test_the_header_reads_back(self):
        constants = {name: tuple(c * (1 + i) for c in CONSTANTS) for i, name in enumerate(fit_bf16_cost.SETS)}
        fitted_on = {name: f"Fitted on {name}'s problems." for name in fit_bf16_cost.SETS}
        with tempfile.TemporaryDirectory() as tmp:
            header = Path(tmp) / "fit.hpp"
            fit_bf16_cost.write_header(header, constants, fitted_on)
            text = header.read_text()
            read, read_on = fit_bf16_cost.read_header(header), fit_bf16_cost.read_fitted_on(header)
        self.assertIn("// Fitted on kStage25ByHandCost's problems.\nconstexpr CostConstants kStage25ByHandCost{", text)
        self.assertEqual(read_on, fitted_on)
        for name in fit_bf16_cost.SETS:
            for got, wanted in zip(read[name], constants[name]):
                self.assertAlmostEqual(got / wanted, 1.0, places=5)


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        # Two problems: on the first stage 25 is predicted and measured faster; on the
        # second stage 20 is predicted faster, but stage 25 ran 25 % faster.
        self.terms_path, self.times_path = self.dir / "terms.csv", self.dir / "times.csv"
        rows = {(20, 8, 4096, 4096): (terms(1e8, 10, 24576, 1e6), 50e-6, 0.7),
                (25, 8, 4096, 4096): (terms(3e7, 10, 24576, 1e6), 15e-6, 0.95),
                (20, 2048, 2048, 2048): (terms(3e7, 10, 24576, 1e6), 16e-6, 0.8),
                (25, 2048, 2048, 2048): (terms(1e8, 10, 24576, 1e6), 12.8e-6, 1.0)}
        with open(self.terms_path, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["m", "n", "k", "kernel", *fit_bf16_cost.TERMS, "predicted_us", "chosen"])
            for (stage, m, n, k), (t, _, _) in rows.items():
                writer.writerow([m, n, k, stage, *(t[name] for name in fit_bf16_cost.TERMS), 0, 0])
        with open(self.times_path, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["stage", "m", "n", "k", "median_ms", "ratio_to_cublas", "timing", "verified"])
            for (stage, m, n, k), (_, seconds, ratio) in rows.items():
                writer.writerow([stage, m, n, k, seconds * 1e3, ratio, "graph", ""])
            writer.writerow([20, 8, 4096, 4096, 1.0, 0.01, "launches", ""])  # the graph's row counts
        self.header = self.dir / "fit.hpp"
        fit_bf16_cost.write_header(self.header, dict.fromkeys(fit_bf16_cost.SETS, CONSTANTS),
                                   dict.fromkeys(fit_bf16_cost.SETS, "Made up."))

    def tearDown(self):
        self.tmp.cleanup()

    def test_evaluate_counts_the_choices_and_the_bands(self):
        report = self.dir / "report.md"
        fit_bf16_cost.main(["--evaluate", "--terms", str(self.terms_path), "--times", str(self.times_path),
                            "--header", str(self.header), "--report", str(report)])
        text = report.read_text()
        self.assertIn("2 problems, each timed on stage 20 and stage 25.", text)
        self.assertIn("It chose the faster kernel on 1 of 2; its wrong choices cost a geomean "
                      f"{100 * (math.sqrt(1.25) - 1):.2f} % over all problems, at most 25.0 %.", text)
        self.assertIn("| M ≤ 64 | 1 | 70.0 % | 95.0 % | 95.0 % | 95.0 % |", text)
        self.assertIn("| M ≥ 1024 | 1 | 80.0 % | 100.0 % | 80.0 % | 100.0 % |", text)
        self.assertIn("| 2048 | 2048 | 2048 |", text)
        self.assertIn("| 20 | 25 | 25.0 % |", text)
        self.assertIn("Made up.", self.header.read_text())  # nothing fitted

    def test_set_fits_only_stage_25s_set_for_rows_loaded_by_hand(self):
        report = self.dir / "by_hand.md"
        fit_bf16_cost.main(["--set", "kStage25ByHandCost", "--terms", str(self.terms_path), "--times", str(self.times_path),
                            "--header", str(self.header), "--report", str(report), "--fitted-on", "two problems"])
        constants, fitted_on = fit_bf16_cost.read_header(self.header), fit_bf16_cost.read_fitted_on(self.header)
        self.assertEqual(constants["kStage20Cost"], constants["kStage25Cost"])
        self.assertNotEqual(constants["kStage25ByHandCost"], constants["kStage25Cost"])
        self.assertEqual(fitted_on["kStage25Cost"], "Made up.")
        self.assertIn("two problems", fitted_on["kStage25ByHandCost"])
        text = report.read_text()
        self.assertIn("2 problems.", text)
        # With the other kernels' rows on the same problems: their geomeans beside it.
        compare = self.dir / "others.csv"
        with open(compare, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["stage", "m", "n", "k", "median_ms", "ratio_to_cublas", "verified", "kernel"])
            writer.writerow([14, 8, 4096, 4096, 0.1, 0.5, "true", "14"])
            writer.writerow([14, 2048, 2048, 2048, 0.1, 2.0, "true", "14"])
        fit_bf16_cost.main(["--set", "kStage25ByHandCost", "--terms", str(self.terms_path), "--times",
                            str(self.times_path), "--header", str(self.header), "--report", str(report),
                            "--compare", str(compare)])
        text = report.read_text()
        self.assertIn("| K | problems | stage 25 | 14 |", text)
        self.assertIn(f"| all | 2 | {100 * math.sqrt(0.95):.1f} % | 100.0 % |", text)
        self.assertIn("| 300 < K < 5000 | 2 |", text)
        self.assertIn(f"Stage 25's geomean ratio to cuBLAS over them: {100 * math.sqrt(0.95):.1f} %.", text)
        # Stages 20 and 25 timed on both: the report's choice between them, off the multiples.
        self.assertIn("## The model's choice among the kernels it weighs off the multiples", text)
        self.assertIn("2 problems, each timed on stage 25 and stage 20.", text)

    def test_the_padded_set_fits_the_fixed_part_and_the_copies_rate_alone(self):
        fit_bf16_cost.main(["--set", "kStage20PaddedCost", "--terms", str(self.terms_path), "--times",
                            str(self.times_path), "--header", str(self.header), "--fitted-on", "two problems"])
        padded = fit_bf16_cost.read_header(self.header)["kStage20PaddedCost"]
        for i, (got, start) in enumerate(zip(padded, CONSTANTS)):
            if i in fit_bf16_cost.PADDED_FREE:
                continue
            self.assertAlmostEqual(got / start, 1.0, places=5)  # kStage20Cost's, as written
        self.assertNotAlmostEqual(padded[0] / CONSTANTS[0], 1.0, places=3)


class CheckTest(unittest.TestCase):
    """--check on rows as sgemm_model writes them: a shape on the multiples of 8 (stages 20 and
    25 at their own constants) and one off them (the sets of OFF_MULTIPLES), each set made
    different so that a row predicted with another set fails."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.header = self.dir / "fit.hpp"
        self.constants = {name: tuple(c * (1 + 0.5 * i) for c in CONSTANTS)
                          for i, name in enumerate(fit_bf16_cost.SETS)}
        fit_bf16_cost.write_header(self.header, self.constants, dict.fromkeys(fit_bf16_cost.SETS, "Made up."))
        self.rows = []
        for (m, n, k), stages, chosen in (((8, 4096, 4096), (20, 25), 25), ((7, 1001, 999), (20, 25, 14), 14)):
            for stage in stages:
                t = terms(1e8, 10, 24576, 1e6, 4e5 if stage == chosen else 4e7, 0 if n % 8 == 0 else 1e6)
                name = fit_bf16_cost.constants_name(stage, n, k)
                self.rows.append([m, n, k, stage, *(f"{t[x]:.6g}" for x in fit_bf16_cost.TERMS),
                                  f"{fit_bf16_cost.predicted(t, self.constants[name]) * 1e6:.6g}",
                                  1 if stage == chosen else 0])

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, rows):
        path = self.dir / "model.csv"
        with open(path, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["m", "n", "k", "kernel", *fit_bf16_cost.TERMS, "predicted_us", "chosen"])
            writer.writerows(rows)
        return fit_bf16_cost.main(["--check", str(path), "--header", str(self.header)])

    def test_the_rows_as_written_pass(self):
        self.assertEqual(fit_bf16_cost.constants_name(14, 1001, 999), "kStage14Cost")
        self.assertEqual(fit_bf16_cost.constants_name(25, 1000, 1000), "kStage25Cost")
        self.assertEqual(self.check(self.rows), 0)

    def test_a_tampered_time_fails(self):
        for i in range(len(self.rows)):
            tampered = [row[:] for row in self.rows]
            tampered[i][-2] = f"{float(tampered[i][-2]) * 1.001:.6g}"
            self.assertEqual(self.check(tampered), 1, i)

    def test_a_tampered_term_fails(self):
        tampered = [row[:] for row in self.rows]
        tampered[3][4] = f"{float(tampered[3][4]) * 2:.6g}"  # stage 25 by hand's DRAM bytes
        self.assertEqual(self.check(tampered), 1)

    def test_a_kernel_chosen_that_is_not_the_least_fails(self):
        tampered = [row[:] for row in self.rows]
        tampered[0][-1], tampered[1][-1] = 1, 0
        self.assertEqual(self.check(tampered), 1)


if __name__ == "__main__":
    unittest.main()
