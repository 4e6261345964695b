"""Tests for scripts/results_csv.py, results_tables.py, results_charts.py,
results_outputs.py and regenerate_results.py.

Run from anywhere with:  python3 tests/test_results_scripts.py
No GPU is needed: the end-to-end tests drive regenerate_results.py against a
fake sgemm binary that replays the fixture rows.
"""

import contextlib
import csv
import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPTS_DIR = REPO_ROOT / "scripts"
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "results_sample.csv"
CEILINGS_FIXTURE = REPO_ROOT / "tests" / "fixtures" / "ceilings_sample.csv"
PROFILE_FIXTURE = REPO_ROOT / "tests" / "fixtures" / "profile_sample.csv"
# Stages 26-28 as the H100 measured them: launch by launch at 1024-8192, in turns at 4096 and 8192.
FP8_FIXTURE = REPO_ROOT / "tests" / "fixtures" / "fp8_results_sample.csv"
REGENERATE = SCRIPTS_DIR / "regenerate_results.py"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

sys.path.insert(0, str(SCRIPTS_DIR))
import results_charts  # noqa: E402  (needs the path set up above)
import results_csv  # noqa: E402
import results_outputs  # noqa: E402
import results_tables  # noqa: E402
import stage_runs  # noqa: E402

FIXTURE_STAGE_NAMES = ("cublas", "naive", "global_coalescing",
                       "shared_memory_tiling", "1d_blocktiling", "2d_blocktiling")

README_TEMPLATE = textwrap.dedent("""\
    # sgemm

    Intro that must survive.

    <!-- results:begin -->
    stale results
    <!-- results:end -->

    Outro that must survive.
    """)

# Mimics `sgemm all <N> --csv FILE [extra...]` (or `sgemm <stage> <N> ...`, that stage's
# rows only, in which $FAKE_SGEMM_TFLOPS replaces the TFLOPS when set): prints progress, appends the
# fixture rows for N (header first if FILE is new; timed as --timing says), logs its argv, and fails
# verification of stage $FAKE_SGEMM_FAIL_STAGE when that is set. Mimics
# `sgemm peak --csv FILE` by copying the ceilings fixture, or failing without
# writing it when $FAKE_SGEMM_PEAK_FAIL is set.
FAKE_BINARY = textwrap.dedent("""\
    #!{python}
    import csv, os, shutil, sys
    fixture, ceilings, log = {fixture!r}, {ceilings!r}, {log!r}
    with open(log, "a") as f:
        f.write(" ".join(sys.argv[1:]) + "\\n")
    if sys.argv[1] == "peak":
        assert sys.argv[2] == "--csv", sys.argv
        if os.environ.get("FAKE_SGEMM_PEAK_FAIL"):
            sys.exit("fake: peak failed")
        print("fake: peak", flush=True)
        shutil.copyfile(ceilings, sys.argv[3])
        sys.exit(0)
    _, mode, size, flag, out, *extra = sys.argv
    assert flag == "--csv" and (mode == "all" or mode.isdigit()), sys.argv
    with open(fixture, newline="") as f:
        header, *rows = list(csv.reader(f))
    stage, name, m, verified, timing, tflops = (header.index(c) for c in ("stage", "name", "m", "verified", "timing", "tflops"))
    fail_stage = os.environ.get("FAKE_SGEMM_FAIL_STAGE")
    failed = False
    new_file = not os.path.exists(out) or os.path.getsize(out) == 0
    with open(out, "a", newline="") as f:
        writer = csv.writer(f, lineterminator="\\n")
        if new_file:
            writer.writerow(header)
        for row in rows:
            if row[m] != size or mode not in ("all", row[stage]):
                continue
            if mode != "all" and os.environ.get("FAKE_SGEMM_TFLOPS"):
                row[tflops] = os.environ["FAKE_SGEMM_TFLOPS"]
            if "--timing" in extra:
                row[timing] = extra[extra.index("--timing") + 1]
            if row[stage] == fail_stage:
                row[verified] = "false"
                failed = True
            print(f"fake: N={{size}} stage {{row[stage]}} {{row[name]}} {{row[verified]}}",
                  flush=True)
            writer.writerow(row)
    sys.exit(1 if failed else 0)
    """)


def fixture_rows():
    return results_csv.read_rows(FIXTURE)


def sorted_by_size_then_stage(rows):
    return sorted(rows, key=lambda row: (row["m"], row["stage"]))


def assert_rejects(test, reader, text, message, name="bad.csv"):
    """reader(path) raises a ValueError matching `message` for a file `name` holding `text`."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text(text)
        with test.assertRaisesRegex(ValueError, message):
            reader(path)


class ReadRowsTest(unittest.TestCase):
    def test_values_are_typed(self):
        rows = fixture_rows()
        self.assertEqual(len(rows), 12)
        first = rows[0]
        self.assertEqual(first["stage"], 0)
        self.assertEqual(first["name"], "cublas")
        self.assertEqual(first["m"], 1024)
        self.assertIsInstance(first["tflops"], float)
        self.assertAlmostEqual(first["ratio_to_cublas"], 1.0)
        self.assertEqual(first["driver"], "580.95")
        self.assertEqual(first["cuda"], "13.0")

    def test_skipped_row_has_no_errors(self):
        skipped = [row for row in fixture_rows() if row["verified"] == "skipped"]
        self.assertEqual(len(skipped), 1)
        self.assertIsNone(skipped[0]["rel_error_fp64"])
        self.assertIsNone(skipped[0]["worst_error_over_budget"])

    def test_rejects_wrong_header(self):
        assert_rejects(self, results_csv.read_rows, "stage,name\n0,cublas\n", "header must be exactly")

    def test_rejects_unknown_verified_value(self):
        text = FIXTURE.read_text().replace(",true,", ",True,", 1)
        assert_rejects(self, results_csv.read_rows, text, r"bad\.csv:2: verified")

    def test_rejects_unknown_timing_value(self):
        text = FIXTURE.read_text().replace(",launches,", ",alone,", 1)
        assert_rejects(self, results_csv.read_rows, text, r"bad\.csv:2: timing")

    def test_clocks_are_read_where_written_and_empty_in_files_from_before(self):
        self.assertTrue(all(row[column] is None for row in fixture_rows() for column in results_csv.CLOCK_COLUMNS))
        clocked = [dict(row, sm_clock_mhz=1453.5, cublas_sm_clock_mhz=1453.5, ceiling_sm_clock_mhz=1980.0)
                   for row in fixture_rows()]
        clocked[1]["cublas_sm_clock_mhz"] = None
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "clocked.csv"
            results_csv.write_rows(clocked, path)
            self.assertTrue(path.read_text().splitlines()[0].endswith(",sm_clock_mhz,cublas_sm_clock_mhz,"
                                                                      "ceiling_sm_clock_mhz,data"))
            read = results_csv.read_rows(path)
        self.assertEqual(read[0]["sm_clock_mhz"], 1453.5)
        self.assertEqual(read[0]["ceiling_sm_clock_mhz"], 1980.0)
        self.assertIsNone(read[1]["cublas_sm_clock_mhz"])


    def test_data_is_read_where_written_and_uniform_in_files_from_before(self):
        self.assertEqual({row["data"] for row in fixture_rows()}, {"uniform"})
        rows = [dict(row, data="wide") for row in fixture_rows()]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "wide.csv"
            results_csv.write_rows(rows, path)
            self.assertEqual({row["data"] for row in results_csv.read_rows(path)}, {"wide"})
            path.write_text(path.read_text().replace(",wide\n", ",lumpy\n"))
            with self.assertRaisesRegex(ValueError, "data: expected one of uniform, wide, exact"):
                results_csv.read_rows(path)


    def test_tracks_and_kernels_are_read_where_written_and_empty_in_files_from_before(self):
        self.assertEqual({row["kernel"] for row in fixture_rows()}, {""})
        stage_row = dict(fixture_rows()[5], kernel="5")
        track_row = dict(stage_row, stage="bf16", kernel="20 padded")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "tracks.csv"
            results_csv.write_rows_sorted([track_row, stage_row], path)
            self.assertTrue(path.read_text().splitlines()[0].endswith(",data,kernel"))
            read = results_csv.read_rows(path)
            self.assertEqual([(row["stage"], row["kernel"]) for row in read], [(5, "5"), ("bf16", "20 padded")])
            # Beside a row of a file from before the column, the kernel is written, empty.
            results_csv.write_rows([fixture_rows()[0], track_row], path)
            self.assertEqual([row["kernel"] for row in results_csv.read_rows(path)], ["", "20 padded"])
        text = FIXTURE.read_text().replace(",seed\n", ",seed,sm_clock_mhz,cublas_sm_clock_mhz,"
                                           "ceiling_sm_clock_mhz,data,kernel\n")
        lines = text.splitlines()
        good = "\n".join([lines[0], lines[1] + ",,,,uniform,0 padded"]) + "\n"
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "good.csv"
            path.write_text(good)
            self.assertEqual(results_csv.read_rows(path)[0]["kernel"], "0 padded")
        assert_rejects(self, results_csv.read_rows, good.replace("0 padded", "padded"), r"bad\.csv:2: kernel")
        assert_rejects(self, results_csv.read_rows, good.replace("\n0,cublas", "\nBF 16,cublas"), r"bad\.csv:2: stage")


class GpuSlugTest(unittest.TestCase):
    def test_examples(self):
        examples = {
            "NVIDIA H100 80GB HBM3": "h100-80gb-hbm3",
            "NVIDIA H200": "h200",
            "NVIDIA GeForce RTX 4090": "geforce-rtx-4090",
            "Fixture GPU": "fixture-gpu",
            "  NVIDIA A100-SXM4-40GB ": "a100-sxm4-40gb",
            "Tesla V100 (PCIe) ": "tesla-v100-pcie",
        }
        for name, slug in examples.items():
            with self.subTest(name=name):
                self.assertEqual(results_csv.gpu_slug(name), slug)

    def test_rejects_name_without_letters_or_digits(self):
        with self.assertRaises(ValueError):
            results_csv.gpu_slug(" -- ")


class MarkdownTableTest(unittest.TestCase):
    def setUp(self):
        self.table = results_tables.markdown_table(fixture_rows())
        self.lines = self.table.splitlines()

    def test_caption_names_gpu_driver_and_cuda(self):
        caption = self.lines[0]
        self.assertIn("Fixture GPU", caption)
        self.assertIn("driver 580.95", caption)
        self.assertIn("CUDA 13.0", caption)

    def test_caption_says_how_stage_and_cublas_took_turns(self):
        self.assertIn("launch by launch", self.lines[0])
        rows = [dict(row, timing="blocks") for row in fixture_rows()]
        caption = results_tables.markdown_table(rows).splitlines()[0]
        self.assertIn("--timing blocks", caption)
        self.assertNotIn("launch by launch", caption)

    def test_rows_timed_both_ways_cannot_share_a_table(self):
        rows = fixture_rows()
        rows[2]["timing"] = "blocks"
        with self.assertRaisesRegex(ValueError, "timed both ways"):
            results_tables.markdown_table(rows)

    def test_header_has_a_column_pair_per_size(self):
        header = self.lines[2]
        self.assertEqual(
            header,
            "| Stage | Name | Precision | N=1024 TFLOPS | % of cuBLAS"
            " | N=4096 TFLOPS | % of cuBLAS | Verified |")

    def test_rows_are_sorted_by_stage_with_formatted_values(self):
        body = self.lines[4:]
        self.assertEqual([line.split(" | ")[0] for line in body],
                         [f"| {stage}" for stage in range(6)])
        self.assertEqual(body[0], "| 0 | `cublas` | fp32 | 23.5 | 100.0% | 47.8 | 100.0% | ✓ |")
        self.assertEqual(body[5], "| 5 | `2d_blocktiling` | fp32 | 16.9 | 71.9% | 25.1 | 52.4% | ✓ |")

    def test_skipped_verification_is_a_dash(self):
        naive = self.lines[5]
        self.assertTrue(naive.startswith("| 1 | `naive` |"), naive)
        self.assertTrue(naive.endswith("| – |"), naive)

    def test_failed_verification_is_a_cross(self):
        rows = fixture_rows()
        rows[3]["verified"] = "false"
        table = results_tables.markdown_table(rows)
        stage_line = next(line for line in table.splitlines()
                          if line.startswith(f"| {rows[3]['stage']} |"))
        self.assertTrue(stage_line.endswith("| ✗ |"), stage_line)

    def test_a_check_with_no_finite_budget_reads_unbounded_not_verified(self):
        rows = fixture_rows()
        rows[3]["verified"] = "unbounded"
        table = results_tables.markdown_table(rows)
        stage_line = next(line for line in table.splitlines()
                          if line.startswith(f"| {rows[3]['stage']} |"))
        self.assertTrue(stage_line.endswith("| unbounded |"), stage_line)

    def test_non_square_rows_are_ignored(self):
        rows = fixture_rows()
        rows.append(dict(rows[0], m=2048, n=512, k=777))
        table = results_tables.markdown_table(rows)
        self.assertEqual(table, self.table)
        self.assertNotIn("2048", table)


class TurnsTableTest(unittest.TestCase):
    """The tensor-core stages timed in turns, beside their launch-by-launch ratio."""

    def setUp(self):
        self.launched = [dict(row, precision="bf16", ceiling="mma_sync_bf16") if row["stage"] == 5 else row
                         for row in fixture_rows()]
        self.turns = [dict(row, timing="blocks", ratio_to_cublas=row["ratio_to_cublas"] + 0.05)
                      for row in self.launched]

    def test_shows_only_tensor_core_stages_with_both_ratios(self):
        lines = results_tables.turns_table(self.turns, self.launched).splitlines()
        self.assertIn("--timing blocks", lines[0])
        self.assertEqual(lines[2], "| Stage | Name | N=1024 TFLOPS | % of cuBLAS | (launch by launch) | % of ceiling"
                                   " | N=4096 TFLOPS | % of cuBLAS | (launch by launch) | % of ceiling |")
        self.assertEqual(len(lines), 5, "caption, blank, header, alignment and stage 5 alone")
        self.assertEqual(lines[4], "| 5 | `2d_blocktiling` | 16.9 | 76.9% | 71.9% | 25.3% | 25.1 | 57.4% | 52.4% | 37.4% |")

    def test_clocks_add_a_column_per_size_where_read(self):
        turns = [dict(row, sm_clock_mhz=1506.0, cublas_sm_clock_mhz=1370.0) for row in self.turns]
        lines = results_tables.turns_table(turns, self.launched).splitlines()
        self.assertIn("the SM clock is each kernel's over its turns, counted by the SMs", lines[0])
        self.assertEqual(lines[2].count("| SM clock: stage, cuBLAS |"), 2, "one per size")
        self.assertTrue(lines[2].endswith("| % of ceiling | SM clock: stage, cuBLAS |"))
        self.assertTrue(lines[4].endswith("| 37.4% | 1506, 1370 MHz |"))

    def test_rejects_rows_timed_launch_by_launch(self):
        with self.assertRaisesRegex(ValueError, "--timing blocks only"):
            results_tables.turns_table(self.launched, self.launched)

    def test_results_markdown_adds_it_only_for_tensor_core_rows(self):
        with_turns = results_tables.results_markdown(self.launched, turns_rows=self.turns)
        self.assertIn("(launch by launch)", with_turns)
        fp32_turns = [row for row in self.turns if row["precision"] == "fp32"]
        self.assertEqual(results_tables.results_markdown(self.launched, turns_rows=fp32_turns),
                         results_tables.results_markdown(self.launched))


class ClockTableTest(unittest.TestCase):
    """The SM clock of each stage's timing, and its fraction of the ceiling at that clock."""

    def test_none_without_clocks_and_left_out_of_the_results(self):
        self.assertIsNone(results_tables.clock_table(fixture_rows()))
        self.assertNotIn("SM clock", results_tables.results_markdown(fixture_rows()))

    def test_fraction_is_scaled_from_the_ceilings_clock_to_the_stages(self):
        rows = [dict(row, sm_clock_mhz=1500.0, cublas_sm_clock_mhz=1500.0, ceiling_sm_clock_mhz=1980.0)
                for row in fixture_rows()]
        table = results_tables.clock_table(rows)
        lines = table.splitlines()
        self.assertIn("(1980 MHz)", lines[0])
        self.assertEqual(lines[2], "| Stage | Name | N=1024 SM clock | % of ceiling at it"
                                   " | N=4096 SM clock | % of ceiling at it |")
        line = next(l for l in lines if "`2d_blocktiling`" in l)
        row = next(r for r in rows if r["name"] == "2d_blocktiling" and r["m"] == 4096)
        self.assertTrue(line.endswith(f"| 1500 MHz | {row['fraction_of_peak'] * 1980 / 1500 * 100:.1f}% |"))
        self.assertIn(table, results_tables.results_markdown(rows))

    def test_rows_without_both_clocks_are_left_out(self):
        rows = [dict(row, sm_clock_mhz=1500.0, ceiling_sm_clock_mhz=None if row["stage"] == 5 else 1980.0)
                for row in fixture_rows()]
        self.assertNotIn("`2d_blocktiling`", results_tables.clock_table(rows))


class CeilingTableTest(unittest.TestCase):
    def test_each_stage_gets_its_fraction_of_ceiling_per_size(self):
        rows = results_csv.read_rows(FIXTURE)
        table = results_tables.ceiling_table(rows)
        self.assertIn("N=1024 % of ceiling", table)
        self.assertIn("N=4096 % of ceiling", table)
        line = next(l for l in table.splitlines() if "`2d_blocktiling`" in l)
        row = next(r for r in rows if r["name"] == "2d_blocktiling" and r["m"] == 4096)
        self.assertIn("| FFMA (measured), ", line)
        self.assertIn(f"{row['fraction_of_peak'] * 100:.1f}%", line)
        self.assertIn(f"{row['tflops'] / row['fraction_of_peak']:.0f} TFLOPS", line)

    def test_caption_and_cells_name_the_ceiling_of_each_row(self):
        rows = results_csv.read_rows(FIXTURE)
        for row in rows:
            if row["stage"] == 4:
                row.update(precision="bf16", ceiling="mma_sync_bf16")
            if row["stage"] == 5:
                row["ceiling"] = "fp32_other_unit"
        lines = results_tables.ceiling_table(rows).splitlines()
        self.assertEqual(
            lines[0],
            "Fraction of the ceiling of the unit each stage runs on: for fp32 stages, "
            f"{results_tables.CEILINGS['fp32_ffma'][1]} or fp32_other_unit; "
            f"for bf16 stages, {results_tables.CEILINGS['mma_sync_bf16'][1]}.")
        cells = {line.split(" | ")[1]: line.split(" | ")[2] for line in lines[4:]}
        self.assertTrue(cells["`1d_blocktiling`"].startswith("mma.sync (measured), "))
        self.assertTrue(cells["`2d_blocktiling`"].startswith("fp32_other_unit, "))
        self.assertTrue(cells["`naive`"].startswith("FFMA (measured), "))

    def test_an_unknown_ceiling_is_shown_by_its_name(self):
        rows = [dict(row, ceiling="future_unit") for row in results_csv.read_rows(FIXTURE)]
        table = results_tables.ceiling_table(rows)
        self.assertIn("for fp32 stages, future_unit.", table)
        self.assertIn("| future_unit, ", table)


def fixture_ceilings():
    return results_csv.read_ceilings(CEILINGS_FIXTURE)


def fp8_rows(timing="launches"):
    """The FP8 fixture's rows timed `timing`, as if measured on the fixture's GPU. The fixture was
    written before the binary measured FP8 wgmma: no ceiling (the name empty, the fraction 0)."""
    return [dict(row, gpu="Fixture GPU") for row in results_csv.read_rows(FP8_FIXTURE) if row["timing"] == timing]


# The wgmma_fp8 ceiling the FP8 fixture's rows are made a fraction of (a round number, not a measurement).
FIXTURE_FP8_CEILING_TFLOPS = 2000.0


def fp8_rows_with_ceiling(timing="launches"):
    """fp8_rows as the binary writes them now: each a fraction of the wgmma_fp8 ceiling."""
    return [dict(row, ceiling="wgmma_fp8", fraction_of_peak=row["tflops"] / FIXTURE_FP8_CEILING_TFLOPS)
            for row in fp8_rows(timing)]


class Fp8RowsTest(unittest.TestCase):
    """FP8 rows: "fp8 <scaling>" as their precision, timed against cuBLASLt, a fraction of the
    wgmma_fp8 ceiling where their run measured it and a dash where not."""

    def setUp(self):
        self.rows = fixture_rows() + fp8_rows()

    def test_their_reference_is_cublaslt_fp8_by_stage_and_by_track(self):
        self.assertEqual(stage_runs.precision_reference("fp8 1x128-128x128"), "cuBLASLt FP8")
        self.assertEqual(stage_runs.reference(28, self.rows), "cuBLASLt FP8")
        self.assertEqual(stage_runs.reference(5, self.rows), "cuBLAS SGEMM")
        self.assertEqual(stage_runs.reference("fp8", []), "cuBLASLt FP8")
        self.assertEqual(stage_runs.precision_of("fp8", []), "fp8")
        self.assertEqual(stage_runs.run_argument("fp8"), "fp8")
        self.assertNotIn("fp8", stage_runs.DEFAULT_TRACKS)
        self.assertEqual(stage_runs.fp8_reference_note(self.rows), " (cuBLASLt FP8 for the fp8 runs)")
        off_16 = [dict(row, m=710) if row["precision"].startswith("fp8") else row for row in self.rows]
        self.assertIn("on A padded with zero rows", stage_runs.fp8_reference_note(off_16))
        self.assertEqual(stage_runs.fp8_reference_note(fixture_rows()), "")

    def test_the_main_table_lists_them_and_its_caption_names_cublaslt(self):
        table = results_tables.markdown_table(self.rows)
        self.assertIn("| 26 | `fp8_tensor_scale` | fp8 tensor | 204.0 | 76.6% | 874.4 | 90.7% | 1253.6 | 94.4% "
                      "| 1263.5 | 95.9% | ✓ |", table)
        self.assertIn("| 28 | `fp8_block_scaled` | fp8 1x128-128x128 | 190.7 | 86.9% | 749.8 | 85.2% | 996.3 | 86.0% "
                      "| 959.8 | 81.4% | ✓ |", table)
        self.assertIn("; cuBLASLt's FP8 GEMM with the stage's scales, bf16 out, for fp8 stages", table.splitlines()[0])
        self.assertNotIn("cuBLASLt", results_tables.markdown_table(fixture_rows()))

    def test_without_a_ceiling_the_ceiling_table_shows_a_dash_and_says_why(self):
        table = results_tables.ceiling_table(self.rows)
        self.assertIn("| 26 | `fp8_tensor_scale` | – | – | – | – | – |", table)
        self.assertNotIn("| 0.0%", table)
        caption = table.splitlines()[0]
        self.assertTrue(caption.startswith(results_tables.ceiling_table(fixture_rows()).splitlines()[0]), caption)
        self.assertTrue(caption.endswith(" A – marks a run that measured no ceiling: the fp8 stages' here."), caption)
        self.assertEqual(results_tables.describe_ceilings(self.rows), results_tables.describe_ceilings(fixture_rows()))
        self.assertIsNone(results_tables.ceiling_table(fp8_rows()))
        self.assertNotIn("% of ceiling", results_tables.results_markdown(fp8_rows()))

    def test_an_empty_fraction_reads_as_none_and_shows_a_dash(self):
        unmeasured = [dict(row, fraction_of_peak=None) for row in fp8_rows_with_ceiling()]
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "results.csv"
            results_csv.write_rows(fixture_rows() + unmeasured, path)
            fp8_line = next(line for line in path.read_text().splitlines() if line.startswith("26,"))
            read = results_csv.read_rows(path)
        self.assertIn(",,wgmma_fp8,", fp8_line, "the fraction's field is empty, the ceiling named")
        self.assertEqual({row["fraction_of_peak"] for row in read if row["stage"] == 26}, {None})
        table = results_tables.ceiling_table(read)
        self.assertIn("| 26 | `fp8_tensor_scale` | – | – | – | – | – |", table)
        self.assertTrue(table.splitlines()[0].endswith(" A – marks a run that measured no ceiling: the fp8 stages' here."))
        self.assertNotIn("wgmma fp8", table)
        markdown = results_tables.results_markdown(read, turns_rows=[dict(row, fraction_of_peak=None)
                                                                     for row in fp8_rows_with_ceiling("blocks")])
        self.assertNotIn("| 0.0%", markdown)
        self.assertIn("| 26 | `fp8_tensor_scale` | 1239.2 | 92.2% | 94.4% | – |", markdown)

    def test_with_the_fp8_ceiling_the_tables_name_it_and_give_their_fraction(self):
        rows = fixture_rows() + fp8_rows_with_ceiling()
        table = results_tables.ceiling_table(rows)
        caption = table.splitlines()[0]
        self.assertIn("; for fp8 stages, the wgmma m64n256k32 e4m3 throughput (operands in shared memory), measured "
                      "on this GPU as the run started.", caption)
        self.assertNotIn(" A – marks", caption)
        self.assertIn("| 26 | `fp8_tensor_scale` | wgmma fp8 (measured), 2000 TFLOPS | 10.2% | 43.7% | 62.7% | 63.2% |",
                      table)
        turns = results_tables.turns_table(fp8_rows_with_ceiling("blocks"), rows)
        self.assertIn("| 26 | `fp8_tensor_scale` | 1239.2 | 92.2% | 94.4% | 62.0% |", turns)
        self.assertNotIn("A – marks", turns)

    def test_the_clock_table_leaves_them_out_without_a_ceiling(self):
        clocked = [dict(row, sm_clock_mhz=1500.0, ceiling_sm_clock_mhz=1980.0) for row in self.rows]
        self.assertNotIn("fp8_", results_tables.clock_table(clocked))

    def test_timed_in_turns_they_show_a_dash_for_the_ceiling(self):
        table = results_tables.turns_table(fp8_rows("blocks"), self.rows)
        lines = table.splitlines()
        self.assertTrue(lines[0].startswith("The fp8 stages again, "), lines[0])
        self.assertTrue(lines[0].endswith("counted by the SMs. A – marks a run that measured no ceiling: the fp8 "
                                          "stages' here."), lines[0])
        self.assertEqual(lines[4], "| 26 | `fp8_tensor_scale` | 1239.2 | 92.2% | 94.4% | – | 1510, 1568 MHz "
                                   "| 1231.4 | 90.9% | 95.9% | – | 1279, 1325 MHz |")
        self.assertNotIn("| 0.0%", table)
        self.assertIn(table, results_tables.results_markdown(self.rows, turns_rows=fp8_rows("blocks")))

    def test_charts_give_them_their_colour_and_cublaslt_a_line_per_scaling(self):
        row = fp8_rows()[0]
        self.assertEqual(results_charts._precision_color(row), results_charts.PRECISION_COLORS["fp8"])
        self.assertEqual(results_charts._reference_precisions(self.rows), ["fp8 1x128-128x128", "fp8 tensor"])
        self.assertEqual(results_charts._reference_label("fp8 tensor"), "cuBLASLt FP8 (tensor)")
        self.assertEqual(results_charts._reference_label("bf16"), "cuBLAS (bf16)")
        with tempfile.TemporaryDirectory() as tmp:
            progression, scaling = Path(tmp) / "progression.png", Path(tmp) / "tflops_vs_size.png"
            results_charts.plot_progression(self.rows, 4096, progression)
            results_charts.plot_tflops_vs_size(self.rows, scaling)
            for path in (progression, scaling):
                self.assertTrue(path.read_bytes().startswith(PNG_SIGNATURE))


class CeilingsAndProfileTest(unittest.TestCase):
    def test_ceilings_are_typed_and_keyed_by_name(self):
        ceilings = fixture_ceilings()
        self.assertEqual(list(ceilings)[:2], ["fp32_ffma", "mma_sync_bf16"])
        self.assertEqual(ceilings["dram"], {"unit": "TB/s", "value": 1.8, "gpu": "Fixture GPU", "sm_clock_mhz": None})

    def test_ceilings_read_the_clock_where_there_is_one(self):
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "ceilings.csv"
            path.write_text("ceiling,unit,value,gpu,sm_clock_mhz\n"
                            "mma_sync_bf16,TFLOPS,640,G,1815.5\ndram,TB/s,2.8,G,\n", encoding="utf-8")
            ceilings = results_csv.read_ceilings(path)
        self.assertEqual(ceilings["mma_sync_bf16"]["sm_clock_mhz"], 1815.5)
        self.assertIsNone(ceilings["dram"]["sm_clock_mhz"])

    def test_ceilings_reject_wrong_header_and_values(self):
        assert_rejects(self, results_csv.read_ceilings, "ceiling,value\nfp32_ffma,63.7\n",
                       "header must be exactly ceiling,unit,value,gpu,sm_clock_mhz", name="ceilings.csv")
        assert_rejects(self, results_csv.read_ceilings,
                       "ceiling,unit,value,gpu\nfp32_ffma,TFLOPS,63.7,G\ndram,TB/s,fast,G\n",
                       r"ceilings\.csv:3: value", name="ceilings.csv")
        assert_rejects(self, results_csv.read_ceilings,
                       "ceiling,unit,value,gpu,sm_clock_mhz\nfp32_ffma,TFLOPS,63.7,G,fast\n",
                       r"ceilings\.csv:2: value or sm_clock_mhz", name="ceilings.csv")

    def test_profile_keeps_the_profiled_size_only(self):
        profile = results_csv.read_profile(PROFILE_FIXTURE)
        self.assertEqual(sorted(profile), [0, 1, 2, 3, 4, 5, 6])
        self.assertEqual(profile[1]["size"], "4096")
        self.assertEqual(profile[1]["dram_bytes"], "8.5e+09")
        self.assertEqual(results_csv.read_profile(Path("/nonexistent/profile.csv")), {})

    def test_measured_ceilings_table_lists_known_ceilings_in_order(self):
        ceilings = fixture_ceilings()
        ceilings = {"zz_new": {"unit": "TB/s", "value": 9.0, "gpu": "Fixture GPU"}, **ceilings}
        lines = results_tables.measured_ceilings_table(ceilings).splitlines()
        self.assertIn("**Fixture GPU**", lines[0])
        self.assertIn("`./sgemm peak`", lines[0])
        self.assertEqual(lines[2], "| Ceiling | What | Measured |")
        self.assertEqual([line.split(" | ")[0] for line in lines[4:]],
                         ["| `fp32_ffma`", "| `mma_sync_bf16`", "| `mma_sync_tf32`", "| `dram`", "| `l2`",
                          "| `shared_memory`", "| `zz_new`"])
        self.assertEqual(lines[4], "| `fp32_ffma` | FFMA on the CUDA cores (FP32) | 48.5 TFLOPS |")
        self.assertEqual(lines[5], "| `mma_sync_bf16` | mma.sync m16n8k16, bf16 in, FP32 accumulate | 310 TFLOPS |")
        self.assertEqual(lines[7], "| `dram` | DRAM: device-to-device copy, bytes read + written | 1.80 TB/s |")

    def test_measured_ceilings_table_lists_the_fp8_wgmma_after_the_bf16_one(self):
        ceilings = fixture_ceilings()
        for name, value in (("wgmma_fp8", 620.0), ("wgmma_bf16", 310.0)):
            ceilings[name] = {"unit": "TFLOPS", "value": value, "gpu": "Fixture GPU"}
        lines = results_tables.measured_ceilings_table(ceilings).splitlines()
        self.assertEqual(lines[7], "| `wgmma_bf16` | wgmma m64n256k16, bf16 in, FP32 accumulate | 310 TFLOPS |")
        self.assertEqual(lines[8], "| `wgmma_fp8` | wgmma m64n256k32, e4m3 in, FP32 accumulate | 620 TFLOPS |")

    def test_measured_ceilings_table_says_which_ceiling_is_sustained(self):
        ceilings = fixture_ceilings()
        self.assertNotIn("sustained", results_tables.measured_ceilings_table(ceilings))
        ceilings["mma_sync_bf16_sustained"] = {"unit": "TFLOPS", "value": 270.0, "gpu": "Fixture GPU"}
        lines = results_tables.measured_ceilings_table(ceilings).splitlines()
        self.assertIn("`mma_sync_bf16_sustained` is the average once the GPU has run it for seconds", lines[0])
        self.assertTrue(lines[6].startswith("| `mma_sync_bf16_sustained` | the same warp loop"), lines[6])
        self.assertTrue(lines[6].endswith("| 270 TFLOPS |"), lines[6])

    def test_measured_ceilings_table_gives_clocks_and_the_warp_loop_per_clock(self):
        ceilings = fixture_ceilings()
        ceilings["mma_sync_bf16"]["sm_clock_mhz"] = 1800.0
        ceilings["mma_sync_bf16_warp_loop"] = {"unit": "TFLOPS", "value": 279.0, "gpu": "Fixture GPU",
                                               "sm_clock_mhz": 1700.0}
        lines = results_tables.measured_ceilings_table(ceilings).splitlines()
        self.assertIn("per clock against `mma_sync_bf16`", lines[0])
        self.assertEqual(lines[2], "| Ceiling | What | Measured | SM clock |")
        self.assertEqual(lines[5], "| `mma_sync_bf16` | mma.sync m16n8k16, bf16 in, FP32 accumulate | 310 TFLOPS "
                                   "| 1800 MHz |")
        # (279 / 1700) / (310 / 1800) = 95.3 %
        self.assertTrue(lines[6].startswith("| `mma_sync_bf16_warp_loop` | the same fed by ldmatrix"), lines[6])
        self.assertTrue(lines[6].endswith("| 279 TFLOPS (95.3 % of `mma_sync_bf16` per clock) | 1700 MHz |"),
                        lines[6])
        self.assertTrue(lines[7].endswith("| 155 TFLOPS | – |"), lines[7])
        del ceilings["mma_sync_bf16"]["sm_clock_mhz"]
        self.assertNotIn("per clock)", results_tables.measured_ceilings_table(ceilings))

    def test_results_markdown_adds_the_ceilings_when_there_are_some(self):
        rows = fixture_rows()
        tables = results_tables.markdown_table(rows) + "\n\n" + results_tables.ceiling_table(rows)
        self.assertEqual(results_tables.results_markdown(rows), tables)
        self.assertEqual(results_tables.results_markdown(rows, fixture_ceilings()),
                         tables + "\n\n" + results_tables.measured_ceilings_table(fixture_ceilings()))


class RooflineTest(unittest.TestCase):
    def test_points_are_stages_with_a_result_and_dram_bytes_at_4096(self):
        points = results_charts.roofline_points(fixture_rows(), results_csv.read_profile(PROFILE_FIXTURE))
        # Stage 6 has a profile but no result and no DRAM bytes.
        self.assertEqual([p["stage"] for p in points], [0, 1, 2, 3, 4, 5])
        naive = points[1]
        self.assertAlmostEqual(naive["intensity"], 2 * 4096 ** 3 / 8.5e9)
        self.assertEqual(naive["tflops"], 0.488)  # the N=4096 row, not N=1024
        self.assertEqual(naive["precision"], "fp32")

    def test_memory_roofs_slope_and_compute_roofs_start_at_their_ridge(self):
        ceilings = fixture_ceilings()
        roofs = {roof["label"]: roof for roof in results_charts.roofline_roofs(ceilings, 2.0, 1000.0, 310.0)}
        self.assertEqual(sorted(roofs), ["DRAM 1.80 TB/s", "FFMA 48.5 TFLOPS", "L2 4.60 TB/s",
                                         "mma.sync bf16 310 TFLOPS", "mma.sync tf32 155 TFLOPS"])
        dram = roofs["DRAM 1.80 TB/s"]
        self.assertTrue(dram["sloped"])
        for x, y in zip(dram["x"], dram["y"]):
            self.assertAlmostEqual(y, 1.8 * x)
        self.assertEqual(dram["y"][1], 310.0)
        ffma = roofs["FFMA 48.5 TFLOPS"]
        self.assertFalse(ffma["sloped"])
        self.assertEqual(ffma["y"], (48.5, 48.5))
        self.assertAlmostEqual(ffma["x"][0], 48.5 / 1.8)
        self.assertEqual(ffma["x"][1], 1000.0)

    def test_the_fp8_wgmma_ceiling_is_a_compute_roof(self):
        ceilings = {**fixture_ceilings(), "wgmma_fp8": {"unit": "TFLOPS", "value": 620.0, "gpu": "Fixture GPU"}}
        roofs = {roof["label"]: roof for roof in results_charts.roofline_roofs(ceilings, 2.0, 1000.0, 620.0)}
        self.assertEqual(roofs["wgmma fp8 620 TFLOPS"]["y"], (620.0, 620.0))
        self.assertFalse(roofs["wgmma fp8 620 TFLOPS"]["sloped"])

    def test_roofline_is_a_real_png(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "roofline.png"
            results_charts.plot_roofline(fixture_rows(), results_csv.read_profile(PROFILE_FIXTURE),
                                        fixture_ceilings(), path)
            data = path.read_bytes()
        self.assertTrue(data.startswith(PNG_SIGNATURE))
        self.assertGreater(len(data), 20_000)

    def test_needs_points_and_a_dram_ceiling(self):
        profile = results_csv.read_profile(PROFILE_FIXTURE)
        ceilings = fixture_ceilings()
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "roofline.png"
            with self.assertRaisesRegex(ValueError, "no stage has both"):
                results_charts.plot_roofline(fixture_rows(), {}, ceilings, path)
            del ceilings["dram"]
            with self.assertRaisesRegex(ValueError, "no dram row"):
                results_charts.plot_roofline(fixture_rows(), profile, ceilings, path)
            self.assertFalse(path.exists())


class RefreshReadmeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.readme = Path(self.tmp.name) / "README.md"

    def tearDown(self):
        self.tmp.cleanup()

    def test_replaces_only_the_marked_block(self):
        self.readme.write_text(README_TEMPLATE)
        results_outputs.refresh_readme(self.readme, "new table\n")
        expected = README_TEMPLATE.replace("stale results", "new table")
        self.assertEqual(self.readme.read_text(), expected)

    def test_is_idempotent(self):
        self.readme.write_text(README_TEMPLATE)
        results_outputs.refresh_readme(self.readme, "new table")
        once = self.readme.read_text()
        results_outputs.refresh_readme(self.readme, "new table")
        self.assertEqual(self.readme.read_text(), once)

    def test_raises_on_missing_marker_and_leaves_file_alone(self):
        text = README_TEMPLATE.replace("<!-- results:end -->\n", "")
        self.readme.write_text(text)
        with self.assertRaisesRegex(ValueError, "results:end"):
            results_outputs.refresh_readme(self.readme, "new table")
        self.assertEqual(self.readme.read_text(), text)

    def test_raises_on_markers_in_wrong_order(self):
        self.readme.write_text("<!-- results:end -->\n<!-- results:begin -->\n")
        with self.assertRaisesRegex(ValueError, "comes before"):
            results_outputs.refresh_readme(self.readme, "new table")


class WriteOutputsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        cls.out_dir = root / "results" / "fixture-gpu"
        cls.readme = root / "README.md"
        cls.readme.write_text(README_TEMPLATE)
        # Reversed input checks that results.csv is re-sorted.
        cls.printed = io.StringIO()
        with contextlib.redirect_stdout(cls.printed):
            cls.written = results_outputs.write_outputs(
                list(reversed(fixture_rows())), cls.out_dir, cls.readme)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_returns_every_path_written(self):
        names = ["results.csv", "results.md", "progression.png", "tflops_vs_size.png"]
        self.assertEqual(self.written, [self.out_dir / n for n in names] + [self.readme])

    def test_no_ceilings_or_profile_no_roofline(self):
        self.assertEqual(self.printed.getvalue(),
                         f"roofline skipped: no ceilings.csv and no profile.csv in {self.out_dir}\n")

    def test_results_csv_round_trips_sorted_by_size_then_stage(self):
        path = self.out_dir / "results.csv"
        with open(path, newline="") as file:  # no row names a kernel: the column is left out, as before it
            self.assertEqual(tuple(next(csv.reader(file))), results_csv.COLUMNS_BEFORE_KERNEL)
        self.assertEqual(results_csv.read_rows(path),
                         sorted_by_size_then_stage(fixture_rows()))

    def test_results_md_lists_every_stage_and_size(self):
        text = (self.out_dir / "results.md").read_text(encoding="utf-8")
        rows = fixture_rows()
        self.assertEqual(text, results_tables.markdown_table(rows) + "\n\n" + results_tables.ceiling_table(rows) + "\n")
        for name in FIXTURE_STAGE_NAMES:
            self.assertIn(f"`{name}`", text)
        self.assertIn("N=1024 TFLOPS", text)
        self.assertIn("N=4096 TFLOPS", text)

    def test_charts_are_real_pngs(self):
        for name in ("progression.png", "tflops_vs_size.png"):
            with self.subTest(chart=name):
                data = (self.out_dir / name).read_bytes()
                self.assertTrue(data.startswith(PNG_SIGNATURE))
                self.assertGreater(len(data), 20_000)

    def test_readme_gets_table_and_relative_image_links(self):
        text = self.readme.read_text(encoding="utf-8")
        self.assertNotIn("stale results", text)
        self.assertIn("Intro that must survive.", text)
        self.assertIn("Outro that must survive.", text)
        # One table, at the README's sizes that the results have (4096 of 1024 and 4096).
        self.assertEqual(results_outputs.readme_sizes(fixture_rows()), [4096])
        self.assertIn(results_tables.markdown_table(fixture_rows(), [4096]), text)
        self.assertNotIn("N=1024", text)
        self.assertIn("![GEMM progression at N=4096](results/fixture-gpu/progression.png)", text)
        self.assertIn("](results/fixture-gpu/results.md)", text)
        self.assertIn("[GEMM TFLOPS vs size](results/fixture-gpu/tflops_vs_size.png)", text)

    def test_readme_sizes_fall_back_to_the_two_largest(self):
        rows = [dict(row, m=size, n=size, k=size) for size in (512, 1024, 2048) for row in fixture_rows()[:1]]
        self.assertEqual(results_outputs.readme_sizes(rows), [1024, 2048])


class WriteOutputsWithCeilingsAndProfileTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name)
        self.out_dir = root / "results" / "fixture-gpu"
        self.out_dir.mkdir(parents=True)
        shutil.copyfile(CEILINGS_FIXTURE, self.out_dir / "ceilings.csv")
        shutil.copyfile(PROFILE_FIXTURE, self.out_dir / "profile.csv")
        self.readme = root / "README.md"
        self.readme.write_text(README_TEMPLATE)

    def tearDown(self):
        self.tmp.cleanup()

    def test_roofline_drawn_linked_and_ceilings_tabulated(self):
        written = results_outputs.write_outputs(fixture_rows(), self.out_dir, self.readme)
        self.assertIn(self.out_dir / "roofline.png", written)
        self.assertTrue((self.out_dir / "roofline.png").read_bytes().startswith(PNG_SIGNATURE))
        self.assertIn("](results/fixture-gpu/roofline.png)", self.readme.read_text())
        self.assertEqual((self.out_dir / "results.md").read_text(),
                         results_tables.results_markdown(fixture_rows(), fixture_ceilings()) + "\n")

    def test_ceilings_of_another_gpu_are_refused(self):
        text = CEILINGS_FIXTURE.read_text().replace("Fixture GPU", "Other GPU")
        (self.out_dir / "ceilings.csv").write_text(text)
        with self.assertRaisesRegex(ValueError, "measured on Other GPU, the results on Fixture GPU"):
            results_outputs.write_outputs(fixture_rows(), self.out_dir)

    def test_turns_of_another_gpu_are_refused(self):
        text = FIXTURE.read_text().replace("Fixture GPU", "Other GPU").replace(",launches,", ",blocks,")
        (self.out_dir / results_outputs.TURNS_CSV).write_text(text)
        with self.assertRaisesRegex(ValueError, "results_in_turns.csv was measured on Other GPU"):
            results_outputs.write_outputs(fixture_rows(), self.out_dir)

    def test_without_a_profile_the_roofline_is_skipped_in_one_line(self):
        (self.out_dir / "profile.csv").unlink()
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            written = results_outputs.write_outputs(fixture_rows(), self.out_dir, self.readme)
        self.assertEqual(output.getvalue(), f"roofline skipped: no profile.csv in {self.out_dir}\n")
        self.assertNotIn(self.out_dir / "roofline.png", written)
        self.assertNotIn("roofline", self.readme.read_text())


class RegenerateResultsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.binary = self.root / "fake_sgemm"
        self.argv_log = self.root / "fake_sgemm.log"
        self.binary.write_text(FAKE_BINARY.format(
            python=sys.executable, fixture=str(FIXTURE), ceilings=str(CEILINGS_FIXTURE),
            log=str(self.argv_log)))
        self.binary.chmod(self.binary.stat().st_mode | stat.S_IXUSR)
        self.readme = self.root / "docs" / "README.md"
        self.readme.parent.mkdir()
        self.readme.write_text(README_TEMPLATE)
        self.results_dir = self.root / "results"
        self.out_dir = self.results_dir / "fixture-gpu"
        # The chapters of the fixture's stages, whose figures a run rewrites: copies, never the repository's.
        self.kernels = self.root / "kernels"
        self.kernels.mkdir()
        for path in sorted((REPO_ROOT / "kernels").glob("0[1-5]_*.cu")):
            shutil.copyfile(path, self.kernels / path.name)

    def tearDown(self):
        self.tmp.cleanup()

    def regenerate(self, *extra, env=None):
        command = [sys.executable, str(REGENERATE), "--sizes", "1024", "4096", "--turns-sizes", "4096",
                   "--binary", str(self.binary),
                   "--results-dir", str(self.results_dir),
                   "--readme", str(self.readme), "--kernels", str(self.kernels), *extra]
        # PYTHONUNBUFFERED would hide a missing flush, making the ordering
        # check of streamed output pass regardless.
        base_env = {key: value for key, value in os.environ.items()
                    if key != "PYTHONUNBUFFERED"}
        # Run from the temp dir to show the script does not depend on the cwd.
        return subprocess.run(command, cwd=self.root, capture_output=True, text=True,
                              env={**base_env, **(env or {})}, timeout=120)

    def test_stages_replace_only_their_own_rows(self):
        self.assertEqual(self.regenerate().returncode, 0)
        before = results_csv.read_rows(self.out_dir / "results.csv")
        result = self.regenerate("--stages", "5", env={"FAKE_SGEMM_TFLOPS": "123.5"})
        self.assertEqual(result.returncode, 0, result.stderr)
        calls = self.argv_log.read_text().splitlines()[-4:]
        self.assertEqual([call.split()[:2] for call in calls],
                         [["peak", "--csv"], ["5", "1024"], ["5", "4096"], ["5", "4096"]])
        after = results_csv.read_rows(self.out_dir / "results.csv")
        self.assertEqual(len(after), len(before))
        key = lambda row: (row["stage"], row["m"])  # noqa: E731
        for old, new in zip(sorted(before, key=key), sorted(after, key=key)):
            self.assertEqual(key(old), key(new))
            if new["stage"] == 5:
                self.assertEqual(new["tflops"], 123.5)
            else:
                self.assertEqual(new, old)

    def test_a_full_run_keeps_the_rows_of_sizes_it_does_not_run(self):
        self.assertEqual(self.regenerate().returncode, 0)
        before = results_csv.read_rows(self.out_dir / "results.csv")
        result = self.regenerate("--sizes", "4096", env={"FAKE_SGEMM_TFLOPS": "123.5"})
        self.assertEqual(result.returncode, 0, result.stderr)
        after = results_csv.read_rows(self.out_dir / "results.csv")
        self.assertEqual(len(after), len(before))
        self.assertEqual([row for row in after if row["m"] == 1024], [row for row in before if row["m"] == 1024])
        self.assertTrue(any(row["m"] == 4096 for row in after))

    def test_full_flow(self):
        result = self.regenerate("--extra-args", "--reps", "3")
        self.assertEqual(result.returncode, 0, result.stderr)

        out = result.stdout
        order = ["[ceilings] sgemm peak", "fake: peak",
                 "[size 1/2] N=1024", "fake: N=1024 stage 0 cublas true",
                 "fake: N=1024 stage 5 2d_blocktiling true",
                 "[size 2/2] N=4096", "fake: N=4096 stage 1 naive skipped",
                 "[size 1/1 in turns] N=4096"]
        positions = [out.index(marker) for marker in order]
        self.assertEqual(positions, sorted(positions), out)

        calls = self.argv_log.read_text().splitlines()
        self.assertEqual(calls[0].split()[:2], ["peak", "--csv"])
        self.assertEqual(calls[1].split()[:2], ["all", "1024"])
        self.assertTrue(calls[2].endswith("--reps 3"))
        # The run in turns takes --timing blocks, not the extra arguments (--reps is refused there).
        self.assertEqual(calls[3].split()[:2], ["all", "4096"])
        self.assertTrue(calls[3].endswith("--timing blocks"), calls[3])
        turns = results_csv.read_rows(self.out_dir / results_outputs.TURNS_CSV)
        self.assertEqual({row["timing"] for row in turns}, {"blocks"})
        self.assertEqual({row["m"] for row in turns}, {4096})
        self.assertEqual((self.out_dir / "ceilings.csv").read_text(), CEILINGS_FIXTURE.read_text())
        self.assertIn(f"wrote {self.out_dir / 'ceilings.csv'}", out)
        # No profile.csv yet: the roofline is skipped, in one line.
        self.assertIn(f"roofline skipped: no profile.csv in {self.out_dir}", out)
        self.assertFalse((self.out_dir / "roofline.png").exists())

        self.assertEqual(results_csv.read_rows(self.out_dir / "results.csv"),
                         sorted_by_size_then_stage(fixture_rows()))
        for name in ("results.md", "progression.png", "tflops_vs_size.png"):
            self.assertIn(f"wrote {self.out_dir / name}", out)
            self.assertGreater((self.out_dir / name).stat().st_size, 0)

        readme = self.readme.read_text(encoding="utf-8")
        self.assertIn("Intro that must survive.", readme)
        self.assertNotIn("stale results", readme)
        self.assertIn("| 5 | `2d_blocktiling` | fp32 | 25.1 | 52.4% | ✓ |", readme)
        self.assertIn("](../results/fixture-gpu/progression.png)", readme)

        # The chapters' figures are rewritten from the results, and the worklog regenerated beside the
        # README from those chapters, with the same results.
        chapter = (self.kernels / "05_2d_blocktiling.cu").read_text()
        self.assertIn("// Measured by make results on the Fixture GPU: 25.1 TFLOPS at N = 4096 (52.4 % of cuBLAS "
                      "SGEMM).\n", chapter)
        self.assertIn(f"wrote {self.kernels / '05_2d_blocktiling.cu'}", out)
        worklog_text = (self.readme.parent / "WORKLOG.md").read_text(encoding="utf-8")
        self.assertIn("## Stage 5 — ", worklog_text)
        self.assertIn("Measured by make results on the Fixture GPU: 25.1 TFLOPS at N = 4096", worklog_text)
        self.assertIn("Of its ceiling: ", worklog_text)

    def test_no_readme_leaves_readme_and_chapters_untouched(self):
        chapters = {path.name: path.read_text() for path in self.kernels.iterdir()}
        result = self.regenerate("--no-readme")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.readme.read_text(), README_TEMPLATE)
        self.assertEqual({path.name: path.read_text() for path in self.kernels.iterdir()}, chapters)
        self.assertTrue((self.out_dir / "results.csv").exists())

    def test_failed_stage_is_reported_after_writing_outputs(self):
        result = self.regenerate(env={"FAKE_SGEMM_FAIL_STAGE": "3"})
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("N=1024: stage 3 shared_memory_tiling failed verification", result.stderr)
        self.assertIn("N=4096: stage 3 shared_memory_tiling failed verification", result.stderr)
        self.assertIn("N=4096 in turns: stage 3 shared_memory_tiling failed verification", result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        table = (self.out_dir / "results.md").read_text(encoding="utf-8")
        self.assertIn("| 3 | `shared_memory_tiling` |", table)
        stage_line = next(line for line in table.splitlines() if line.startswith("| 3 |"))
        self.assertTrue(stage_line.endswith("| ✗ |"), stage_line)

    def test_failed_peak_is_reported_and_the_stages_still_run(self):
        result = self.regenerate(env={"FAKE_SGEMM_PEAK_FAIL": "1"})
        self.assertEqual(result.returncode, 1)
        self.assertIn("fake_sgemm peak exited with code 1", result.stderr)
        self.assertFalse((self.out_dir / "ceilings.csv").exists())
        self.assertTrue((self.out_dir / "results.md").exists())

    def place_committed(self, *fixtures):
        self.out_dir.mkdir(parents=True)
        for fixture, name in fixtures:
            shutil.copyfile(fixture, self.out_dir / name)

    def test_no_run_rebuilds_from_the_committed_csvs_without_the_binary(self):
        self.place_committed((FIXTURE, "results.csv"), (CEILINGS_FIXTURE, "ceilings.csv"),
                             (PROFILE_FIXTURE, "profile.csv"))
        self.binary.unlink()
        result = self.regenerate("--no-run")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(self.argv_log.exists())
        self.assertIn(f"wrote {self.out_dir / 'roofline.png'}", result.stdout)
        self.assertIn("](../results/fixture-gpu/roofline.png)", self.readme.read_text())
        self.assertIn("`mma_sync_tf32`", (self.out_dir / "results.md").read_text())
        worklog_text = (self.readme.parent / "WORKLOG.md").read_text()
        self.assertIn("[The roofline](../results/fixture-gpu/roofline.png)", worklog_text)

    def test_rows_run_elsewhere_are_merged_by_their_timing_without_the_binary(self):
        self.place_committed((FIXTURE, "results.csv"), (CEILINGS_FIXTURE, "ceilings.csv"))
        self.binary.unlink()
        rows = results_csv.read_rows(FIXTURE)
        stage = rows[0]["stage"]
        measured = [{**row, "tflops": 321.5} for row in rows if row["stage"] == stage]
        in_turns = [{**row, "timing": "blocks"} for row in measured]
        elsewhere = self.root / "elsewhere.csv"
        results_csv.write_rows(measured + in_turns, elsewhere)
        result = self.regenerate("--rows", str(elsewhere))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(self.argv_log.exists())
        after = results_csv.read_rows(self.out_dir / "results.csv")
        self.assertEqual(len(after), len(rows))
        self.assertEqual({row["tflops"] for row in after if row["stage"] == stage}, {321.5})
        self.assertEqual([row for row in after if row["stage"] != stage],
                         [row for row in rows if row["stage"] != stage])
        turns = results_csv.read_rows(self.out_dir / "results_in_turns.csv")
        self.assertEqual({row["stage"] for row in turns}, {stage})

    def test_fp8_rows_run_elsewhere_are_against_cublaslt_with_no_ceiling(self):
        self.place_committed((FIXTURE, "results.csv"), (CEILINGS_FIXTURE, "ceilings.csv"))
        self.binary.unlink()
        chapter = self.kernels / "26_fp8_tensor_scale.cu"
        chapter.write_text("// Stage 26 — FP8.\n//\n// The idea.\n//\n// Measured: what it means.\n#include <x>\n")
        elsewhere = self.root / "fp8.csv"
        results_csv.write_rows(fp8_rows() + fp8_rows("blocks"), elsewhere)
        result = self.regenerate("--rows", str(elsewhere))
        self.assertEqual(result.returncode, 0, result.stderr)
        tables = (self.out_dir / "results.md").read_text()
        self.assertIn("| 26 | `fp8_tensor_scale` | fp8 tensor | 204.0 | 76.6% | 874.4 | 90.7% | 1253.6 | 94.4% |",
                      tables)
        self.assertIn("| 26 | `fp8_tensor_scale` | – | – | – | – | – |", tables)
        self.assertIn("| 28 | `fp8_block_scaled` | 1002.6 | 87.2% | 86.0% | – |", tables)
        self.assertNotIn("| 0.0%", tables)
        # The chapter's sentence, its comment lines joined.
        self.assertIn("// Measured by make results on the Fixture GPU: 1253.6 TFLOPS at N = 4096 (94.4 % of cuBLASLt "
                      "FP8), 1263.5 at 8192 (95.9 %). Measured: what it means.",
                      chapter.read_text().replace("\n// ", " "))
        worklog_text = (self.readme.parent / "WORKLOG.md").read_text()
        before, fp8_section = worklog_text.split("## Stage 26 — ")
        self.assertIn("Of its ceiling", before.split("## Stage 5 — ")[1])
        self.assertNotIn("Of its ceiling", fp8_section)
        self.assertIn("(cuBLASLt FP8 for the fp8 stages)", worklog_text)
        self.assertIn("; the fp8 stages have none measured.", worklog_text)

    def test_no_run_asks_which_gpu_when_there_are_several(self):
        self.place_committed((FIXTURE, "results.csv"))
        other = self.results_dir / "other-gpu"
        other.mkdir()
        shutil.copyfile(FIXTURE, other / "results.csv")
        result = self.regenerate("--no-run")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("choose a GPU with --gpu (fixture-gpu, other-gpu)", result.stderr)
        self.assertEqual(self.regenerate("--no-run", "--gpu", "fixture-gpu").returncode, 0)

    def test_ceilings_only_measures_and_redraws_from_the_committed_results(self):
        self.place_committed((FIXTURE, "results.csv"), (PROFILE_FIXTURE, "profile.csv"))
        result = self.regenerate("--ceilings-only")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([call.split()[0] for call in self.argv_log.read_text().splitlines()], ["peak"])
        self.assertEqual((self.out_dir / "ceilings.csv").read_text(), CEILINGS_FIXTURE.read_text())
        self.assertTrue((self.out_dir / "roofline.png").exists())
        self.assertEqual(results_csv.read_rows(self.out_dir / "results.csv"),
                         sorted_by_size_then_stage(fixture_rows()))

    def test_ceilings_only_without_results_places_the_ceilings_and_says_so(self):
        result = self.regenerate("--ceilings-only")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((self.out_dir / "ceilings.csv").read_text(), CEILINGS_FIXTURE.read_text())
        self.assertIn("results.csv to rebuild the tables from: make results runs the stages", result.stdout)
        self.assertEqual(self.readme.read_text(), README_TEMPLATE)

    def test_missing_binary_says_run_make(self):
        self.binary.unlink()
        result = self.regenerate()
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("run make first", result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertFalse(self.results_dir.exists())


if __name__ == "__main__":
    unittest.main()
