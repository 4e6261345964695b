#!/usr/bin/env python3
"""The shape suite: the problems people run, not only squares. Each shape of the list
below goes through each track (bf16, fp32-tc, fp32: `./sgemm bf16 -m M -n N -k K`, which
runs the kernel of the stage its dispatch chooses for the shape), or through the stages
asked for, against cuBLAS at the run's precision in the same process, launch by launch,
verified against float64 like any run; the rows go to results/<gpu>/shapes.csv (the
columns of results.csv, then the shape's name and group), with a table (shapes.md) and a
chart (shapes.png).

    python3 scripts/shapes.py [--groups square layer skinny k-heavy] [--shapes qkv_128 ...]
        [--stages bf16 fp32-tc fp32 | 20 ...] [--binary ./sgemm]
        [--results-dir results] [--time-budget 0.5] [--no-run [--gpu SLUG]]

A run replaces the rows of the shapes and runs (tracks or stages) it measured and keeps
the others, so a group, a track or a stage can be re-run alone. --no-run rebuilds shapes.md
and shapes.png from the committed shapes.csv. Exits non-zero if a run failed verification,
was refused or the binary failed.
"""

import argparse
import sys
import tempfile
from pathlib import Path

try:
    import results_charts
    import results_csv
    import results_tables
    from shape_suite import GROUPS, LAYERS, MODEL, TOKENS, suite
    from stage_runs import (DEFAULT_TRACKS, description, executable, exit_status, fp8_reference_note, geomean,
                            kernel_note, kernels_chosen, ratio_text, reference, repo_path, results_folder, run_argument,
                            run_label, run_problem, runs_in_order, runs_words, tracks_note)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
except ModuleNotFoundError as missing:
    sys.exit(f"error: Python module '{missing.name}' is missing; "
             "install matplotlib (python3 -m pip install matplotlib)")

SHAPE_COLUMNS = ("shape", "group")
CSV_NAME, TABLE_NAME, CHART_NAME = "shapes.csv", "shapes.md", "shapes.png"

# Bands of M over which the summary takes its geomean and worst.
BANDS = (("M ≤ 256", lambda row: row["m"] <= 256), ("M ≥ 1024", lambda row: row["m"] >= 1024),
         ("M, N ≥ 1024", lambda row: row["m"] >= 1024 and row["n"] >= 1024))


def parse_args(argv):
    parser = argparse.ArgumentParser(description="Run the shape suite and write results/<gpu>/shapes.*")
    parser.add_argument("--groups", nargs="+", choices=GROUPS, default=list(GROUPS),
                        help="which groups of shapes to run (default: all)")
    parser.add_argument("--shapes", nargs="+", metavar="NAME",
                        help="only these shapes of the groups (names as in shapes.md)")
    parser.add_argument("--stages", nargs="+", type=run_argument, default=list(DEFAULT_TRACKS), metavar="RUN",
                        help="tracks (bf16, fp32-tc, fp32, fp8) or stage numbers to run "
                             "(default: bf16, fp32-tc and fp32)")
    parser.add_argument("--binary", default="sgemm", help="sgemm executable (default: ./sgemm)")
    parser.add_argument("--results-dir", default="results", help="outputs go to RESULTS_DIR/<gpu-slug>/")
    parser.add_argument("--time-budget", type=float, default=0.5,
                        help="seconds per timing measurement, passed to sgemm (default 0.5)")
    parser.add_argument("--no-run", action="store_true", help="run nothing: rebuild from shapes.csv")
    parser.add_argument("--gpu", help="with --no-run: the folder under RESULTS_DIR")
    return parser.parse_args(argv)


def run_suite(binary, shapes, runs, time_budget, scratch):
    """Run `runs` on every shape; return (rows with their shape and group, failures)."""
    rows, failures = [], []
    for index, (name, group, m, n, k) in enumerate(shapes, start=1):
        for run in runs:
            print(f"[{index}/{len(shapes)}] {name} ({m} x {n} x {k}) {run_label(run)}", flush=True)
            status, why, row = run_problem(binary, run, m, n, k, time_budget, scratch / f"{name}_{run}.csv")
            if row:
                rows.append({**row, "shape": name, "group": group})
            if status != "ok":
                failures.append(f"{name} {run_label(run)}: {status}, {why}")
    return rows, failures


def in_suite_order(rows):
    """The rows by shape in the suite's order, each shape's runs in the order the rows first name them."""
    order = {name: index for index, (name, *_) in enumerate(suite())}
    run_order = {run: index for index, run in enumerate(runs_in_order(rows))}
    return sorted(rows, key=lambda row: (order.get(row["shape"], len(order)), row["shape"], run_order[row["stage"]]))


def summary(rows, run):
    """[(band, shapes, geomean, worst row)] of one run's ratios: all shapes, then each band."""
    run_rows = [row for row in rows if row["stage"] == run]
    out = []
    for band, member in (("all shapes", lambda row: True), *BANDS):
        chosen = [row for row in run_rows if member(row)]
        if chosen:
            out.append((band, len(chosen), geomean([row["ratio_to_cublas"] for row in chosen]),
                        min(chosen, key=lambda row: row["ratio_to_cublas"])))
    return out


def shapes_markdown(rows):
    gpus = sorted({row["gpu"] for row in rows})
    runs = runs_in_order(rows)
    lines = [f"# The shape suite on {', '.join(gpus)}", "",
             f"Generated by `scripts/shapes.py` (`make shapes`) from `{CSV_NAME}`: {runs_words(runs)}, each "
             f"against cuBLAS at its precision{fp8_reference_note(rows)}, in the same process, launch by launch; "
             f"every row verified against float64 (✓). {tracks_note(runs)}The layer shapes are {MODEL}'s: "
             "C = A B with A = tokens x K, B = K x N (the weights); M is the token count.", "",
             "## Summary: ratio to cuBLAS, geomean and worst", "",
             "| run | what | vs | band | shapes | geomean | worst |", "|:--|:--|:--|:--|--:|--:|:--|"]
    for run in runs:
        for band, count, mean, worst in summary(rows, run):
            lines.append(f"| {run_label(run)} | {description(run, rows)} | {reference(run, rows)} | {band} | {count} | "
                         f"{ratio_text(run, mean)} | {ratio_text(run, worst['ratio_to_cublas'])} "
                         f"({worst['shape']}{kernel_note(worst)}) |")
    chosen = [(run, kernel, members) for run in runs for kernel, members in kernels_chosen(rows, run)]
    if chosen:
        lines += ["", "## The kernels the tracks chose", "", "| track | kernel | shapes | geomean | worst |",
                  "|:--|:--|--:|--:|:--|"]
        for run, kernel, members in chosen:
            worst = min(members, key=lambda row: row["ratio_to_cublas"])
            lines.append(f"| {run} | {kernel} | {len(members)} | "
                         f"{ratio_text(run, geomean([row['ratio_to_cublas'] for row in members]))} | "
                         f"{ratio_text(run, worst['ratio_to_cublas'])} ({worst['shape']}) |")
    by_shape = {}
    for row in rows:
        by_shape.setdefault(row["shape"], {})[row["stage"]] = row
    lines += ["", "## Every shape: ratio to cuBLAS (TFLOPS; for a track, the stage whose kernel ran it)", "",
              "| shape | group | M | N | K | " + " | ".join(run_label(run) for run in runs) + " |",
              "|:--|:--|--:|--:|--:|" + "--:|" * len(runs)]
    for name in dict.fromkeys(row["shape"] for row in in_suite_order(rows)):
        first = next(iter(by_shape[name].values()))
        cells = []
        for run in runs:
            row = by_shape[name].get(run)
            mark = {"true": " ✓", "false": " ✗", "skipped": ""}[row["verified"]] if row else ""
            cells.append(f"{ratio_text(run, row['ratio_to_cublas'])} ({row['tflops']:.1f}{kernel_note(row)}){mark}"
                         if row else results_tables.MISSING)
        lines.append(f"| {name} | {first['group']} | {first['m']} | {first['n']} | {first['k']} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_shapes(rows, path):
    """One panel per run: % of cuBLAS against M, a line per layer, markers for the rest."""
    runs = runs_in_order(rows)
    figure = Figure(figsize=(6.0 * len(runs), 5.0))
    FigureCanvasAgg(figure)
    for index, run in enumerate(runs, start=1):
        axes = figure.add_subplot(1, len(runs), index)
        run_rows = [row for row in rows if row["stage"] == run]
        for number, (layer, _, _) in enumerate(LAYERS):
            series = sorted((row for row in run_rows if row["group"] == "layer" and row["shape"].startswith(layer + "_")),
                            key=lambda row: row["m"])
            if series:
                axes.plot([row["m"] for row in series], [row["ratio_to_cublas"] * 100 for row in series],
                          marker=results_charts.MARKERS[number % len(results_charts.MARKERS)], label=layer)
        for group, marker in (("square", "s"), ("skinny", "v"), ("k-heavy", "D")):
            points = [row for row in run_rows if row["group"] == group]
            if points:
                axes.scatter([row["m"] for row in points], [row["ratio_to_cublas"] * 100 for row in points],
                             marker=marker, color="0.3", label=group, zorder=3)
        axes.axhline(100, color="black", linestyle="--", linewidth=1)
        axes.set_xscale("log", base=2)
        axes.set_xlabel("M (tokens for the layer shapes)")
        axes.set_ylabel(f"% of {reference(run, rows)}")
        axes.set_title(f"{run_label(run)}: {description(run, rows).strip('`')}")
        axes.grid(alpha=0.3)
        axes.legend(fontsize="small")
    figure.suptitle(f"The shape suite on {', '.join(sorted({row['gpu'] for row in rows}))} ({MODEL} layers)")
    figure.tight_layout()
    figure.savefig(path, dpi=results_charts.DPI)


def main(argv=None):
    args = parse_args(argv)
    results_dir = repo_path(args.results_dir)
    failures = []
    if args.no_run:
        out_dir = results_folder(results_dir, args.gpu, CSV_NAME)
        rows = results_csv.read_rows(out_dir / CSV_NAME, SHAPE_COLUMNS)
    else:
        binary = executable(args.binary)
        shapes = [shape for shape in suite() if shape[1] in args.groups and (not args.shapes or shape[0] in args.shapes)]
        unknown = set(args.shapes or ()) - {shape[0] for shape in shapes}
        if unknown:
            sys.exit(f"error: no shape {', '.join(sorted(unknown))} in the groups chosen")
        with tempfile.TemporaryDirectory(prefix="sgemm-shapes-") as scratch:
            rows, failures = run_suite(binary, shapes, args.stages, args.time_budget, Path(scratch))
        try:
            out_dir = results_dir / results_csv.gpu_slug(results_csv.single_gpu(rows))
        except ValueError as error:
            sys.exit(f"error: {error}; see the output above")
        out_dir.mkdir(parents=True, exist_ok=True)
        old_path = out_dir / CSV_NAME
        old_rows = results_csv.read_rows(old_path, SHAPE_COLUMNS) if old_path.exists() else []
        rows = in_suite_order(results_csv.merged(rows, old_rows, key=lambda row: (row["shape"], row["stage"])))
        results_csv.write_rows(rows, old_path, SHAPE_COLUMNS)
        print(f"wrote {old_path}")
    (out_dir / TABLE_NAME).write_text(shapes_markdown(rows), encoding="utf-8")
    plot_shapes(rows, out_dir / CHART_NAME)
    print(f"wrote {out_dir / TABLE_NAME}\nwrote {out_dir / CHART_NAME}")
    return exit_status(failures)


if __name__ == "__main__":
    sys.exit(main())
