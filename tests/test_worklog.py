"""WORKLOG.md and the README's results table are generated, never typed: regenerating
them from the committed stage files and CSVs must change nothing."""
import re
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import results_csv  # noqa: E402
import results_outputs  # noqa: E402
import results_tables  # noqa: E402
import worklog  # noqa: E402


def results_dirs():
    return sorted(p for p in (REPO / "results").iterdir() if (p / "results.csv").exists())


def worklog_source(test):
    """The results folder WORKLOG.md was generated from, as its header names it."""
    source = re.search(r" and (results/[^/]+)/;", (REPO / "WORKLOG.md").read_text())
    test.assertIsNotNone(source, "WORKLOG.md does not name its results folder")
    return REPO / source.group(1)


# A chapter whose Measured paragraph opens with prose, then again with the generated sentence.
CHAPTER = """// Stage 5 — A stage.
//
// The idea.
//
// Measured on the H100: 25.34 TFLOPS at N = 4096, a miss.
// Why it missed.
//
// Shapes: any.
#include <x>
"""


class GeneratedFilesMatchTheCsvs(unittest.TestCase):
    def test_worklog_regenerates_unchanged(self):
        expected = worklog.worklog(REPO / "kernels", worklog_source(self))
        self.assertEqual((REPO / "WORKLOG.md").read_text(), expected,
                         "WORKLOG.md is stale: run python3 scripts/worklog.py")

    def test_every_chapter_opens_its_measured_paragraph_with_the_results_figures(self):
        for path, wanted in worklog.wanted_measured_sentences(REPO / "kernels", worklog_source(self)).items():
            with self.subTest(chapter=path.name):
                self.assertEqual(worklog.generated_sentence_in(path), wanted,
                                 f"{path.name}: its figures are not results.csv's: run python3 scripts/worklog.py")
                self.assertTrue(all(len(line) <= worklog.COMMENT_COLUMNS for line in wanted))

    def test_every_chapter_can_be_finished(self):
        for number, path in worklog.stage_files(REPO / "kernels").items():
            with self.subTest(stage=number):
                self.assertLessEqual(worklog.chapter_lines(path), worklog.MAX_CHAPTER_LINES,
                                     f"{path.name}: move what was tried and dropped to docs/notes/{path.stem}.md")

    def test_every_measured_part_is_short(self):
        for number, path in worklog.stage_files(REPO / "kernels").items():
            with self.subTest(stage=number):
                self.assertGreater(worklog.measured_lines(path), 0, f"{path.name}: no Measured paragraph")
                self.assertLessEqual(worklog.measured_lines(path), worklog.MAX_MEASURED_LINES,
                                     f"{path.name}: state the other figures once, in docs/notes/{path.stem}.md")

    def test_every_notes_file_belongs_to_a_stage_and_reaches_the_worklog(self):
        text = (REPO / "WORKLOG.md").read_text()
        stems = {path.stem for path in worklog.stage_files(REPO / "kernels").values()}
        for notes in sorted(worklog.NOTES_DIR.glob("*.md")):
            with self.subTest(notes=notes.name):
                self.assertIn(notes.stem, stems, "a notes file is named after its stage file")
                self.assertIn(f"[`docs/notes/{notes.name}`]", text)

    def test_notes_go_one_heading_down_and_their_links_follow(self):
        with tempfile.TemporaryDirectory() as scratch:
            notes_dir = Path(scratch) / "docs" / "notes"
            notes_dir.mkdir(parents=True)
            path = notes_dir / "14_multistage.md"
            path.write_text("# Title\n\nIntroduction.\n\n## Tried\n\n- one, [code](../../kernels/x.cu#L3)\n"
                            "```\n# not a heading\n```\n### Deeper, [site](https://example.com)\n")
            self.assertEqual(worklog.notes(path, Path(scratch)),
                             "### Tried\n\n- one, [code](kernels/x.cu#L3)\n```\n# not a heading\n```\n"
                             "#### Deeper, [site](https://example.com)")

    def test_every_stage_file_has_a_section(self):
        text = (REPO / "WORKLOG.md").read_text()
        for number in worklog.stage_files(REPO / "kernels"):
            self.assertIn(f"## Stage {number} — ", text)

    def test_results_tables_regenerate_unchanged(self):
        readme = (REPO / "README.md").read_text()
        begin = readme.index(results_outputs.README_BEGIN) + len(results_outputs.README_BEGIN)
        readme_block = readme[begin:readme.index(results_outputs.README_END)]
        blocks = []
        for results_dir in results_dirs():
            rows = results_csv.read_rows(results_dir / "results.csv")
            tables = results_tables.results_markdown(rows, *results_outputs.read_companions(results_dir, rows))
            self.assertEqual((results_dir / "results.md").read_text(), tables + "\n",
                             f"{results_dir.name}/results.md is stale")
            blocks.append(results_outputs.readme_markdown(rows, results_dir, REPO))
        # The README shows the GPU whose results were regenerated last.
        self.assertTrue(any(block in readme_block for block in blocks), "README table is stale: run make results")

    def test_readme_sentence_on_the_draws_regenerates_unchanged(self):
        readme = (REPO / "README.md").read_text()
        begin = readme.index(results_outputs.DRAWS_BEGIN) + len(results_outputs.DRAWS_BEGIN)
        sentence = readme[begin:readme.index(results_outputs.DRAWS_END)].strip()
        self.assertIn(sentence, [results_outputs.readme_draws_markdown(results_dir, REPO)
                                 for results_dir in results_dirs()],
                      "README's draws are stale: python3 scripts/regenerate_results.py --no-run")
        self.assertIn("seed 9", sentence)  # the draws beside results.csv are the ones quoted


class MeasuredSentence(unittest.TestCase):
    ROW = {"tflops": 25.34, "ratio_to_cublas": 0.4912, "precision": "fp32"}

    def test_the_figures_at_both_sizes_or_one_or_none(self):
        gpu = "NVIDIA H100 80GB HBM3"
        both = {4096: {5: self.ROW}, 8192: {5: dict(self.ROW, tflops=25.4, ratio_to_cublas=0.4923)}}
        self.assertEqual(worklog.measured_sentence(5, both, gpu),
                         "Measured by make results on the H100 80GB HBM3: 25.3 TFLOPS at N = 4096 (49.1 % of "
                         "cuBLAS SGEMM), 25.4 at 8192 (49.2 %).")
        self.assertEqual(worklog.measured_sentence(5, {4096: {5: dict(self.ROW, precision="bf16")}}, gpu),
                         "Measured by make results on the H100 80GB HBM3: 25.3 TFLOPS at N = 4096 (49.1 % of "
                         "cuBLAS bf16).")
        self.assertEqual(worklog.measured_sentence(22, {8192: {22: dict(self.ROW, ratio_to_cublas=3.4251)}}, gpu),
                         "Measured by make results on the H100 80GB HBM3: 25.3 TFLOPS at N = 8192 (3.43x cuBLAS SGEMM).")
        self.assertEqual(worklog.measured_sentence(5, {}, gpu),
                         "Measured by make results on the H100 80GB HBM3: no result at N = 4096 or 8192 yet.")

    def test_written_into_the_chapter_then_replaced_and_a_stale_one_is_seen(self):
        with tempfile.TemporaryDirectory() as scratch:
            kernels, results = Path(scratch) / "kernels", Path(scratch) / "results"
            kernels.mkdir()
            results.mkdir()
            chapter = kernels / "05_a_stage.cu"
            chapter.write_text(CHAPTER)
            fixture = (REPO / "tests" / "fixtures" / "results_sample.csv").read_text()
            (results / "results.csv").write_text(fixture)
            wanted = worklog.wanted_measured_sentences(kernels, results)[chapter]
            self.assertEqual(wanted, ["// Measured by make results on the Fixture GPU: 25.1 TFLOPS at N = 4096 "
                                      "(52.4 % of cuBLAS SGEMM)."])
            self.assertEqual(worklog.generated_sentence_in(chapter), [])
            self.assertEqual(worklog.refresh_measured_sentences(kernels, results), [chapter])
            self.assertEqual(chapter.read_text(), CHAPTER.replace("// Measured on", wanted[0] + "\n// Measured on"))
            self.assertEqual(worklog.measured_lines(chapter), 3)
            # New figures replace the sentence, over as many lines as it now takes; the prose stays.
            (results / "results.csv").write_text(fixture.replace(",25.072,", ",1234567.25,", 1)
                                                 .replace("Fixture GPU", "Fixture GPU with a much longer name"))
            self.assertNotEqual(worklog.generated_sentence_in(chapter),
                                worklog.wanted_measured_sentences(kernels, results)[chapter])
            self.assertEqual(worklog.refresh_measured_sentences(kernels, results), [chapter])
            lines = chapter.read_text().splitlines()
            self.assertEqual(lines[4:7], [
                "// Measured by make results on the Fixture GPU with a much longer name: 1234567.2 TFLOPS at N = 4096",
                "// (52.4 % of cuBLAS SGEMM).", "// Measured on the H100: 25.34 TFLOPS at N = 4096, a miss."])
            self.assertEqual(worklog.refresh_measured_sentences(kernels, results), [])
            # A sentence broken by hand is refused, not rewritten with the prose after it.
            chapter.write_text("\n".join(lines[:5] + ["// (52.4 % of cuBLAS SGEMM)"] + lines[6:]) + "\n")
            self.assertRaisesRegex(ValueError, r"05_a_stage.cu:5: the generated sentence is not in its form",
                                   worklog.refresh_measured_sentences, kernels, results)
            chapter.write_text(CHAPTER.replace("// Measured on the H100: 25.34 TFLOPS at N = 4096, a miss.\n", ""))
            self.assertRaisesRegex(ValueError, "no Measured paragraph", worklog.refresh_measured_sentences,
                                   kernels, results)


class Fp8Stages(unittest.TestCase):
    """FP8 stages are timed against cuBLASLt, and are a fraction of the wgmma_fp8 ceiling where
    their run measured it; the fixture's rows were written before the binary did (results.csv's
    ceiling empty, fraction_of_peak 0)."""
    ROW = {"tflops": 1253.64, "ratio_to_cublas": 0.943958, "precision": "fp8 tensor", "ceiling": "",
           "fraction_of_peak": 0.0}

    def test_the_sentence_is_against_cublaslt_fp8_kept_on_one_line(self):
        rows_by_size = {4096: {26: self.ROW}, 8192: {26: dict(self.ROW, tflops=1263.5, ratio_to_cublas=0.95852)}}
        sentence = worklog.measured_sentence(26, rows_by_size, "NVIDIA H100 80GB HBM3")
        self.assertEqual(sentence, "Measured by make results on the H100 80GB HBM3: 1253.6 TFLOPS at N = 4096 (94.4 % of "
                                   "cuBLASLt FP8), 1263.5 at 8192 (95.9 %).")
        lines = worklog.comment_lines(sentence)
        self.assertEqual(lines[1], "// cuBLASLt FP8), 1263.5 at 8192 (95.9 %).", "the name is not broken apart")
        self.assertTrue(worklog.GENERATED_SENTENCE.fullmatch(" ".join(line[3:] for line in lines)))

    @staticmethod
    def worklog_of(fp8_row):
        """The worklog of stage 5 and 26 from the fixtures, each FP8 row passed through fp8_row."""
        fixture = REPO / "tests" / "fixtures"
        rows = results_csv.read_rows(fixture / "results_sample.csv")
        fp8 = [fp8_row(row) for row in results_csv.read_rows(fixture / "fp8_results_sample.csv")
               if row["timing"] == "launches"]
        with tempfile.TemporaryDirectory() as scratch:
            kernels, results = Path(scratch) / "kernels", Path(scratch) / "results"
            kernels.mkdir()
            results.mkdir()
            (kernels / "05_a_stage.cu").write_text(CHAPTER)
            (kernels / "26_fp8.cu").write_text(CHAPTER.replace("Stage 5 — A stage", "Stage 26 — FP8"))
            results_csv.write_rows(rows + fp8, results / "results.csv")
            return rows, worklog.worklog(kernels, results, Path(scratch))

    def test_its_section_has_no_ceiling_line_and_the_worklog_says_why(self):
        rows, text = self.worklog_of(lambda row: row)
        before, fp8_section = text.split("## Stage 26 — FP8")
        self.assertIn("Of its ceiling: 37.4 % at N = 4096.", before)
        self.assertNotIn("Of its ceiling", fp8_section)
        self.assertIn("Ratios are against cuBLAS at the same precision (cuBLASLt FP8 for the fp8 stages), ", text)
        self.assertIn(f"the ceiling is, {results_tables.describe_ceilings(rows)}; the fp8 stages have none measured.",
                      text)

    def test_with_the_fp8_ceiling_its_section_gives_its_fraction(self):
        # A round wgmma_fp8 ceiling of 2000 TFLOPS, not a measurement.
        rows, text = self.worklog_of(lambda row: dict(row, ceiling="wgmma_fp8", fraction_of_peak=row["tflops"] / 2000))
        fp8_section = text.split("## Stage 26 — FP8")[1]
        self.assertIn("Of its ceiling: 62.7 % at N = 4096, 63.2 % at N = 8192.", fp8_section)
        self.assertIn("; for fp8 stages, the wgmma m64n256k32 e4m3 throughput (operands in shared memory)", text)
        self.assertNotIn("have none measured", text)


class MovedCounters(unittest.TestCase):
    def test_busy_pipe_first_then_the_largest_other_change(self):
        previous = {"fma_pipe_pct": "58.4", "tensor_pipe_pct": "0", "smem_load_conflicts": "268464173",
                    "occupancy_pct": "24.3", "registers": "118"}
        current = {"fma_pipe_pct": "67.1", "tensor_pipe_pct": "0", "smem_load_conflicts": "50349",
                   "occupancy_pct": "23.6", "registers": "116"}
        self.assertEqual(worklog.moved_counters(previous, current),
                         ["FMA pipe busy 58.4 % → 67.1 %", "shared-load bank conflicts 268.5M → 50.3K"])

    def test_tensor_stages_cite_the_tensor_pipe(self):
        previous = {"fma_pipe_pct": "1.1", "tensor_pipe_pct": "18.5"}
        current = {"fma_pipe_pct": "4.5", "tensor_pipe_pct": "70.5"}
        self.assertEqual(worklog.moved_counters(previous, current)[0], "tensor pipe busy 18.5 % → 70.5 %")


if __name__ == "__main__":
    unittest.main()
