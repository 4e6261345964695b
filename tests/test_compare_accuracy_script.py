"""scripts/compare_accuracy.py: each build's runs averaged, errors over SGEMM's of the same run,
a problem one build did not measure left blank."""
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import compare_accuracy  # noqa: E402

HEADER = "size,data,method,tflops,sgemm_tflops,ratio_to_sgemm,normwise_error,worst_element_error\n"


def rows(*lines):
    return HEADER + "".join(line + "\n" for line in lines)


class CompareAccuracyTest(unittest.TestCase):
    def write(self, directory, name, text):
        path = Path(directory) / name
        path.write_text(text)
        return str(path)

    def test_runs_averaged_and_errors_over_sgemms(self):
        with tempfile.TemporaryDirectory() as directory:
            first = self.write(directory, "a1.csv", rows("1024,uniform,cuBLAS SGEMM,50,50,1.0,2e-7,1e-7",
                                                          "1024,uniform,stage 23 split,70,50,1.4,1e-7,1e-7"))
            second = self.write(directory, "a2.csv", rows("1024,uniform,cuBLAS SGEMM,50,50,1.0,4e-7,1e-7",
                                                           "1024,uniform,stage 23 split,60,50,1.2,1e-7,1e-7"))
            other = self.write(directory, "b.csv", rows("1024,uniform,cuBLAS SGEMM,50,50,1.0,2e-7,1e-7",
                                                         "1024,uniform,stage 23 split,50,50,1.0,2e-7,1e-7",
                                                         "4096,special,stage 23 split,50,50,0.5,2e-7,1e-7"))
            table = compare_accuracy.comparison_markdown(
                [("main", compare_accuracy.read_run([first, second])), ("fused", compare_accuracy.read_run([other]))])
        lines = table.splitlines()
        self.assertIn("main × SGEMM | fused × SGEMM | main error / SGEMM's | fused error / SGEMM's", lines[0])
        # (1.4 + 1.2) / 2 and (0.5 + 0.25) / 2 for main; 1.0 and 1.0 for fused.
        self.assertEqual(lines[2], "| 1024 | uniform | stage 23 split | 1.30 | 1.00 | 0.38 | 1.00 |")
        # Measured by one build only, and without SGEMM's row: no error ratio.
        self.assertEqual(lines[3], "| 4096 | special | stage 23 split |  | 0.50 |  |  |")


if __name__ == "__main__":
    unittest.main()
