"""The accuracy script's table, without a GPU."""
import sys
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import accuracy  # noqa: E402


def row(size, data, method, tflops, ratio, normwise, worst, verified="true"):
    return {"size": size, "data": data, "method": method, "tflops": tflops, "sgemm_tflops": tflops / ratio,
            "ratio_to_sgemm": ratio, "normwise_error": normwise, "worst_element_error": worst,
            "verified": verified, "timing": "launches", "gpu": "Fixture GPU"}


class AccuracyMarkdown(unittest.TestCase):
    def rows(self):
        return [row(4096, "wide", "cuBLAS TF32", 380.0, 7.4, 2.6e-4, 1.0e-3, verified="false"),
                row(4096, "uniform", "cuBLAS SGEMM", 51.4, 1.0, 1.1e-6, 3.0e-7),
                row(1024, "uniform", "stage 21 split_bf16", 90.0, 2.5, 9.0e-7, 2.0e-7)]

    def test_rows_by_size_then_data_kind_in_the_order_measured(self):
        markdown = accuracy.accuracy_markdown(self.rows())
        order = [markdown.index(text) for text in ("| 1024 | uniform | stage 21", "| 4096 | wide | cuBLAS TF32",
                                                   "| 4096 | uniform | cuBLAS SGEMM")]
        self.assertEqual(order, sorted(order))

    def test_cells(self):
        markdown = accuracy.accuracy_markdown(self.rows())
        self.assertIn("| 4096 | wide | cuBLAS TF32 | 380.0 | 7.40 | 2.60e-04 | 1.00e-03 | ✗ |", markdown)
        self.assertIn("| 4096 | uniform | cuBLAS SGEMM | 51.4 | 1.00 | 1.10e-06 | 3.00e-07 | ✓ |", markdown)
        self.assertIn("**Fixture GPU**", markdown)
        self.assertIn("wide, magnitudes log-uniform", markdown)

    def test_rows_timed_both_ways_cannot_share_a_table(self):
        rows = self.rows()
        rows[0]["timing"] = "blocks"
        with self.assertRaises(ValueError):
            accuracy.accuracy_markdown(rows)


if __name__ == "__main__":
    unittest.main()
