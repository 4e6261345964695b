"""Results carry their sources: scripts/source_hashes.py hashes a stage's code (not its
comments), and scripts/check_results.py (make check-results) passes on the committed tree and
fails, naming the rows, once a measured stage's kernel changes."""
import contextlib
import csv
import io
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import check_results  # noqa: E402
import source_hashes  # noqa: E402


class CodeOf(unittest.TestCase):
    def test_comments_and_layout_are_not_code(self):
        one = "// The idea.\nint f(int a) {  /* why */\n    return a + 1;  // one more\n}\n"
        two = "int f(int a)\n{\n  return a+1;\n}"
        self.assertEqual(source_hashes.code_of(one), source_hashes.code_of(two))
        self.assertEqual(source_hashes.code_of(one), "int f(int a){return a+1;}")

    def test_a_changed_token_is_a_changed_code(self):
        self.assertNotEqual(source_hashes.code_of("return a + 1;"), source_hashes.code_of("return a + 2;"))
        self.assertNotEqual(source_hashes.code_of("unsigned int x;"), source_hashes.code_of("unsignedint x;"))

    def test_literals_keep_what_looks_like_a_comment(self):
        self.assertEqual(source_hashes.code_of('s = "a // b";  // c'), 's="a // b";')
        self.assertEqual(source_hashes.code_of("c = '/';  /* d */"), "c='/';")
        self.assertEqual(source_hashes.code_of('t = "x \\" /* y";'), 't="x \\" /* y";')


def write(root, path, text):
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)


class Closure(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = self.root = Path(self.tmp.name)
        write(root, "kernels/common/tile.cuh", "int tile;\n")
        write(root, "kernels/common/copy.cuh", '#include "tile.cuh"\nint copy;\n')
        write(root, "kernels/common/copy.cu", "int copy_impl;\n")
        write(root, "kernels/03_three.cu", '#include "common/copy.cuh"\n#include "gpu/cuda_check.hpp"\n#include <x>\n')
        write(root, "kernels/03_three.hpp", "void three();\n")
        write(root, "kernels/04_four.cu", '#include "03_three.hpp"\n')
        write(root, "src/gpu/cuda_check.hpp", "int check;\n")
        write(root, "dispatch/small.cpp", '#include "03_three.hpp"\nvoid launch_small_track();\n')
        write(root, "dispatch/small_cost.cpp", "int cost;\n")
        self.tree = source_hashes.WorkingTree(root)

    def tearDown(self):
        self.tmp.cleanup()

    def closure(self, label):
        return source_hashes.closure(source_hashes.roots_of(label, self.tree), self.tree)

    def test_a_stage_is_its_chapter_and_what_it_includes_under_kernels_and_dispatch(self):
        self.assertEqual(self.closure("3"), ["kernels/03_three.cu", "kernels/03_three.hpp",
                                             "kernels/common/copy.cu", "kernels/common/copy.cuh",
                                             "kernels/common/tile.cuh"])

    def test_an_included_header_brings_its_implementation(self):
        self.assertEqual(self.closure("4"), ["kernels/03_three.cu", "kernels/03_three.hpp", "kernels/04_four.cu",
                                             "kernels/common/copy.cu", "kernels/common/copy.cuh",
                                             "kernels/common/tile.cuh"])

    def test_a_stage_whose_plan_the_dispatch_layer_chooses_holds_the_file_that_does(self):
        write(self.root, "dispatch/three_plans.cpp", '#include "small_cost.hpp"\nvoid launch_three(int x) {}\n')
        write(self.root, "dispatch/small_cost.hpp", "int cost();\n")
        write(self.root, "dispatch/other.cpp", "void launch_threefold() {}\n")
        self.assertEqual(self.closure("3"), ["dispatch/small_cost.cpp", "dispatch/small_cost.hpp",
                                             "dispatch/three_plans.cpp", "kernels/03_three.cu", "kernels/03_three.hpp",
                                             "kernels/common/copy.cu", "kernels/common/copy.cuh",
                                             "kernels/common/tile.cuh"])

    def test_labels_are_the_chapters_and_the_tracks(self):
        self.assertEqual(source_hashes.labels(self.tree), ["0", "3", "4", "small"])
        self.assertEqual(source_hashes.closure(source_hashes.roots_of("0", self.tree), self.tree), [])

    def test_a_shared_file_changes_every_stage_that_includes_it(self):
        before = {label: source_hashes.sources_hash(label, self.tree) for label in ("3", "4", "small")}
        write(self.root, "kernels/common/tile.cuh", "int tile = 2;\n")
        after = {label: source_hashes.sources_hash(label, self.tree) for label in ("3", "4", "small")}
        self.assertTrue(all(before[label] != after[label] for label in before))

    def test_the_cpp_table_names_every_label(self):
        table = source_hashes.cpp_table(self.tree)
        for label in ("0", "3", "4", "small"):
            self.assertIn(f'{{"{label}", "{source_hashes.sources_hash(label, self.tree)}"}}', table)


class CommitTreeHashes(unittest.TestCase):
    def test_a_commit_hashes_as_its_checkout_does(self):
        status = subprocess.run(["git", "status", "--porcelain", "--", "kernels", "dispatch"], cwd=REPO,
                                capture_output=True, text=True)
        if status.returncode != 0 or status.stdout:
            self.skipTest("needs a git checkout whose kernels/ and dispatch/ are as committed")
        head, here = source_hashes.CommitTree("HEAD", REPO), source_hashes.WorkingTree(REPO)
        for label in ("0", "1", "25", "bf16", "fp8"):
            self.assertEqual(source_hashes.sources_hash(label, head), source_hashes.sources_hash(label, here))


def check(root):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = check_results.main(["--root", str(root)])
    return status, out.getvalue()


class CheckResults(unittest.TestCase):
    def test_the_committed_results_measured_the_committed_sources(self):
        status, out = check(REPO)
        self.assertEqual(status, 0, out)

    def test_a_changed_kernel_makes_its_rows_stale_and_a_changed_comment_does_not(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for folder in ("kernels", "dispatch", "results"):
                shutil.copytree(REPO / folder, root / folder)
            stage = next(path for path in sorted((root / "kernels").glob("25_*.cu")))
            stage.write_text("// A comment reworded.\n" + stage.read_text())
            self.assertEqual(check(root)[0], 0)

            stage.write_text(stage.read_text() + "\nstatic int a_change_of_code;\n")
            status, out = check(root)
            self.assertEqual(status, 1)
            self.assertIn("results/h100-80gb-hbm3/results.csv", out)
            self.assertIn("stage 25: 4 rows (1024, 2048, 4096, 8192)", out)
            self.assertIn("track bf16", out)  # the bf16 track chooses stage 25's kernel
            stale_part = out.split("Rows measured on sources that have changed since")[-1]
            self.assertNotIn("stage 24", stale_part)  # flagged rows of stage 24 may be listed before
            stale = check_results.stale_squares(root)
            self.assertIn(("results.csv", "25", "4096"), stale)
            self.assertIn(("results_in_turns.csv", "25", "8192"), stale)

    def test_a_row_that_records_no_sources_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for folder in ("kernels", "dispatch"):
                shutil.copytree(REPO / folder, root / folder)
            rows = list(csv.DictReader(open(REPO / "results/h100-80gb-hbm3/results.csv", encoding="utf-8")))
            rows[0]["sources"] = ""
            (root / "results/gpu").mkdir(parents=True)
            with open(root / "results/gpu/results.csv", "w", newline="", encoding="utf-8") as file:
                writer = csv.DictWriter(file, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
            status, out = check(root)
            self.assertEqual(status, 1)
            self.assertIn(f"stage {rows[0]['stage']}: 1 row (", out)
            self.assertIn("records no sources", out)

    def test_a_flagged_row_passes_until_its_sources_change_again(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for folder in ("kernels", "dispatch"):
                shutil.copytree(REPO / folder, root / folder)
            with open(REPO / "results/h100-80gb-hbm3/results.csv", encoding="utf-8") as file:
                rows = list(csv.DictReader(file))[:1]
            rows[0]["sources"] = "0123456789ab"
            gpu = root / "results/gpu"
            gpu.mkdir(parents=True)
            with open(gpu / "results.csv", "w", newline="", encoding="utf-8") as file:
                writer = csv.DictWriter(file, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
            stage = rows[0]["stage"]
            now = source_hashes.sources_hash(stage, source_hashes.WorkingTree(root))

            def flag(sources):
                (gpu / "flagged.csv").write_text("file,run,measured_sources,sources,why\n"
                                                 f"results.csv,{stage},0123456789ab,{sources},not lent\n")

            flag(now)
            status, out = check(root)
            self.assertEqual(status, 0, out)
            self.assertIn(f"results/gpu/results.csv: stage {stage}: 1 rows flagged", out)
            self.assertIn("not lent", out)

            flag("ba9876543210")  # flagged against other sources: the row is stale, the flag matches none
            status, out = check(root)
            self.assertEqual(status, 1)
            self.assertIn(f"stage {stage}: 1 row (", out)
            self.assertIn("matches no stale row", out)


class RemeasureStale(unittest.TestCase):
    """make results STALE=1: each size once, with just the stages stale there, each file in its timing."""

    def test_runs_the_stale_stages_at_each_size_in_each_timing(self):
        import regenerate_results
        stale = [("results.csv", "25", "4096"), ("results.csv", "25", "8192"), ("results.csv", "15", "16384"),
                 ("results.csv", "0", "4096"), ("results_in_turns.csv", "25", "4096")]
        calls = []

        def run_sizes(binary, sizes, extra_args, scratch_dir, timing="launches", stages=None):
            calls.append((sizes, extra_args, timing, stages))
            return [(f"{sizes} {timing}", 0, [])]

        saved = (check_results.stale_squares, regenerate_results.run_sizes)
        check_results.stale_squares, regenerate_results.run_sizes = (lambda root=REPO: stale), run_sizes
        try:
            runs, turns = regenerate_results.run_stale("sgemm", ["--seed", "1"], Path("scratch"))
        finally:
            check_results.stale_squares, regenerate_results.run_sizes = saved
        self.assertEqual(calls, [([4096], ["--seed", "1"], "launches", ["25", "0"]),
                                 ([8192], ["--seed", "1"], "launches", ["25"]),
                                 ([16384], ["--seed", "1"], "launches", ["15"]),
                                 ([4096], ["--timing", "blocks"], "blocks", ["25"])])
        self.assertEqual(len(runs), 3)
        self.assertEqual(len(turns), 1)


if __name__ == "__main__":
    unittest.main()
