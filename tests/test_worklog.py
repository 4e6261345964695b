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


class GeneratedFilesMatchTheCsvs(unittest.TestCase):
    def test_worklog_regenerates_unchanged(self):
        text = (REPO / "WORKLOG.md").read_text()
        # The header names the results folder it was generated from.
        source = re.search(r" and (results/[^/]+)/;", text)
        self.assertIsNotNone(source, "WORKLOG.md does not name its results folder")
        expected = worklog.worklog(REPO / "kernels", REPO / source.group(1))
        self.assertEqual(text, expected,
                         "WORKLOG.md is stale: run python3 scripts/worklog.py")

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
