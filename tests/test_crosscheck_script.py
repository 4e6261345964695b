"""scripts/crosscheck_ncu.py: the figure a problem is quoted by (the graph's under 100 us a
launch, launch by launch above), the profiler's ratio from the summed kernel durations, and
the summary, which leaves out problems on padded copies (their copies escape the profiler)."""
import sys
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import crosscheck_ncu  # noqa: E402


def row(median_ms, ratio, kernel="25"):
    return {"median_ms": str(median_ms), "ratio_to_cublas": str(ratio), "kernel": kernel, "gpu": "NVIDIA H100"}


class CrosscheckTest(unittest.TestCase):
    def run_one(self, launches, graph, ours_ns, cublas_ns):
        timed = {"launches": launches, "graph": graph}
        with mock.patch.object(crosscheck_ncu, "timed_row", lambda b, r, p, timing: timed[timing]), \
                mock.patch.object(crosscheck_ncu, "ncu_launch_ns", lambda b, r, p, cublas: cublas_ns if cublas else ours_ns):
            return crosscheck_ncu.crosscheck("sgemm", "bf16", (16, 4096, 4096), repeats=3)

    def test_a_short_launch_is_quoted_by_its_graph(self):
        result = self.run_one(row(0.02, 0.80), row(0.02, 0.72), ours_ns=20000.0, cublas_ns=14600.0)
        self.assertEqual(result["quoted_ratio"], "0.72")
        self.assertEqual(result["ncu_ratio"], "0.7300")
        self.assertEqual(result["points_off"], "-1.0")

    def test_a_long_launch_is_quoted_launch_by_launch(self):
        result = self.run_one(row(0.2, 0.99), row(0.2, 0.97), ours_ns=200000.0, cublas_ns=194000.0)
        self.assertEqual(result["quoted_ratio"], "0.99")
        self.assertEqual(result["points_off"], "2.0")

    def test_the_summary_leaves_out_padded_copies(self):
        rows = [self.run_one(row(0.02, 0.80), row(0.02, 0.72), 20000.0, 14600.0),
                self.run_one(row(0.2, 0.99, "20 padded"), row(0.2, 0.97, "20 padded"), 100000.0, 150000.0)]
        text = crosscheck_ncu.markdown(rows, "crosscheck")
        self.assertIn("within 3 points of the profiler's on 1 of 1 problems; at most 1.0 points apart", text)
        self.assertIn("(copies missed)", text)

    def test_problems_parse(self):
        self.assertEqual(crosscheck_ncu.parse_problem("16x4096x4096"), (16, 4096, 4096))


if __name__ == "__main__":
    unittest.main()
