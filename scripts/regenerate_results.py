#!/usr/bin/env python3
"""Run every sgemm stage at several sizes, then rebuild results/<gpu>/ and the README block.

    python3 scripts/regenerate_results.py [--sizes 1024 2048 4096 8192]
        [--binary ./sgemm] [--results-dir results] [--readme README.md]
        [--no-readme] [--extra-args ARG ...]

Relative paths are resolved against the repository root, so this runs from any
directory. Exits non-zero if any stage failed verification or the binary failed,
after writing whatever results it did collect.
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import sgemm_results
    import worklog
except ModuleNotFoundError as missing:
    sys.exit(f"error: Python module '{missing.name}' is missing; "
             "install matplotlib (python3 -m pip install matplotlib)")

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SIZES = (1024, 2048, 4096, 8192)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Run ./sgemm all <N> for each size and regenerate the results "
                    "table, charts and README block.")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES),
                        metavar="N", help="square problem sizes, run in this order")
    parser.add_argument("--binary", default="./sgemm",
                        help="sgemm executable (default: ./sgemm)")
    parser.add_argument("--results-dir", default="results",
                        help="outputs go to RESULTS_DIR/<gpu-slug>/ (default: results)")
    parser.add_argument("--readme", default="README.md",
                        help="README whose results block is refreshed (default: README.md)")
    parser.add_argument("--no-readme", action="store_true",
                        help="leave the README untouched")
    parser.add_argument("--extra-args", nargs=argparse.REMAINDER, default=[],
                        metavar="ARG",
                        help="passed on to the binary after 'all N --csv FILE'; "
                             "must be the last option")
    return parser.parse_args(argv)


def repo_path(path):
    path = Path(path)
    return path if path.is_absolute() else REPO_ROOT / path


def run_sizes(binary, sizes, extra_args, scratch_dir):
    """Run the binary once per size; return (size, exit code, rows) for each."""
    runs = []
    for index, size in enumerate(sizes, start=1):
        print(f"[size {index}/{len(sizes)}] N={size}", flush=True)
        # One file per size, so a crash mid-run cannot corrupt the other sizes' rows.
        csv_path = scratch_dir / f"sgemm_{size}.csv"
        command = [str(binary), "all", str(size), "--csv", str(csv_path), *extra_args]
        # stdout and stderr are inherited so progress reaches the user as it is printed.
        exit_code = subprocess.run(command, cwd=REPO_ROOT, check=False).returncode
        runs.append((size, exit_code, rows_if_written(csv_path)))
    return runs


def rows_if_written(csv_path):
    if not csv_path.exists() or csv_path.stat().st_size == 0:
        return []
    return sgemm_results.read_rows(csv_path)


def failure_lines(runs, binary_name):
    lines = []
    for size, exit_code, rows in runs:
        failed = [row for row in rows if row["verified"] == "false"]
        for row in failed:
            lines.append(f"N={size}: stage {row['stage']} {row['name']} failed "
                         f"verification ({describe_error(row)})")
        if exit_code != 0 and not failed:
            lines.append(f"N={size}: {binary_name} exited with code {exit_code} "
                         "without a failed-verification row; see its output above")
    return lines


def describe_error(row):
    worst = row["worst_error_over_budget"]
    return "no error recorded" if worst is None else f"worst error {worst:.3g}x its budget"


def single_gpu(rows):
    gpus = sorted({row["gpu"] for row in rows})
    if len(gpus) != 1:
        raise ValueError(f"expected rows from one GPU, got {', '.join(gpus)}")
    return gpus[0]


def display(path):
    return path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path


def main(argv=None):
    args = parse_args(argv)
    binary = repo_path(args.binary)
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        sys.exit(f"error: {binary} not found or not executable; run make first")

    with tempfile.TemporaryDirectory(prefix="sgemm-results-") as scratch:
        runs = run_sizes(binary, args.sizes, args.extra_args, Path(scratch))
    rows = [row for _, _, size_rows in runs for row in size_rows]
    if not rows:
        sys.exit(f"error: {binary.name} wrote no result rows; see its output above")

    readme = None if args.no_readme else repo_path(args.readme)
    try:
        out_dir = repo_path(args.results_dir) / sgemm_results.gpu_slug(single_gpu(rows))
        written = sgemm_results.write_outputs(rows, out_dir, readme)
    except (ValueError, OSError) as error:
        sys.exit(f"error: {error}")
    if readme is not None:  # the worklog sits beside the README and cites the same results
        worklog_path = readme.parent / "WORKLOG.md"
        worklog_path.write_text(worklog.worklog(REPO_ROOT / "kernels", out_dir, readme.parent))
        written.append(worklog_path)
    for path in written:
        print(f"wrote {display(path)}")

    failures = failure_lines(runs, binary.name)
    if failures:
        print(f"FAILED ({len(failures)}):", *failures, sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
