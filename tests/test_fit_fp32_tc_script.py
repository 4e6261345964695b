"""scripts/fit_fp32_tc_model.py: the split kernels' model has dispatch/fp32_tc.cpp's form (the test
fp32_tc_model_agrees checks it against sgemm_model's predictions); the fit recovers the constants
that made a set of times; the header it writes reads back; the report counts the choices right."""
import csv
import random
import sys
import tempfile
import unittest
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "scripts"))
import fit_fp32_tc_model  # noqa: E402

CONSTANTS = {22: (25e-6, 4e-12, 1e-12, 1e-14), 23: (15e-6, 3e-12, 4e-13, 2e-14), 24: (12e-6, 2e-11, 4e-13, 2e-14)}
FIELDS = ["m", "n", "k", "kernel", "split_values", "bytes", "products", "predicted_us", "chosen", "median_ms",
          "cublas_median_ms", "timing"]


def kernels_csv(path, rng, count=80, sources=None):
    """Problems whose split kernels take exactly the model's time under CONSTANTS, and a stage
    10 plan predicted (and measured) at a time of its own; each row naming `sources` where given."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS + (["sources"] if sources else []),
                                restval=sources)
        writer.writeheader()
        for i in range(count):
            m, n, k = (rng.randrange(1, 8192) for _ in range(3))
            stage10 = rng.uniform(5e-6, 5e-3)
            writer.writerow(dict(m=m, n=n, k=k, kernel=10, split_values=0, bytes=0, products=0,
                                 predicted_us=stage10 * 1e6, chosen=0, median_ms=stage10 * 1e3,
                                 cublas_median_ms=stage10 * 1e3, timing="graph"))
            for stage, constants in CONSTANTS.items():
                terms = (rng.uniform(1e4, 1e8), rng.uniform(1e5, 1e9), rng.uniform(1e7, 1e11))
                seconds = fit_fp32_tc_model.predicted(terms, constants)
                writer.writerow(dict(m=m, n=n, k=k, kernel=stage, split_values=terms[0], bytes=terms[1],
                                     products=terms[2], predicted_us=seconds * 1e6, chosen=0,
                                     median_ms=seconds * 1e3, cublas_median_ms=stage10 * 1e3, timing="graph"))


class ModelTest(unittest.TestCase):
    def test_split_values_add_and_the_longer_of_bytes_and_products_binds(self):
        constants = (10e-6, 1e-12, 1e-12, 1e-14)
        self.assertAlmostEqual(fit_fp32_tc_model.predicted((1e6, 1e6, 1e6), constants), 10e-6 + 1e-6 + 1e-6)
        self.assertAlmostEqual(fit_fp32_tc_model.predicted((0, 1e6, 1e10), constants), 10e-6 + 1e-4)

    def test_the_fit_recovers_the_constants_that_made_the_times(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "kernels.csv"
            kernels_csv(path, random.Random(5))
            problems = fit_fp32_tc_model.read_kernels([path])
            start = {stage: tuple(2 * c for c in constants) for stage, constants in CONSTANTS.items()}
            fitted = fit_fp32_tc_model.fit_constants(problems, start)
            for stage, constants in CONSTANTS.items():
                for got, want in zip(fitted[stage], constants):
                    self.assertAlmostEqual(got / want, 1.0, places=3, msg=f"stage {stage}")

    def test_the_header_reads_back_and_check_agrees(self):
        with tempfile.TemporaryDirectory() as tmp:
            header = Path(tmp) / "fit.hpp"
            fit_fp32_tc_model.write_header(header, CONSTANTS, "a test")
            read = fit_fp32_tc_model.read_header(header)
            for stage, constants in CONSTANTS.items():
                for got, want in zip(read[stage], constants):
                    self.assertAlmostEqual(got / want, 1.0, places=5)
            path = Path(tmp) / "kernels.csv"
            kernels_csv(path, random.Random(6), count=5)
            problems = fit_fp32_tc_model.read_kernels([path])
            self.assertEqual(fit_fp32_tc_model.check(problems, read), [])
            off = {stage: (2 * c[0],) + c[1:] for stage, c in read.items()}
            self.assertEqual(len(fit_fp32_tc_model.check(problems, off)), 15)

    def test_the_report_counts_the_fastest_chosen(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "kernels.csv"
            kernels_csv(path, random.Random(7), count=20)
            problems = fit_fp32_tc_model.read_kernels([path])
            text = fit_fp32_tc_model.report(problems, CONSTANTS, "a test")
            all_row = next(line for line in text.splitlines() if line.startswith("| all |"))
            self.assertIn("| 20 | 100% |", all_row)

    def test_times_of_sources_the_tree_no_longer_has_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            path, header = Path(tmp) / "kernels.csv", Path(tmp) / "fit.hpp"
            fit_fp32_tc_model.write_header(header, CONSTANTS, "a test")
            before = header.read_text()
            kernels_csv(path, random.Random(8), count=5, sources="0123456789ab")
            with self.assertRaises(SystemExit) as refused:
                fit_fp32_tc_model.main(["--kernels", str(path), "--header", str(header)])
            self.assertIn("stage 22 measured on 0123456789ab", str(refused.exception.code))
            self.assertEqual(header.read_text(), before)


if __name__ == "__main__":
    unittest.main()
