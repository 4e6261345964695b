#!/usr/bin/env python3
"""The FP32 problem's accuracy table on this GPU: run sgemm_accuracy and write
results/<gpu>/accuracy.csv and accuracy.md (with --fp8, the FP8 problem's: accuracy_fp8.*).

    python3 scripts/accuracy.py [--sizes 1024 2500 4096 8192] [--shapes 128x6144x4096 ...]
                                [--data uniform wide ...] [--timing blocks]

For each problem (the square sizes, then the shapes M x N x K) and input kind (sgemm --data;
by default every kind but exact): cuBLAS SGEMM on the CUDA cores, cuBLAS on tensor cores
(TF32; FP32 emulated with three bf16 parts a value), stage 10 (the tuned CUDA-core stage),
the fp32 track (stage 10's kernel in the tile and split of K its model chooses) and stages
21-24 (FP32 split into bf16 or fp16 parts on tensor cores), each on its own kernels, and the
fp32-tc track (the kernel the dispatch chooses), each verified against the float64
reference and timed against cuBLAS SGEMM in the same process. The default shapes are where
the fp32-tc track chooses stages 23 and 24, few rows of A (a layer at 128 tokens) and a
narrow C, and where it hands over to the CUDA cores: at most 16 rows, at most 32 columns.
A run replaces the rows of the problems and input kinds it
measured and keeps the others, so the table can be measured in parts (--sizes 1024 4096
--shapes, with no shape, then --sizes 8192), and with --seconds S it starts no problem and
kind after S seconds (sgemm_accuracy --seconds: a call's time limit), keeping those it measured.

With --fp8, the FP8 problem (D = alpha A B^T + beta C, e4m3 A and B with their scales, bf16 D)
in each of its scalings: the fp8 track and cuBLASLt, each against the float64 product of the
quantized operands, and apart from them what the quantization itself costs, that product
against the float64 product of the FP32 values that were quantized.
"""
import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
from results_csv import TIMINGS, read_typed, single_timing  # noqa: E402
from run_tools import run_tool_into_results  # noqa: E402

DATA = {"uniform": "uniform in [-1, 1)", "wide": "magnitudes log-uniform over 1e-3 … 1e3, random signs",
        "exact": "integers in [-8, 8]",
        "graded": "uniform, A's column k scaled by 2^-g and B's row k by 2^g, g in 0 … 40 drawn for each k",
        "outliers": "uniform, with outliers 2^24 times the rest in one row of A in 8 and one column of B in 8, "
                    "in one K index in 128 each, whose partners in the other operand are zero",
        "subnormal": "A (and C) in FP32's subnormal range, B uniform",
        "extremes": "|A| log-uniform over [2^-126, 2^-118), |B| over [2^118, 2^126), random signs",
        "special": "uniform, with about eight each of NaN, +Inf and -Inf a matrix and one -0 in 64",
        "cancelling": "along K in pairs, A's values equal and B's opposite, 2^-13 … 2^-12 apart in magnitude, so "
                      "that each pair of products cancels to that fraction of itself",
        "positive": "A and B uniform in [0, 1): sums that grow along K, their rounding errors of one sign"}
DEFAULT_DATA = ["uniform", "wide", "graded", "outliers", "subnormal", "extremes", "special", "cancelling", "positive"]
# Seconds of timing for each method on each problem and kind: the table is about accuracy,
# and 9 methods x 9 kinds x 8 problems must fit in a few minutes.
DEFAULT_TIME_BUDGET = 0.25
# The squares: two of the tiles' multiples and an odd one (2500, on no tile's multiples).
DEFAULT_SIZES = [1024, 2500, 4096, 8192]
DEFAULT_SHAPES = ["128x6144x4096", "4096x64x4096", "16x4096x4096", "4096x24x4096"]
# The FP8 table's: a square, and a layer of DeepGEMM's at 64 tokens; the kinds that reach the
# quantization (subnormal and extreme data put the scales outside FP32's normal range).
DEFAULT_FP8_SIZES = [4096]
DEFAULT_FP8_SHAPES = ["64x7168x2048"]
DEFAULT_FP8_DATA = ["uniform", "wide", "graded", "outliers", "special", "cancelling"]
# The methods of the summary: stages 22-24 and 32, and the fp32-tc track, which chooses among
# stages 22-24 and 10.
SPLIT_STAGES, SGEMM = ("stage 22 ", "stage 23 ", "stage 24 ", "stage 32 ", "track fp32-tc"), "cuBLAS SGEMM"


def read_rows(path):
    return read_typed(path, {
        "size": lambda text: int(text) if text.isdigit() else text,  # N, or MxNxK
        **dict.fromkeys(("tflops", "sgemm_tflops", "ratio_to_sgemm", "normwise_error", "worst_element_error"), float),
        # absent from tables made before the special kind
        **dict.fromkeys(("wrong_class", "non_finite"), lambda text: int(text or 0))})


def problems_in_order(rows):
    """The squares by size, then the other shapes in the order measured."""
    problems = list(dict.fromkeys(r["size"] for r in rows))
    return sorted(p for p in problems if isinstance(p, int)) + [p for p in problems if not isinstance(p, int)]


def split_stages_summary(rows, kinds):
    """Stages 22-24 and the fp32-tc track beside cuBLAS SGEMM on the same inputs: speed, and each
    error over SGEMM's."""
    by_key = {(r["size"], r["data"], r["method"]): r for r in rows}
    methods = [m for m in dict.fromkeys(r["method"] for r in rows) if m.startswith(SPLIT_STAGES)]
    lines = ["| problem | data | stage or track | × SGEMM | normwise error / SGEMM's | worst element / SGEMM's | "
             "wrong class |",
             "| ---: | :--- | :--- | ---: | ---: | ---: | ---: |"]
    for problem in problems_in_order(rows):
        for kind in kinds:
            sgemm = by_key.get((problem, kind, SGEMM))
            for method in sorted(methods):
                stage = by_key.get((problem, kind, method))
                if not stage or not sgemm:
                    continue

                def relative(key):
                    return f"{stage[key] / sgemm[key]:.2f}" if sgemm[key] > 0 else ("=" if stage[key] == 0 else "∞")
                lines.append(f"| {problem} | {kind} | {method.split()[1]} | {stage['ratio_to_sgemm']:.2f} | "
                             f"{relative('normwise_error')} | {relative('worst_element_error')} | "
                             f"{stage['wrong_class']} of {stage['non_finite']} |")
    return lines if len(lines) > 2 else []


def accuracy_markdown(rows):
    timing = single_timing(rows)
    kinds = list(dict.fromkeys(r["data"] for r in rows))
    lines = [
        f"The FP32 problem (FP32 A, B and C, alpha = 1, beta = 0) on **{rows[0]['gpu']}**, each way of computing "
        "it verified against the float64 reference on the same inputs and timed against cuBLAS SGEMM "
        f"{TIMINGS[timing]} (`scripts/accuracy.py --timing {timing}`). Inputs: "
        + "; ".join(f"{kind}, {DATA.get(kind, kind)}" for kind in kinds) + ". "
        "Normwise error: ‖C − R‖ / ‖R‖ (Frobenius). Worst element: max |C − R| over the magnitude the "
        "element's dot product carried, |A||B|, which cancellation cannot inflate. FP32 budget: whether "
        "both stay within what FP32 arithmetic allows (docs/measuring.md); the tensor-core paths of cuBLAS "
        "are shown, not held to it. Wrong class: elements that are NaN or ±Inf where the reference is not, "
        "or the other way round, of those that are NaN or ±Inf in the reference; the errors are over the "
        "elements finite in both.",
        "",
    ]
    summary = split_stages_summary(rows, kinds)
    if summary:
        lines += ["The FP32 tensor-core stages beside cuBLAS SGEMM on the same inputs (below 1.00: more accurate "
                  "than SGEMM). Each stage runs its own kernels on every problem; the fp32-tc track runs the one "
                  "dispatch/fp32_tc.cpp chooses for the problem (stage 24's for a narrow C, 23's for few rows of A "
                  "or a small C, 22's for the rest):", "", *summary, "", "Every method:", ""]
    lines += ["| problem | data | method | TFLOPS | × SGEMM | normwise error | worst element | wrong class | "
              "FP32 budget |",
              "| ---: | :--- | :--- | ---: | ---: | ---: | ---: | ---: | :---: |"]
    problems = problems_in_order(rows)
    for r in sorted(rows, key=lambda r: (problems.index(r["size"]), kinds.index(r["data"]))):
        within = "✓" if r["verified"] == "true" else "✗"
        lines.append(f"| {r['size']} | {r['data']} | {r['method']} | {r['tflops']:.1f} | {r['ratio_to_sgemm']:.2f} | "
                     f"{r['normwise_error']:.2e} | {r['worst_element_error']:.2e} | "
                     f"{r['wrong_class']} of {r['non_finite']} | {within} |")
    return "\n".join(lines) + "\n"


def fp8_accuracy_markdown(rows):
    """The FP8 table: for each problem, kind and scaling, the track's, cuBLASLt's and the
    quantization's errors side by side (their methods "track fp8 S", "cuBLASLt FP8 S",
    "quantization S")."""
    timing = single_timing(rows)
    kinds = list(dict.fromkeys(r["data"] for r in rows))
    by_key = {(r["size"], r["data"], r["method"]): r for r in rows}
    scalings = list(dict.fromkeys(r["method"].removeprefix("track fp8 ") for r in rows
                                  if r["method"].startswith("track fp8 ")))
    lines = [
        f"The FP8 problem (D = alpha A B^T, e4m3 A and B with their scales, bf16 D, alpha = 1) on "
        f"**{rows[0]['gpu']}**, in each scaling cuBLASLt offers on Hopper (tensor: one scale a tensor; "
        "1x128-128x128: A one a row per 128 of K, B one a 128 x 128 block, DeepSeek-V3's; 1x128-1x128), "
        "the inputs drawn as the FP32 problem's and quantized as the recipe does (scale = amax / 448 a "
        "block). The fp8 track and cuBLASLt are each checked against the float64 product of the quantized "
        f"operands, the track timed against cuBLASLt {TIMINGS[timing]} (`scripts/accuracy.py --fp8 "
        f"--timing {timing}`); the quantization column is that float64 product against the float64 product "
        "of the FP32 values before quantization: the error the format costs, which no kernel can take "
        "back. Inputs: " + "; ".join(f"{kind}, {DATA.get(kind, kind)}" for kind in kinds) + ". "
        "Normwise error: ‖D − R‖ / ‖R‖ (Frobenius). Worst element: max |D − R| over the magnitude the "
        "element's dot product carried. FP8 budget: whether the track stays within its promoted budget "
        "(docs/measuring.md). Wrong class: the track's elements that are NaN or ±Inf where the reference is "
        "not, or the other way round, of those that are NaN or ±Inf in the reference (NaN stays NaN, ±Inf "
        "saturates to ±448 times its block's scale).",
        "",
        "| problem | data | scaling | TFLOPS | × cuBLASLt | normwise: track | cuBLASLt | quantization | "
        "worst element: track | cuBLASLt | quantization | wrong class | FP8 budget |",
        "| ---: | :--- | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: |",
    ]
    for problem in problems_in_order(rows):
        for kind in kinds:
            for scaling in scalings:
                track = by_key.get((problem, kind, f"track fp8 {scaling}"))
                if track is None:
                    continue
                cublaslt = by_key.get((problem, kind, f"cuBLASLt FP8 {scaling}"), {})
                quantization = by_key.get((problem, kind, f"quantization {scaling}"), {})
                error = lambda row, key: f"{row[key]:.2e}" if key in row else "–"  # noqa: E731
                lines.append(
                    f"| {problem} | {kind} | {scaling} | {track['tflops']:.1f} | {track['ratio_to_sgemm']:.2f} | "
                    f"{error(track, 'normwise_error')} | {error(cublaslt, 'normwise_error')} | "
                    f"{error(quantization, 'normwise_error')} | {error(track, 'worst_element_error')} | "
                    f"{error(cublaslt, 'worst_element_error')} | {error(quantization, 'worst_element_error')} | "
                    f"{track['wrong_class']} of {track['non_finite']} | "
                    f"{'✓' if track['verified'] == 'true' else '✗'} |")
    return "\n".join(lines) + "\n"


def output_stem(timing, fp8=False):
    return "accuracy" + ("_fp8" if fp8 else "") + ("_in_turns" if timing == "blocks" else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=str(REPO / "build" / "sgemm_accuracy"))
    parser.add_argument("--fp8", action="store_true",
                        help="the FP8 problem: the fp8 track and cuBLASLt in each scaling, and the quantization")
    parser.add_argument("--sizes", type=int, nargs="+", help="square sizes (default 1024 2500 4096 8192; --fp8: 4096)")
    parser.add_argument("--shapes", nargs="*", metavar="MxNxK",
                        help=f"problems after the squares (default {' '.join(DEFAULT_SHAPES)}; --fp8: "
                             f"{' '.join(DEFAULT_FP8_SHAPES)})")
    parser.add_argument("--data", nargs="+", choices=sorted(DATA), help="input kinds (default: every kind but "
                        f"exact; --fp8: {' '.join(DEFAULT_FP8_DATA)})")
    parser.add_argument("--results-dir", default=str(REPO / "results"))
    parser.add_argument("--timing", choices=sorted(TIMINGS), default="launches",
                        help="how each and cuBLAS SGEMM take turns (sgemm --timing)")
    parser.add_argument("--time-budget", type=float, default=DEFAULT_TIME_BUDGET,
                        help="seconds of timing for each method, problem and kind (sgemm --time-budget)")
    parser.add_argument("--seconds", type=float,
                        help="start no problem and kind after this many seconds (a time limit): the table keeps "
                             "the rows of those that ran, and the others it had")
    args = parser.parse_args()
    sizes = args.sizes or (DEFAULT_FP8_SIZES if args.fp8 else DEFAULT_SIZES)
    shapes = args.shapes if args.shapes is not None else (DEFAULT_FP8_SHAPES if args.fp8 else DEFAULT_SHAPES)
    data = args.data or (DEFAULT_FP8_DATA if args.fp8 else DEFAULT_DATA)
    return run_tool_into_results(
        args.binary, [*(["--fp8"] if args.fp8 else []), "--sizes", *map(str, sizes),
                      *(["--shapes", *shapes] if shapes else []), "--data", *data, "--timing", args.timing,
                      "--time-budget", str(args.time_budget),
                      *(["--seconds", str(args.seconds)] if args.seconds else [])],
        args.results_dir, output_stem(args.timing, args.fp8), read_rows, bool,
        fp8_accuracy_markdown if args.fp8 else accuracy_markdown, problem_of=lambda row: (row["size"], row["data"]))


if __name__ == "__main__":
    sys.exit(main())
