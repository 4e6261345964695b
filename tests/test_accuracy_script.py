"""The accuracy script's table, without a GPU."""
import contextlib
import io
import sys
import unittest
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import accuracy  # noqa: E402
import results_csv  # noqa: E402


def row(size, data, method, tflops, ratio, normwise, worst, verified="true", wrong_class=0, non_finite=0):
    return {"size": size, "data": data, "method": method, "tflops": tflops, "sgemm_tflops": tflops / ratio,
            "ratio_to_sgemm": ratio, "normwise_error": normwise, "worst_element_error": worst,
            "wrong_class": wrong_class, "non_finite": non_finite,
            "verified": verified, "timing": "launches", "gpu": "Fixture GPU"}


class Fp8AccuracyMarkdown(unittest.TestCase):
    """The --fp8 table: a line a problem, kind and scaling, the track's, cuBLASLt's and the
    quantization's errors side by side."""

    def rows(self):
        return [row(4096, "uniform", "track fp8 tensor", 1100.0, 0.9, 1.6e-3, 5.0e-4),
                row(4096, "uniform", "cuBLASLt FP8 tensor", 1222.0, 1.0, 1.7e-3, 6.0e-4),
                {**row(4096, "uniform", "quantization tensor", 0.0, 1.0, 3.1e-2, 2.0e-2, verified="-"),
                 "ratio_to_sgemm": 0.0},
                row(4096, "special", "track fp8 1x128-128x128", 990.0, 0.86, 1.5e-3, 4.0e-4, wrong_class=0,
                    non_finite=24)]

    def test_one_line_a_scaling_with_the_three_errors(self):
        markdown = accuracy.fp8_accuracy_markdown(self.rows())
        self.assertIn("| 4096 | uniform | tensor | 1100.0 | 0.90 | 1.60e-03 | 1.70e-03 | 3.10e-02 | 5.00e-04 | "
                      "6.00e-04 | 2.00e-02 | 0 of 0 | ✓ |", markdown)
        # A scaling measured without its cuBLASLt or quantization rows shows dashes there.
        self.assertIn("| 4096 | special | 1x128-128x128 | 990.0 | 0.86 | 1.50e-03 | – | – | 4.00e-04 | – | – | 0 of 24 | ✓ |",
                      markdown)
        self.assertEqual(markdown.count("| 4096 |"), 2)

    def test_its_own_output_files(self):
        self.assertEqual(accuracy.output_stem("launches", fp8=True), "accuracy_fp8")
        self.assertEqual(accuracy.output_stem("blocks", fp8=True), "accuracy_fp8_in_turns")
        self.assertEqual(accuracy.output_stem("launches"), "accuracy")


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
        self.assertIn("| 4096 | wide | cuBLAS TF32 | 380.0 | 7.40 | 2.60e-04 | 1.00e-03 | 0 of 0 | ✗ |", markdown)
        self.assertIn("| 4096 | uniform | cuBLAS SGEMM | 51.4 | 1.00 | 1.10e-06 | 3.00e-07 | 0 of 0 | ✓ |", markdown)
        self.assertIn("**Fixture GPU**", markdown)
        self.assertIn("wide, magnitudes log-uniform", markdown)

    def test_split_stages_beside_sgemm(self):
        rows = self.rows() + [row(4096, "uniform", "stage 22 split_fp16", 150.0, 2.9, 2.2e-7, 6.0e-8),
                              row(4096, "special", "cuBLAS SGEMM", 51.0, 1.0, 1.0e-6, 4.0e-7, non_finite=900),
                              row(4096, "special", "stage 22 split_fp16", 148.0, 2.9, 2.0e-7, 5.0e-8,
                                  wrong_class=3, non_finite=900),
                              row(4096, "special", "stage 24 a_in_registers", 149.0, 2.9, 1.0e-7, 4.0e-7,
                                  non_finite=900),
                              row(4096, "special", "track fp32-tc", 150.0, 2.95, 2.0e-7, 5.0e-8, non_finite=900)]
        markdown = accuracy.accuracy_markdown(rows)
        self.assertIn("| 4096 | uniform | 22 | 2.90 | 0.20 | 0.20 | 0 of 0 |", markdown)
        self.assertIn("| 4096 | special | 22 | 2.90 | 0.20 | 0.12 | 3 of 900 |", markdown)
        self.assertIn("| 4096 | special | 24 | 2.90 | 0.10 | 1.00 | 0 of 900 |", markdown)
        self.assertIn("| 4096 | special | fp32-tc | 2.95 | 0.20 | 0.12 | 0 of 900 |", markdown)
        self.assertNotIn("| 1024 | uniform | 21 |", markdown)  # stage 21 is not in the summary
        self.assertIn("special, uniform, with about eight each of NaN", markdown)

    def test_shapes_after_the_squares_in_the_order_measured(self):
        rows = [row("4096x64x4096", "uniform", "cuBLAS SGEMM", 30.0, 1.0, 1.0e-6, 3.0e-7),
                row("4096x64x4096", "uniform", "stage 24 a_in_registers", 35.0, 1.17, 1.6e-7, 5.0e-8),
                row("128x6144x4096", "uniform", "cuBLAS SGEMM", 40.0, 1.0, 1.0e-6, 3.0e-7),
                row(4096, "uniform", "cuBLAS SGEMM", 51.4, 1.0, 1.1e-6, 3.0e-7),
                row(1024, "uniform", "cuBLAS SGEMM", 33.0, 1.0, 5.7e-7, 3.4e-7)]
        markdown = accuracy.accuracy_markdown(rows)
        order = [markdown.index(f"| {problem} | uniform | cuBLAS SGEMM")
                 for problem in (1024, 4096, "4096x64x4096", "128x6144x4096")]
        self.assertEqual(order, sorted(order))
        self.assertIn("| 4096x64x4096 | uniform | 24 | 1.17 | 0.16 | 0.17 | 0 of 0 |", markdown)

    def test_read_rows_keeps_shapes_as_text(self):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "accuracy.csv"
            path.write_text("size,data,method,tflops,sgemm_tflops,ratio_to_sgemm,normwise_error,worst_element_error,"
                            "wrong_class,non_finite,verified,timing,gpu\n"
                            "4096x64x4096,uniform,\"cuBLAS SGEMM\",30,30,1,1e-06,3e-07,0,0,true,launches,\"GPU\"\n"
                            "1024,uniform,\"cuBLAS SGEMM\",34,34,1,5.7e-07,3.4e-07,0,0,true,launches,\"GPU\"\n")
            rows = accuracy.read_rows(path)
        self.assertEqual([r["size"] for r in rows], ["4096x64x4096", 1024])

    def test_read_rows_of_a_table_made_before_the_special_kind(self):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "accuracy.csv"
            path.write_text("size,data,method,tflops,sgemm_tflops,ratio_to_sgemm,normwise_error,worst_element_error,"
                            "verified,timing,gpu\n1024,uniform,\"cuBLAS SGEMM\",34,34,1,5.7e-07,3.4e-07,true,launches,"
                            "\"GPU\"\n")
            rows = accuracy.read_rows(path)
        self.assertEqual((rows[0]["wrong_class"], rows[0]["non_finite"]), (0, 0))

    def test_a_run_keeps_the_rows_of_problems_it_did_not_measure(self):
        import tempfile
        header = ("size,data,method,tflops,sgemm_tflops,ratio_to_sgemm,normwise_error,worst_element_error,"
                  "wrong_class,non_finite,verified,timing,gpu\n")
        with tempfile.TemporaryDirectory() as tmp:
            out_dir = Path(tmp) / "results" / results_csv.gpu_slug("Fixture GPU")
            out_dir.mkdir(parents=True)
            (out_dir / "accuracy.csv").write_text(
                header + "1024,uniform,\"cuBLAS SGEMM\",30,30,1,6e-07,3e-07,0,0,true,launches,\"Fixture GPU\"\n"
                "8192,uniform,\"cuBLAS SGEMM\",50,50,1,1e-06,4e-07,0,0,true,launches,\"Fixture GPU\"\n"
                "8192,wide,\"cuBLAS SGEMM\",50,50,1,2e-06,4e-07,0,0,true,launches,\"Fixture GPU\"\n")
            # A stand-in for sgemm_accuracy that measures 1024 and 8192 on uniform inputs.
            tool = Path(tmp) / "fake_accuracy"
            tool.write_text("#!/bin/sh\nshift $(($# - 1))\ncat > \"$1\" <<'ROWS'\n" + header +
                            "1024,uniform,\"cuBLAS SGEMM\",34,34,1,5e-07,2e-07,0,0,true,launches,\"Fixture GPU\"\n"
                            "8192,uniform,\"cuBLAS SGEMM\",52,52,1,9e-07,3e-07,0,0,true,launches,\"Fixture GPU\"\n"
                            "ROWS\n")
            tool.chmod(0o755)
            argv = ["accuracy.py", "--binary", str(tool), "--results-dir", str(Path(tmp) / "results"),
                    "--sizes", "1024", "8192", "--data", "uniform"]
            with mock.patch.object(sys, "argv", argv), contextlib.redirect_stdout(io.StringIO()):
                status = accuracy.main()
            rows = accuracy.read_rows(out_dir / "accuracy.csv")
            markdown = (out_dir / "accuracy.md").read_text()
        self.assertEqual(status, 0)
        self.assertEqual([(r["size"], r["data"], r["tflops"]) for r in rows],
                         [(8192, "wide", 50.0), (1024, "uniform", 34.0), (8192, "uniform", 52.0)])
        self.assertIn("| 8192 | wide | cuBLAS SGEMM | 50.0 |", markdown)
        self.assertIn("| 1024 | uniform | cuBLAS SGEMM | 34.0 |", markdown)

    def test_seconds_reach_the_tool_only_when_given(self):
        import tempfile
        header = ("size,data,method,tflops,sgemm_tflops,ratio_to_sgemm,normwise_error,worst_element_error,"
                  "wrong_class,non_finite,verified,timing,gpu\n")
        for seconds, expected in ((None, None), ("300", ["--seconds", "300.0"])):
            with tempfile.TemporaryDirectory() as tmp:
                # A stand-in for sgemm_accuracy that keeps its arguments and measures one problem.
                arguments = Path(tmp) / "arguments"
                tool = Path(tmp) / "fake_accuracy"
                tool.write_text(f"#!/bin/sh\necho \"$@\" > {arguments}\nshift $(($# - 1))\ncat > \"$1\" <<'ROWS'\n"
                                + header + "1024,uniform,\"cuBLAS SGEMM\",34,34,1,5e-07,2e-07,0,0,true,launches,"
                                "\"Fixture GPU\"\nROWS\n")
                tool.chmod(0o755)
                argv = ["accuracy.py", "--binary", str(tool), "--results-dir", str(Path(tmp) / "results"),
                        "--sizes", "1024", "--data", "uniform", *(["--seconds", seconds] if seconds else [])]
                with mock.patch.object(sys, "argv", argv), contextlib.redirect_stdout(io.StringIO()):
                    self.assertEqual(accuracy.main(), 0)
                passed = arguments.read_text().split()
            if expected is None:
                self.assertNotIn("--seconds", passed)
            else:
                index = passed.index("--seconds")
                self.assertEqual(passed[index:index + 2], expected)

    def test_rows_timed_both_ways_cannot_share_a_table(self):
        rows = self.rows()
        rows[0]["timing"] = "blocks"
        with self.assertRaises(ValueError):
            accuracy.accuracy_markdown(rows)


if __name__ == "__main__":
    unittest.main()
