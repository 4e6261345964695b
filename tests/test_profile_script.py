"""The profiling script without a GPU: parsing ncu's CSV, choosing the kernel that speaks
for a stage, merging profile.csv, and the one-line answer when ncu is missing."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import profile_stages  # noqa: E402


def ncu_csv(kernels):
    """Text shaped like `ncu --csv --page raw`: log lines, a header, a units row, one row a kernel."""
    metrics = [*profile_stages.METRICS.values(), profile_stages.GPU_METRIC,
               *(profile_stages.STALL_METRIC.format(r) for r in profile_stages.STALL_REASONS)]
    header = ["ID", "Process ID", "Kernel Name", *metrics]
    units = ["", "", "", *("" for _ in metrics)]
    lines = ['==PROF== Connected to process 1 (sgemm)', '==PROF== Profiling "kernel": 0%....100% - 9 passes']
    rows = [header, units]
    for index, (name, values) in enumerate(kernels):
        rows.append([str(index), "1", name, *(values.get(m, "0") for m in metrics)])
    with tempfile.TemporaryFile("w+", newline="") as file:
        csv.writer(file, quoting=csv.QUOTE_ALL).writerows(rows)
        file.seek(0)
        return "\n".join(lines) + "\n" + file.read() + "==PROF== Disconnected from process 1\n"


STAGE7 = {
    "gpu__time_duration.sum": "3,198,000",  # ns, with a thousands separator
    "launch__registers_per_thread": "116",
    "launch__shared_mem_per_block_static": "8320",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "59718",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": "65.79",
    "device__attribute_display_name": "NVIDIA H100 80GB HBM3",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": "0.4",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "1.7",
}


class ParseAndRow(unittest.TestCase):
    def test_longest_kernel_speaks_for_the_stage(self):
        helper = dict(STAGE7, **{"gpu__time_duration.sum": "12000"})
        kernels = profile_stages.parse_ncu_csv(ncu_csv([("helper", helper), ("bank_conflict_free_kernel", STAGE7)]))
        self.assertEqual(len(kernels), 2)
        row = profile_stages.profile_row(7, "bank_conflict_free", 4096, kernels)
        self.assertEqual(row["kernel"], "bank_conflict_free_kernel")
        self.assertAlmostEqual(float(row["duration_ms"]), 3.198)
        self.assertEqual(row["registers"], "116")
        self.assertEqual(row["smem_load_conflicts"], "59718")
        self.assertEqual(row["top_stall"], "long_scoreboard")
        self.assertEqual(row["gpu"], "NVIDIA H100 80GB HBM3")

    def test_no_kernel_is_an_error(self):
        with self.assertRaises(ValueError):
            profile_stages.profile_row(1, "naive", 4096, profile_stages.parse_ncu_csv("==PROF== nothing\n"))


class Listing(unittest.TestCase):
    def test_stages_a_gpu_cannot_run_and_the_tracks_are_left_out(self):
        listing = ("stage  name                   precision min arch shape            what it changes\n"
                   "   10  tuned                  fp32      any      any              tiles tuned\n"
                   "   20  hopper_tuned           bf16      sm_90a   any              tiles by shape\n"
                   "       unavailable: needs sm_90a\n"
                   "   24  a_in_registers         fp32      sm_90a   any              A in registers\n"
                   "track  name                   precision          kernels\n"
                   " fp32-tc  FP32 on tensor cores  fp32             22, 23, 24 or 10\n"
                   "       unavailable: needs sm_90a\n")
        self.assertEqual(profile_stages.stages_in_listing(listing), [(10, "tuned"), (24, "a_in_registers")])


class Merge(unittest.TestCase):
    def test_rows_of_profiled_stages_are_replaced(self):
        def row(stage, registers):
            return {c: "" for c in profile_stages.COLUMNS} | {"stage": stage, "name": f"s{stage}", "size": 4096,
                                                               "registers": registers}
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "profile.csv"
            profile_stages.merge_rows(path, [row(5, "94"), row(7, "113")])
            profile_stages.merge_rows(path, [row(7, "116")])
            with open(path, newline="") as file:
                rows = list(csv.DictReader(file))
            self.assertEqual([(r["stage"], r["registers"]) for r in rows], [("5", "94"), ("7", "116")])


class WithoutNcu(unittest.TestCase):
    def test_says_so_in_one_line_and_exits_zero(self):
        with tempfile.TemporaryDirectory() as empty:
            result = subprocess.run([sys.executable, str(REPO / "scripts" / "profile_stages.py")],
                                    capture_output=True, text=True, env=dict(os.environ, PATH=empty))
        self.assertEqual(result.returncode, 0)
        self.assertEqual(result.stdout.count("\n"), 1)
        self.assertIn("ncu", result.stdout)


if __name__ == "__main__":
    unittest.main()
