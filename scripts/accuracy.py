#!/usr/bin/env python3
"""The FP32 problem's accuracy table on this GPU: run sgemm_accuracy and write
results/<gpu>/accuracy.csv and accuracy.md.

    python3 scripts/accuracy.py [--sizes 1024 4096 8192] [--data uniform wide ...] [--timing blocks]

For each size and input kind (sgemm --data; by default every kind but exact): cuBLAS SGEMM
on the CUDA cores, cuBLAS on tensor cores (TF32; FP32 emulated with three bf16 parts a
value), stage 10 (the tuned CUDA-core stage) and stages 21 and 22 (FP32 split into bf16
or fp16 parts on tensor cores), each verified against the float64 reference and timed
against cuBLAS SGEMM in the same process.
"""
import argparse
import csv
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
from sgemm_results import TIMINGS, run_tool_into_results, single_timing  # noqa: E402

DATA = {"uniform": "uniform in [-1, 1)", "wide": "magnitudes log-uniform over 1e-3 … 1e3, random signs",
        "exact": "integers in [-8, 8]",
        "graded": "uniform, A's column k scaled by 2^-g and B's row k by 2^g, g in 0 … 40 drawn for each k",
        "outliers": "uniform, with outliers 2^24 times the rest in one row of A in 8 and one column of B in 8, "
                    "in one K index in 128 each, whose partners in the other operand are zero",
        "subnormal": "A (and C) in FP32's subnormal range, B uniform",
        "extremes": "|A| log-uniform over [2^-126, 2^-118), |B| over [2^118, 2^126), random signs",
        "special": "uniform, with about eight each of NaN, +Inf and -Inf a matrix and one -0 in 64"}
DEFAULT_DATA = ["uniform", "wide", "graded", "outliers", "subnormal", "extremes", "special"]
STAGE_22, SGEMM = "stage 22 split_fp16", "cuBLAS SGEMM"


def read_rows(path):
    with open(path, newline="") as file:
        rows = list(csv.DictReader(file))
    for row in rows:
        row["size"] = int(row["size"])
        for key in ("tflops", "sgemm_tflops", "ratio_to_sgemm", "normwise_error", "worst_element_error"):
            row[key] = float(row[key])
        for key in ("wrong_class", "non_finite"):  # absent from tables made before the special kind
            row[key] = int(row.get(key) or 0)
    return rows


def stage_22_summary(rows, kinds):
    """Stage 22 beside cuBLAS SGEMM on the same inputs: speed, and each error over SGEMM's."""
    by_key = {(r["size"], r["data"], r["method"]): r for r in rows}
    lines = ["| N | data | × SGEMM | normwise error / SGEMM's | worst element / SGEMM's | wrong class |",
             "| ---: | :--- | ---: | ---: | ---: | ---: |"]
    for size in sorted({r["size"] for r in rows}):
        for kind in kinds:
            stage, sgemm = by_key.get((size, kind, STAGE_22)), by_key.get((size, kind, SGEMM))
            if not stage or not sgemm:
                continue

            def relative(key):
                return f"{stage[key] / sgemm[key]:.2f}" if sgemm[key] > 0 else ("=" if stage[key] == 0 else "∞")
            lines.append(f"| {size} | {kind} | {stage['ratio_to_sgemm']:.2f} | {relative('normwise_error')} | "
                         f"{relative('worst_element_error')} | {stage['wrong_class']} of {stage['non_finite']} |")
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
    summary = stage_22_summary(rows, kinds)
    if summary:
        lines += ["Stage 22 beside cuBLAS SGEMM on the same inputs (below 1.00: more accurate than SGEMM):", "",
                  *summary, "", "Every method:", ""]
    lines += ["| N | data | method | TFLOPS | × SGEMM | normwise error | worst element | wrong class | FP32 budget |",
              "| ---: | :--- | :--- | ---: | ---: | ---: | ---: | ---: | :---: |"]
    for r in sorted(rows, key=lambda r: (r["size"], kinds.index(r["data"]))):
        within = "✓" if r["verified"] == "true" else "✗"
        lines.append(f"| {r['size']} | {r['data']} | {r['method']} | {r['tflops']:.1f} | {r['ratio_to_sgemm']:.2f} | "
                     f"{r['normwise_error']:.2e} | {r['worst_element_error']:.2e} | "
                     f"{r['wrong_class']} of {r['non_finite']} | {within} |")
    return "\n".join(lines) + "\n"


def output_stem(timing):
    return "accuracy" + ("_in_turns" if timing == "blocks" else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=str(REPO / "build" / "sgemm_accuracy"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096, 8192])
    parser.add_argument("--data", nargs="+", default=DEFAULT_DATA, choices=sorted(DATA))
    parser.add_argument("--results-dir", default=str(REPO / "results"))
    parser.add_argument("--timing", choices=sorted(TIMINGS), default="launches",
                        help="how each and cuBLAS SGEMM take turns (sgemm --timing)")
    args = parser.parse_args()
    return run_tool_into_results(
        args.binary, ["--sizes", *map(str, args.sizes), "--data", *args.data, "--timing", args.timing],
        args.results_dir, output_stem(args.timing), read_rows, bool, accuracy_markdown)


if __name__ == "__main__":
    sys.exit(main())
