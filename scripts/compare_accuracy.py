#!/usr/bin/env python3
"""sgemm_accuracy's rows from several builds side by side: for each problem, input kind and
method, each build's speed over cuBLAS SGEMM (the mean of its runs, each against SGEMM in its
own process) and its normwise error over SGEMM's on the same inputs.

    python3 scripts/compare_accuracy.py --run main=a.csv,a2.csv --run fused=b.csv,b2.csv [--out table.md]

A build's runs of a problem and kind are averaged (rounds taken in turns with the other
builds'); a problem, kind and method that a build did not measure is left blank.
"""
import argparse
import csv
import sys
from pathlib import Path

SGEMM = "cuBLAS SGEMM"


def read_run(paths):
    """(problem, kind, method) -> ([ratio to SGEMM], [normwise error over SGEMM's]) over the runs."""
    found = {}
    for path in paths:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        sgemm = {(r["size"], r["data"]): float(r["normwise_error"]) for r in rows if r["method"] == SGEMM}
        for r in rows:
            if r["method"] == SGEMM:
                continue
            key = (r["size"], r["data"], r["method"])
            ratios, errors = found.setdefault(key, ([], []))
            ratios.append(float(r["ratio_to_sgemm"]))
            reference = sgemm.get((r["size"], r["data"]))
            if reference:
                errors.append(float(r["normwise_error"]) / reference)
    return found


def mean(values):
    return sum(values) / len(values) if values else None


def comparison_markdown(runs):
    """runs: [(label, found)] in column order."""
    keys = list(dict.fromkeys(key for _, found in runs for key in found))
    labels = [label for label, _ in runs]
    lines = ["| problem | data | method | " + " | ".join(f"{label} × SGEMM" for label in labels) + " | " +
             " | ".join(f"{label} error / SGEMM's" for label in labels) + " |",
             "| ---: | :--- | :--- |" + " ---: |" * (2 * len(labels))]
    for key in keys:
        speeds, errors = [], []
        for _, found in runs:
            ratios, error_ratios = found.get(key, ([], []))
            speed, error = mean(ratios), mean(error_ratios)
            speeds.append("" if speed is None else f"{speed:.2f}")
            errors.append("" if error is None else f"{error:.2f}")
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(speeds) + " | " + " | ".join(errors) + " |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", required=True, metavar="LABEL=CSV[,CSV...]",
                        help="a build's label and its sgemm_accuracy CSVs")
    parser.add_argument("--out", help="write the table here (default: standard output)")
    args = parser.parse_args()
    runs = []
    for run in args.run:
        label, _, paths = run.partition("=")
        if not label or not paths:
            parser.error(f"--run {run}: expected LABEL=CSV[,CSV...]")
        runs.append((label, read_run(paths.split(","))))
    table = comparison_markdown(runs)
    if args.out:
        Path(args.out).write_text(table)
    else:
        sys.stdout.write(table)


if __name__ == "__main__":
    main()
