"""The tuning script's ranking and its edit of kernels/10_tuned.cuh, without a GPU."""
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import tune  # noqa: E402


def row(config, group, size, ratio, verified="true"):
    return {"config": config, "group_rows": group, "threads": 256, "shared_bytes": 16640,
            "registers": 128, "size": size, "median_ms": 1.0, "tflops": 50 * ratio,
            "cublas_tflops": 50.0, "ratio_to_cublas": ratio, "timing": "launches", "verified": verified,
            "gpu": "Fixture GPU"}


class RankCandidates(unittest.TestCase):
    def test_worst_size_decides_and_failures_are_not_ranked(self):
        rows = [
            row("TileConfig<A>", 8, 4096, 1.10), row("TileConfig<A>", 8, 8192, 0.85),  # wins one size
            row("TileConfig<B>", 8, 4096, 0.95), row("TileConfig<B>", 8, 8192, 0.94),  # steady
            row("TileConfig<C>", 8, 4096, 1.50), row("TileConfig<C>", 8, 8192, 1.40, "false"),
        ]
        ranked = tune.rank_candidates(rows)
        self.assertEqual([c["config"] for c in ranked], ["TileConfig<B>", "TileConfig<A>"])
        self.assertAlmostEqual(ranked[0]["score"], 0.94)
        markdown = tune.tuning_markdown(10, ranked, rows)
        self.assertIn("`TileConfig<B>` **(winner)**", markdown)
        self.assertIn("Failed verification", markdown)
        self.assertIn("`TileConfig<C>` group 8", markdown)


    def test_passes_are_reduced_to_their_median(self):
        rows = [{"pass": number, **r} for number, group in ((1, 0.90), (2, 0.99), (3, 0.91))
                for r in (row("TileConfig<A>", 8, 4096, group), row("TileConfig<A>", 8, 8192, group + 0.05))]
        rows += [{"pass": number, **row("TileConfig<B>", 8, size, 0.93)} for number in (1, 2, 3)
                 for size in (4096, 8192)]
        ranked = tune.rank_candidates(rows)
        # A's one lucky pass (0.99) does not carry it past B's steady 0.93: its median is 0.91.
        self.assertEqual([c["config"] for c in ranked], ["TileConfig<B>", "TileConfig<A>"])
        self.assertAlmostEqual(ranked[1]["ratios"][4096], 0.91)
        self.assertAlmostEqual(ranked[1]["ratios"][8192], 0.96)
        self.assertAlmostEqual(ranked[1]["tflops"][4096], 50 * 0.91)
        self.assertIn("in 3 passes over the list", tune.tuning_markdown(14, ranked, rows))

    def test_caption_says_how_the_candidates_were_timed(self):
        rows = [row("TileConfig<A>", 8, 4096, 0.9)]
        self.assertIn("launch by launch", tune.tuning_markdown(14, tune.rank_candidates(rows), rows))
        turns = [{**rows[0], "timing": "blocks"}]
        markdown = tune.tuning_markdown(14, tune.rank_candidates(turns), turns)
        self.assertIn("`--timing blocks`", markdown)
        self.assertIn("--stage 14 --timing blocks", markdown)

    def test_each_timing_has_its_own_files(self):
        self.assertEqual(tune.output_stem(14, "launches"), "tuning_stage14")
        self.assertEqual(tune.output_stem(14, "blocks"), "tuning_stage14_in_turns")

    def test_rows_timed_two_ways_are_refused(self):
        rows = [row("TileConfig<A>", 8, 4096, 0.9), {**row("TileConfig<A>", 8, 8192, 0.9), "timing": "blocks"}]
        with self.assertRaises(ValueError):
            tune.tuning_markdown(14, tune.rank_candidates(rows), rows)

    def test_a_failure_in_any_pass_is_not_ranked(self):
        rows = [{"pass": 1, **row("TileConfig<A>", 8, 4096, 0.9)},
                {"pass": 2, **row("TileConfig<A>", 8, 4096, 0.9, "false")}]
        self.assertEqual(tune.rank_candidates(rows), [])


class Shapes(unittest.TestCase):
    def test_names_and_groups_of_the_suite_become_shapes_once(self):
        self.assertEqual(tune.suite_shapes(["qkv_64", "skinny", "n16"]),
                         [("qkv_64", 64, 6144, 4096), ("m16", 16, 4096, 4096), ("n64", 4096, 64, 4096),
                          ("n16", 8192, 16, 8192)])
        with self.assertRaises(ValueError):
            tune.suite_shapes(["qkv_65"])
        self.assertEqual(tune.output_stem(20, "launches", shapes=True), "tuning_stage20_shapes")

    def test_each_shape_names_its_fastest_candidate(self):
        def shaped(config, m, n, k, ratio, verified="true"):
            return {**row(config, 8, 0, ratio, verified), "m": m, "n": n, "k": k}
        rows = [shaped("Config<A>", 64, 6144, 4096, 0.70), shaped("Config<B>", 64, 6144, 4096, 0.88),
                shaped("Config<A>", 16, 4096, 4096, 0.80), shaped("Config<B>", 16, 4096, 4096, 0.95, "false")]
        markdown = tune.shapes_markdown(20, rows, [("qkv_64", 64, 6144, 4096), ("m16", 16, 4096, 4096)])
        self.assertIn("| 1 | `Config<A>` | 8 |", markdown)
        self.assertIn("| qkv_64 | 64 | 6144 | 4096 | 2 | 70.0 | **88.0** |", markdown)
        # A candidate that failed verification is marked, never the fastest.
        self.assertIn("| m16 | 16 | 4096 | 4096 | 1 | **80.0** | ✗ |", markdown)


class ApplyWinner(unittest.TestCase):
    def test_rewrites_only_the_two_lines(self):
        for name in ("10_tuned.cuh", "14_multistage.cu"):
            with self.subTest(stage_file=name):
                self.check_rewrite(name)

    def check_rewrite(self, name):
        with tempfile.TemporaryDirectory() as tmp:
            stage = Path(tmp) / name
            shutil.copy(REPO / "kernels" / name, stage)
            before = stage.read_text().splitlines()
            tune.apply_winner(stage, {"config": "TileConfig<1, 2, 3, 4, 5, 6, 7, 8, 9>", "group_rows": 5})
            after = stage.read_text().splitlines()
            changed = [(b, a) for b, a in zip(before, after) if b != a]
            self.assertEqual(len(before), len(after))
            self.assertEqual(len(changed), 2)
            self.assertIn("using TunedConfig = TileConfig<1, 2, 3, 4, 5, 6, 7, 8, 9>;", after)
            self.assertIn("constexpr int kTunedGroupRows = 5;", after)

    def test_missing_lines_raise(self):
        with tempfile.TemporaryDirectory() as tmp:
            stage = Path(tmp) / "10_tuned.cu"
            stage.write_text("// nothing to tune here\n")
            with self.assertRaises(ValueError):
                tune.apply_winner(stage, {"config": "TileConfig<1>", "group_rows": 1})


if __name__ == "__main__":
    unittest.main()
