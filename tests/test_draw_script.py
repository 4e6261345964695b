"""scripts/draw_shapes.py and its generator (draw_problems.py) and report (draw_report.py):
the draw is a pure function of its seed, holds every kind within its ranges with no
divisibility forced; the report's statistics are right on hand-made rows and leave refused,
failed and skipped runs out of them, and it counts the kernels a track chose; and a run
through a stand-in binary, whose tracks take every shape (padded where N is off 8) and whose
stages 20 and 24 refuse what they refused, which fails one verification, writes the CSV and
the report."""
import math
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
sys.path.insert(0, str(REPO_ROOT / "scripts"))
import draw_problems  # noqa: E402
import draw_report  # noqa: E402
import results_csv  # noqa: E402

CEILINGS = REPO_ROOT / "tests" / "fixtures" / "ceilings_sample.csv"  # DRAM 1.8 TB/s

# Mimics `sgemm <run> -m M -n N -k K --time-budget T --csv FILE --timing METHOD`: stages 20
# and 24 refuse (exit 2, one line) N not a multiple of 8, stage 20 K too; else it appends a
# row, verified unless the run and shape are FAKE_FAIL's ("run:m:n:k"), its launch 2MNK at 100
# TFLOPS, its ratio to cuBLAS 0.5 by graphs and 0.8 + (M mod 5) / 10 launch by launch, its
# kernel a stage's own number, a track's that of the stage it stands for here (bf16: 20,
# fp32-tc: 24, fp32: 10), padded where N is not a multiple of 8 (but 10's). Logs its argv.
FAKE_BINARY = textwrap.dedent("""\
    #!{python}
    import os, sys
    sys.path.insert(0, {tests!r})
    from fake_sgemm import append_row, fail_verification
    columns, log = {columns!r}, {log!r}
    with open(log, "a") as f:
        f.write(" ".join(sys.argv[1:]) + "\\n")
    stage, options = sys.argv[1], dict(zip(sys.argv[2::2], sys.argv[3::2]))
    m, n, k = int(options["-m"]), int(options["-n"]), int(options["-k"])
    kernel = {{"bf16": "20", "fp32-tc": "24", "fp32": "10"}}.get(stage, stage)
    if kernel != stage and kernel != "10" and n % 8:
        kernel += " padded"
    if (stage in ("20", "24") and n % 8) or (stage == "20" and k % 8):
        print(f"sgemm: error: stage {{stage}} (fake) needs N a multiple of 8; got M={{m}} N={{n}} K={{k}}",
              file=sys.stderr)
        sys.exit(2)
    timing = options["--timing"]
    if os.environ.get("FAKE_HANG") == f"{{stage}}:{{m}}:{{n}}:{{k}}":
        import time
        time.sleep(60)
    failed = os.environ.get("FAKE_FAIL") == f"{{stage}}:{{m}}:{{n}}:{{k}}"
    row = dict.fromkeys(columns, "")
    row.update(stage=stage, name="fake", precision="bf16" if stage in ("20", "bf16") else "fp32", m=m, n=n, k=k,
               alpha=1.0, beta=0.0, median_ms=2 * m * n * k / 100e12 * 1e3, tflops=100, cublas_median_ms=1,
               cublas_tflops=100, ratio_to_cublas=0.5 if timing == "graph" else 0.8 + (m % 5) / 10,
               fraction_of_peak=0.1, ceiling="wgmma_bf16", verified="false" if failed else "true",
               gpu="Fixture GPU", driver="1", cuda="13.0", timing=timing, reps=10, seed=1, data="uniform",
               kernel=kernel)
    append_row(options["--csv"], columns, row)
    if failed:
        fail_verification()
    """)


class GeneratorTest(unittest.TestCase):
    def test_a_draw_is_a_pure_function_of_its_seed_and_a_shorter_draw_is_its_start(self):
        self.assertEqual(draw_problems.draw(7, 200), draw_problems.draw(7, 200))
        self.assertNotEqual(draw_problems.draw(7, 200), draw_problems.draw(8, 200))
        self.assertEqual(draw_problems.draw(7, 50), draw_problems.draw(7, 200)[:50])
        self.assertEqual([p.index for p in draw_problems.draw(3, 5)], [1, 2, 3, 4, 5])

    def test_half_layers_half_plain_every_kind_and_unique_names(self):
        problems = draw_problems.draw(1, 400)
        self.assertEqual(sum(p.kind == "plain" for p in problems), 200)
        self.assertEqual({p.kind for p in problems}, set(draw_problems.KINDS))
        self.assertEqual(len({p.name for p in problems}), 400)
        first = problems[0]
        self.assertTrue(first.name.startswith(first.kind + "_h") and first.name.endswith(f"_t{first.m}"))
        self.assertEqual(problems[1].name, f"plain_{problems[1].m}x{problems[1].n}x{problems[1].k}")

    def test_ranges_of_the_layers_and_the_plain_problems(self):
        problems = draw_problems.draw(2, 600)
        for p in problems:
            if p.kind == "plain":
                self.assertTrue(all(16 <= size <= 16384 for size in (p.m, p.n, p.k)), p)
                continue
            self.assertTrue(1 <= p.m <= 16384, p)
            hidden = p.n if p.kind in ("attn_out", "mlp_down") else p.k
            self.assertTrue(1024 <= hidden <= 8192 and hidden % 128 == 0, p)
            if p.kind == "qkv":
                kv_heads = (p.n - hidden) // 256
                self.assertEqual((p.n - hidden) % 256, 0, p)
                self.assertTrue(1 <= kv_heads <= hidden // 128, p)
                self.assertIn(kv_heads, {hidden // 128, hidden // 512, hidden // 1024, 8} | {1}, p)
            elif p.kind == "attn_out":
                self.assertEqual(p.n, p.k, p)
            elif p.kind in ("mlp_up", "mlp_down"):
                intermediate = p.n // 2 if p.kind == "mlp_up" else p.k
                self.assertEqual(intermediate % 256, 0, p)
                self.assertTrue(2.5 * hidden - 128 <= intermediate <= 4 * hidden + 128, p)
            else:
                self.assertTrue(32000 <= p.n <= 256000 and p.n % 64 == 0, p)
        plain = [p for p in problems if p.kind == "plain"]
        tokens = [p.m for p in problems if p.kind != "plain"]
        # Log-uniform: both ends are reached, and nothing is rounded to a multiple of 8.
        self.assertLess(min(tokens), 8)
        self.assertGreater(max(tokens), 8192)
        self.assertLess(min(min(p.m, p.n, p.k) for p in plain), 32)
        self.assertGreater(max(max(p.m, p.n, p.k) for p in plain), 8192)
        self.assertGreater(sum(m % 8 != 0 for m in tokens), len(tokens) // 2)
        for size in ("m", "n", "k"):
            self.assertGreater(sum(getattr(p, size) % 8 != 0 for p in plain), len(plain) // 2)

    def test_log_uniform_integers_cover_their_range(self):
        import random
        rng = random.Random(0)
        values = [draw_problems.log_uniform_int(rng, 1, 4) for _ in range(4000)]
        self.assertEqual(set(values), {1, 2, 3, 4})
        # P(1) = ln 2 / ln 5, about 0.43.
        self.assertAlmostEqual(values.count(1) / len(values), math.log(2) / math.log(5), delta=0.03)

    def test_bands_and_the_guard(self):
        band = draw_problems.band
        self.assertEqual([band(m) for m in (1, 256, 257, 1023, 1024)],
                         ["M ≤ 256", "M ≤ 256", "256 < M < 1024", "256 < M < 1024", "M ≥ 1024"])
        big = draw_problems.Problem(1, "big", "vocab", 16384, 128000, 8192)
        self.assertIn("FLOP", draw_problems.skip_reason(big))
        small = draw_problems.Problem(2, "small", "plain", 100, 100, 100)
        self.assertIsNone(draw_problems.skip_reason(small))
        # (MK + KN) x 14 + MN x 20 = 280000 + 200000 bytes.
        self.assertIsNone(draw_problems.skip_reason(small, max_bytes=480000))
        self.assertIn("memory", draw_problems.skip_reason(small, max_bytes=479999))
        self.assertIn("2MNK exceeds", draw_problems.guard_rule())


def row(index, stage, m, ratio, status="ok", timing="launches", median_ms=1.0, n=4096, k=4096, kernel="", name="fake"):
    return draw_report.blank_row(
        index=index, problem=f"p{index}", kind="plain", band=draw_problems.band(m), status=status,
        reason="" if status == "ok" else "why", stage=stage, precision="bf16" if stage in (20, "bf16") else "fp32",
        m=m, n=n, k=k, alpha=1.0, beta=0.0, timing=timing, gpu="Fixture GPU", kernel=kernel, name=name,
        median_ms=median_ms if status == "ok" else None, ratio_to_cublas=ratio if status == "ok" else None)


class ReportTest(unittest.TestCase):
    def test_percentile_interpolates_between_the_nearest_two(self):
        self.assertAlmostEqual(draw_report.percentile([5, 1, 2, 3, 4], 0.1), 1.4)
        self.assertAlmostEqual(draw_report.percentile([2, 4], 0.5), 3.0)
        self.assertEqual(draw_report.percentile([7], 0.1), 7)

    def test_each_band_split_by_whether_the_rows_start_on_16_bytes(self):
        # bf16: K and N multiples of 8 are on 16 bytes; fp32: multiples of 4. Problem 3 was
        # timed again by graphs (0.5 where its launches said 0.8); a refusal counts in neither.
        rows = [row(1, "bf16", 16, 0.9), row(2, "bf16", 16, 0.4, n=4001), row(3, "bf16", 2000, 0.8, k=1001),
                row(3, "bf16", 2000, 0.5, k=1001, timing="graph"), row(4, "bf16", 16, None, "refused", n=7)]
        markdown = draw_report.draw_markdown(rows, 3, 4)
        self.assertIn("(K and N multiples of 8: what TMA reads as it is)", markdown)
        self.assertIn("| on 16 bytes | 1: 90.0 % / 90.0 % | – | – | 1: 90.0 % / 90.0 % |", markdown)
        self.assertIn("| off 16 bytes | 1: 40.0 % / 40.0 % | – | 1: 80.0 % / 50.0 % | 2: 56.6 % / 44.7 % |", markdown)
        self.assertTrue(draw_report.rows_on_16_bytes(row(5, 24, 16, 1.0, n=4092, k=12)))  # fp32: multiples of 4
        self.assertFalse(draw_report.rows_on_16_bytes(row(5, 24, 16, 1.0, n=4094)))

    def test_statistics_over_the_runs_only(self):
        rows = [row(1, 20, 16, 0.5), row(2, 20, 32, 2.0), row(3, 20, 64, 1.0), row(4, 20, 128, 0.8),
                row(5, 20, 64, None, "refused"), row(6, 20, 64, None, "failed"), row(7, 20, 64, None, "skipped"),
                row(8, 20, 64, None, "failed")]
        stats = draw_report.band_stats(rows)
        self.assertEqual([stats[s] for s in draw_report.STATUSES], [4, 1, 2, 1])
        self.assertAlmostEqual(stats["geomean"], (0.5 * 2.0 * 1.0 * 0.8) ** 0.25)
        self.assertAlmostEqual(stats["p10"], 0.5 + 0.3 * 0.3)  # sorted 0.5 0.8 1 2, position 0.3
        self.assertEqual(stats["worst"]["problem"], "p1")
        self.assertAlmostEqual(stats["below"], 0.5)
        self.assertNotIn("dram", stats)
        self.assertEqual(draw_report.band_stats([row(5, 20, 64, None, "refused")])["refused"], 1)
        self.assertNotIn("geomean", draw_report.band_stats([row(5, 20, 64, None, "refused")]))

    def test_dram_share_is_the_operand_and_c_bytes_at_the_bandwidth_over_the_time(self):
        bf16 = row(1, 20, 16, 1.0)  # 2 x (16 x 4096 + 4096 x 4096) + 4 x 16 x 4096 bytes
        expected_bytes = 2 * (16 * 4096 + 4096 * 4096) + 4 * 16 * 4096
        self.assertEqual(draw_report.dram_bytes(bf16), expected_bytes)
        self.assertEqual(draw_report.dram_bytes({**bf16, "beta": 0.5}), expected_bytes + 4 * 16 * 4096)
        self.assertEqual(draw_report.dram_bytes(row(1, 24, 16, 1.0)), 4 * (16 * 4096 + 4096 * 4096) + 4 * 16 * 4096)
        at_half = {**bf16, "median_ms": 2 * expected_bytes / 2e12 * 1e3}
        self.assertAlmostEqual(draw_report.dram_share(at_half, 2.0), 0.5)
        # The median over the band's runs.
        shares = [0.2, 0.5, 0.9]
        rows = [{**bf16, "index": i, "median_ms": expected_bytes / 2e12 * 1e3 / share} for i, share in enumerate(shares)]
        self.assertAlmostEqual(draw_report.band_stats(rows, 2.0)["dram"], 0.5)

    def test_an_fp8_run_moves_a_byte_a_value_of_a_and_b_and_bf16_c(self):
        fp8 = {**row(1, "fp8", 16, 1.0), "precision": "fp8 1x128-128x128"}
        self.assertEqual(draw_report.dram_bytes(fp8), 1 * (16 * 4096 + 4096 * 4096) + 2 * 16 * 4096)
        self.assertIn("For fp8 runs, A and B take 1 byte a value", draw_report.draw_markdown([fp8], 1, 1))
        self.assertNotIn("For fp8 runs", draw_report.draw_markdown([row(1, 20, 16, 1.0)], 1, 1))

    def test_report_of_a_hand_made_csv(self):
        rows = [row(1, 20, 16, 0.5), row(1, 20, 16, 0.4, timing="graph"), row(2, 20, 100, 2.0),
                row(3, 20, 5000, 1.25), row(4, 20, 600, None, "refused"), row(5, 20, 20000, None, "skipped"),
                row(1, 24, 16, 2.5), row(2, 24, 100, None, "failed")]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "draw_3.csv"
            draw_report.write_draw(draw_report.in_draw_order(rows), path)
            read = draw_report.read_draw(path)
        self.assertEqual(len(read), len(rows))
        self.assertIsNone(read[-1]["median_ms"])
        markdown = draw_report.draw_markdown(read, 3, 5, dram_tbps=1.8)
        self.assertIn("--seed 3 --count 5", markdown)
        self.assertIn("| M ≤ 256 | 2 | 0 | 0 | 0 | 100.0 % | 65.0 % | 50.0 % (p1) | 50 % | ", markdown)
        self.assertIn("| 256 < M < 1024 | 0 | 1 | 0 | 0 | – | – | – | – | – |", markdown)
        self.assertIn("| M ≥ 1024 | 1 | 0 | 0 | 1 | 125.0 % |", markdown)
        self.assertIn("(1 problem timed again with `--timing graph`)", markdown)
        self.assertIn("| M ≤ 256 | 2 | 0 | 0 | 0 | 89.4 % |", markdown)  # sqrt(0.4 x 2)
        self.assertIn("| M ≤ 256 | 1 | 0 | 1 | 0 | 2.50x | 2.50x | 2.50x (p1) | 0 % | ", markdown)
        self.assertIn("## Stage 20 (`fake`): % of cuBLAS bf16 (bf16 inputs)", markdown)
        self.assertIn("## Stage 24 (`fake`): times cuBLAS SGEMM (fp32 inputs)", markdown)
        self.assertIn("| stage 20 | why | 1 |", markdown)
        self.assertIn("| p2 | stage 24 | launches | why |", markdown)
        self.assertIn("Not run yet by stage 24: problems 3, 4, 5 of the 5 (the run stopped before them)", markdown)
        self.assertNotIn("Not run yet by stage 20", markdown)
        self.assertNotIn("kernels", markdown)
        share = draw_report.dram_share(rows[0], 1.8) * 100  # M ≤ 256 median of p1's and p2's
        share = (share + draw_report.dram_share(rows[2], 1.8) * 100) / 2
        self.assertIn(f"| {share:.1f} % |", markdown)

    def test_the_readmes_sentence_on_the_draws_beside_it(self):
        bf16 = [row(1, "bf16", 16, 0.5), row(1, "bf16", 16, 0.4, timing="graph"), row(2, "bf16", 100, 2.0),
                row(3, "bf16", 600, None, "refused")]
        fp32_tc = [row(1, "fp32-tc", 16, 2.0), row(2, "fp32-tc", 100, 0.5), row(3, "fp32-tc", 5000, 2.0)]
        with tempfile.TemporaryDirectory() as tmp:
            draws = []
            for seed, rows in ((8, bf16), (11, fp32_tc)):
                path = Path(tmp) / "results" / f"draw_{seed}.csv"
                path.parent.mkdir(exist_ok=True)
                draw_report.write_draw(draw_report.in_draw_order(rows), path)
                draws.append((path, seed))
            sentence = " ".join(draw_report.readme_sentence(draws, tmp).split())
        self.assertIn("bf16 at 100.0 % of cuBLAS bf16 over [seed 8](results/draw_8.md)'s 2 problems run "
                      "(89.4 % by CUDA graphs where a launch is short), 10th percentile 65.0 %", sentence)
        self.assertIn("fp32-tc at 1.26x cuBLAS SGEMM over [seed 11](results/draw_11.md)'s 3 problems run, "
                      "10th percentile 0.80x, at or above it on 67 %.", sentence)
        self.assertEqual(draw_report.readme_sentence([], tmp), "")

    def test_a_flagged_run_says_so_in_the_sentence(self):
        bf16 = [row(1, "bf16", 16, 0.5), row(2, "bf16", 100, 2.0)]
        fp32 = [row(1, "fp32", 16, 0.7)]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "results" / "draw_8.csv"
            path.parent.mkdir()
            draw_report.write_draw(draw_report.in_draw_order(bf16 + fp32), path)
            (path.parent / "flagged.csv").write_text("file,run,measured_sources,sources,why\n"
                                                     "draw_8.csv,bf16,0123456789ab,ba9876543210,why\n")
            sentence = " ".join(draw_report.readme_sentence([(path, 8)], tmp).split())
        self.assertIn("10th percentile 65.0 % ([flagged](results/flagged.csv): measured before a change to its "
                      "sources)", sentence)
        self.assertEqual(sentence.count("[flagged]"), 1)  # fp32's rows are not

    def test_a_track_in_several_draws_is_quoted_from_its_largest(self):
        small = [row(1, "bf16", 16, 0.5), row(2, "bf16", 100, 2.0)]
        large = [row(1, "bf16", 16, 0.8), row(2, "bf16", 100, 0.9), row(3, "bf16", 600, 1.0)]
        tie = [row(1, "fp32", 16, 0.7), row(2, "fp32", 100, 0.7), row(3, "fp32", 600, 0.7)]
        with tempfile.TemporaryDirectory() as tmp:
            draws = []
            for seed, rows in ((8, small + tie), (14, large), (15, tie)):
                path = Path(tmp) / f"draw_{seed}.csv"
                draw_report.write_draw(draw_report.in_draw_order(rows), path)
                draws.append((path, seed))
            sentence = " ".join(draw_report.readme_sentence(draws, tmp).split())
        self.assertIn("bf16 at 89.6 % of cuBLAS bf16 over [seed 14](draw_14.md)'s 3 problems run", sentence)
        self.assertIn("fp32 at 70.0 % of cuBLAS SGEMM over [seed 15](draw_15.md)'s 3 problems run", sentence)
        self.assertNotIn("seed 8", sentence)
        self.assertLess(sentence.index("seed 14"), sentence.index("seed 15"))

    def test_the_dram_bound_of_the_layers_of_few_tokens_on_large_weights(self):
        # Layer GEMMs of 64 tokens or fewer on weights of 16 MB or more count; a plain
        # problem, 65 tokens, or 8 MB of weights do not.
        def layer(index, m, n, share, timing="launches", kind="mlp_up"):
            shaped = {**row(index, "bf16", m, 1.0, timing=timing, n=n, k=4096), "kind": kind}
            seconds = draw_report.dram_bytes(shaped) / 2e12 / share
            return {**shaped, "median_ms": seconds * 1e3, "cublas_median_ms": seconds * 1e3 / 0.9}
        rows = [layer(1, 8, 4096, 0.5), layer(1, 8, 4096, 0.8, "graph"), layer(2, 64, 2048, 0.7),
                layer(3, 65, 4096, 0.1), layer(4, 8, 1024, 0.1), layer(5, 8, 4096, 0.1, kind="plain")]
        markdown = draw_report.draw_markdown(rows, 3, 5, dram_tbps=2.0)
        self.assertIn("Layer GEMMs of M ≤ 64 whose weights are 16 MB or more (2 problems): the median share of "
                      "the DRAM bound 60.0 % (25th percentile 55.0 %; cuBLAS 54.0 %, 49.5 %); by graphs where "
                      "short, 75.0 % (25th percentile 72.5 %; cuBLAS 67.5 %, 65.2 %).", markdown)

    def test_a_track_reports_the_kernels_it_chose(self):
        rows = [row(1, "bf16", 16, 0.5, kernel="14"), row(2, "bf16", 100, 2.0, kernel="20 padded"),
                row(3, "bf16", 5000, 1.0, kernel="20"), row(4, "bf16", 6000, 1.5, kernel="20"),
                row(5, "bf16", 64, None, "refused"), row(1, "fp32-tc", 16, 2.5, kernel="24")]
        markdown = draw_report.draw_markdown(rows, 3, 5)
        self.assertIn("each through tracks bf16 and fp32-tc against cuBLAS", markdown)
        self.assertIn("(% of cuBLAS for track bf16; times SGEMM for track fp32-tc)", markdown)
        self.assertIn("A track runs the kernel of the stage its dispatch chooses", markdown)
        self.assertIn("## Track bf16 (bf16 on Hopper tensor cores): % of cuBLAS bf16 (bf16 inputs)", markdown)
        self.assertIn("## Track fp32-tc (FP32 on tensor cores): times cuBLAS SGEMM (fp32 inputs)", markdown)
        self.assertIn("| M ≤ 256 | 2 | 1 | 0 | 0 | 100.0 % | 65.0 % | 50.0 % (p1, kernel 14) | 50 % | – |", markdown)
        self.assertIn("The kernels track bf16 chose, by band of M: problems run, and their geomean ratio to cuBLAS:",
                      markdown)
        self.assertIn("| kernel | M ≤ 256 | 256 < M < 1024 | M ≥ 1024 | all |", markdown)
        self.assertIn(f"| 20 | – | – | 2: {(1.5 ** 0.5) * 100:.1f} % | 2: {(1.5 ** 0.5) * 100:.1f} % |", markdown)
        self.assertIn("| 14 | 1: 50.0 % | – | – | 1: 50.0 % |", markdown)
        self.assertIn("| 20 padded | 1: 200.0 % | – | – | 1: 200.0 % |", markdown)
        self.assertIn("| 24 | 1: 2.50x | – | – | 1: 2.50x |", markdown)
        self.assertIn("| track bf16 | why | 1 |", markdown)


class RunTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.binary = self.root / "fake_sgemm"
        self.log = self.root / "fake_sgemm.log"
        self.binary.write_text(FAKE_BINARY.format(python=sys.executable, columns=list(results_csv.COLUMNS),
                                                  log=str(self.log), tests=str(REPO_ROOT / "tests")))
        self.binary.chmod(self.binary.stat().st_mode | stat.S_IXUSR)
        self.results = self.root / "results"
        self.out_dir = self.results / results_csv.gpu_slug("Fixture GPU")
        self.out_dir.mkdir(parents=True)
        shutil.copy(CEILINGS, self.out_dir / "ceilings.csv")

    def tearDown(self):
        self.tmp.cleanup()

    def run_draw(self, *arguments, fail="", hang="", timeout=300):
        command = [sys.executable, str(REPO_ROOT / "scripts" / "draw_shapes.py"), "--binary", str(self.binary),
                   "--results-dir", str(self.results), "--seed", "5", *arguments]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "FAKE_FAIL": fail, "FAKE_HANG": hang})

    def test_a_draw_stopped_part_way_keeps_the_problems_it_measured(self):
        count, max_flops = 8, 2e11
        ran = [p for p in draw_problems.draw(5, count) if not draw_problems.skip_reason(p, max_flops)]
        hanging = ran[2]
        with self.assertRaises(subprocess.TimeoutExpired):
            self.run_draw("--count", str(count), "--max-flops", str(max_flops), "--stages", "fp32",
                          hang=f"fp32:{hanging.m}:{hanging.n}:{hanging.k}", timeout=15)
        rows = draw_report.read_draw(self.out_dir / "draw_5.csv")
        kept = {row["index"] for row in rows if row["status"] == "ok"}
        self.assertEqual(kept, {ran[0].index, ran[1].index})

    def test_a_draw_through_a_stand_in_binary(self):
        count, max_flops = 16, 2e11
        problems = draw_problems.draw(5, count)
        skipped = [p for p in problems if draw_problems.skip_reason(p, max_flops)]
        ran = [p for p in problems if p not in skipped]
        self.assertTrue(skipped and any(p.n % 8 for p in ran))
        failing = next(p for p in ran if p.kind != "plain")
        result = self.run_draw("--count", str(count), "--max-flops", str(max_flops), "--timing-short", "graph",
                               fail=f"fp32:{failing.m}:{failing.n}:{failing.k}")
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn(f"{failing.name} track fp32 (launches): C[0][0] = 1", result.stderr)
        calls = [call.split() for call in self.log.read_text().splitlines()]
        first_calls = [call for call in calls if call[-1] == "launches"]
        self.assertEqual(len(first_calls), 3 * len(ran))
        self.assertEqual([call[0] for call in first_calls[:3]], ["bf16", "fp32-tc", "fp32"])
        self.assertEqual(first_calls[0][1:7], ["-m", str(ran[0].m), "-n", str(ran[0].n), "-k", str(ran[0].k)])
        self.assertEqual(first_calls[0][7:], ["--time-budget", "0.25", "--csv", first_calls[0][10], "--timing", "launches"])

        rows = draw_report.read_draw(self.out_dir / "draw_5.csv")
        by_status = {status: [r for r in rows if r["status"] == status] for status in draw_report.STATUSES}
        self.assertEqual(len(by_status["skipped"]), 3 * len(skipped))
        self.assertEqual(by_status["refused"], [])  # a track takes every shape
        self.assertEqual([(r["problem"], r["stage"]) for r in by_status["failed"]], [(failing.name, "fp32")])
        self.assertEqual({r["kernel"] for r in by_status["ok"] if r["stage"] == "bf16"}, {"20", "20 padded"})
        self.assertTrue(all(r["kernel"] == "" for r in by_status["skipped"]))
        # Launches under 100 us (2MNK under 1e10 at the stand-in's 100 TFLOPS) were timed again by graphs.
        graph = [r for r in rows if r["timing"] == "graph"]
        short = [r for r in by_status["ok"] if r["timing"] == "launches" and r["median_ms"] < 0.1]
        self.assertTrue(graph)
        self.assertEqual({(r["index"], r["stage"]) for r in graph}, {(r["index"], r["stage"]) for r in short})
        self.assertEqual(len(calls), len(first_calls) + len(graph))

        markdown = (self.out_dir / "draw_5.md").read_text(encoding="utf-8")
        self.assertIn(f"{count} problems drawn from the seed", markdown)
        self.assertIn("## Track fp32-tc (FP32 on tensor cores): times cuBLAS SGEMM (fp32 inputs)", markdown)
        self.assertIn("The kernels track bf16 chose", markdown)
        self.assertIn(f"| {failing.name} | track fp32 | launches |", markdown)
        self.assertIn("1.8 TB/s", markdown)
        self.assertIn("By CUDA graphs where the first timing's launch took under 100 us", markdown)
        for line in markdown.splitlines():
            if line.startswith("| M ≤ 256 |") and not line.endswith("| – |"):
                self.assertRegex(line, r"\| \d+\.\d % \|$")

        # --no-run rebuilds the same report; a part re-run keeps the other problems' rows, and a stage
        # asked for runs beside the tracks, its refusals rows.
        (self.out_dir / "draw_5.md").unlink()
        result = self.run_draw("--count", str(count), "--max-flops", str(max_flops), "--no-run")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual((self.out_dir / "draw_5.md").read_text(encoding="utf-8"), markdown)
        result = self.run_draw("--count", str(count), "--max-flops", str(max_flops), "--problems", "1-2",
                               "--stages", "fp32")
        self.assertEqual(result.returncode, 0, result.stderr)
        again = draw_report.read_draw(self.out_dir / "draw_5.csv")
        self.assertEqual(len(again), len(rows) - len([r for r in rows if r["index"] <= 2 and r["stage"] == "fp32"]) + 2)
        self.assertEqual([r["index"] for r in again], sorted(r["index"] for r in again))
        result = self.run_draw("--count", str(count), "--max-flops", str(max_flops), "--stages", "20", "24")
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = draw_report.read_draw(self.out_dir / "draw_5.csv")
        refused = [r for r in rows if r["status"] == "refused"]
        self.assertEqual({(r["stage"], r["index"]) for r in refused},
                         {(s, p.index) for p in ran for s in (20, 24) if p.n % 8 or (s == 20 and p.k % 8)})
        self.assertTrue(all(r["reason"].startswith(f"stage {r['stage']} (fake) needs") and r["gpu"] == "Fixture GPU"
                            for r in refused))
        markdown = (self.out_dir / "draw_5.md").read_text(encoding="utf-8")
        self.assertIn("## Stage 20 (`fake`): % of cuBLAS bf16 (bf16 inputs)", markdown)
        self.assertIn("| stage 20 | stage 20 (fake) needs N a multiple of 8 |", markdown)
        self.assertIn("each through stages 20 and 24, and tracks bf16, fp32-tc and fp32 against cuBLAS", markdown)

    def test_no_run_rebuilds_a_draw_from_before_the_tracks(self):
        rows = [row(1, 20, 16, 1.0, name="hopper_tuned"), row(1, 24, 16, 2.0, name="a_in_registers")]
        problem = draw_problems.draw(5, 1)[0]
        rows = [{**r, "problem": problem.name, "m": problem.m, "n": problem.n, "k": problem.k} for r in rows]
        draw_report.write_draw(rows, self.out_dir / "draw_5.csv")
        self.assertNotIn(",kernel,", (self.out_dir / "draw_5.csv").read_text())
        result = self.run_draw("--count", "1", "--no-run")
        self.assertEqual(result.returncode, 0, result.stderr)
        markdown = (self.out_dir / "draw_5.md").read_text(encoding="utf-8")
        self.assertIn("each through stages 20 and 24 against cuBLAS", markdown)
        self.assertIn("## Stage 24 (`a_in_registers`): times cuBLAS SGEMM (fp32 inputs)", markdown)
        self.assertNotIn("track", markdown)

    def test_no_run_refuses_a_csv_the_generator_no_longer_draws(self):
        rows = [row(1, 20, 16, 1.0)]
        draw_report.write_draw(rows, self.out_dir / "draw_5.csv")
        result = self.run_draw("--no-run")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("the generator changed", result.stderr)


if __name__ == "__main__":
    unittest.main()
