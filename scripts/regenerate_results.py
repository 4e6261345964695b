#!/usr/bin/env python3
"""Measure this GPU's ceilings (sgemm peak) and run every sgemm stage at several sizes,
then rebuild results/<gpu>/ (results and ceilings CSVs, tables, charts, the roofline),
the README block, each chapter's headline figures (the sentence its Measured paragraph
opens with, in kernels/NN_*.cu: scripts/worklog.py) and WORKLOG.md.

    python3 scripts/regenerate_results.py [--sizes 1024 2048 4096 8192]
        [--turns-sizes 4096 8192] [--stages S ...] [--binary ./sgemm] [--results-dir results]
        [--readme README.md] [--kernels kernels] [--no-readme]
        [--stale | --ceilings-only | --no-run [--gpu SLUG] | --rows CSV ...] [--extra-args ARG ...]

Every stage runs launch by launch with cuBLAS at each of --sizes (results.csv), then
again in turns (--timing blocks) at each of --turns-sizes (results_in_turns.csv, whose
table shows the tensor-core stages, where the two timings differ).

Every run replaces the rows it measured in the CSVs already in results/<gpu>/ and keeps
the others. --stages runs only those stages (each on its own, `sgemm <stage> N`): the
Hopper stages add N = 16384 this way, where the early stages would take minutes, and a
plain run at the default sizes keeps those rows.

--stale runs, after the ceilings, only the stages and sizes whose rows in results.csv or
results_in_turns.csv measured sources that have changed since (scripts/check_results.py;
make results STALE=1). --ceilings-only measures the ceilings but runs no stage; --no-run runs nothing and
rebuilds everything from the CSVs already in results/<gpu>/ (no GPU needed). Both
rebuild from the results.csv there. --rows runs nothing either, but first merges the rows
of CSVs that `sgemm ... --csv` wrote elsewhere (a GPU machine without matplotlib), each by
its timing: launch by launch into results.csv, in turns (--timing blocks) into
results_in_turns.csv. Relative paths are resolved against the repository
root, so this runs from any directory. --no-readme leaves the README, the chapters and
WORKLOG.md as they are. Exits non-zero if any stage failed verification or the binary
failed, after writing whatever results it did collect.
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import check_results
    import results_csv
    import results_outputs
    import worklog
    from stage_runs import REPO_ROOT, executable, exit_status, repo_path, results_folder
except ModuleNotFoundError as missing:
    sys.exit(f"error: Python module '{missing.name}' is missing; "
             "install matplotlib (python3 -m pip install matplotlib)")

DEFAULT_SIZES = (1024, 2048, 4096, 8192)
DEFAULT_TURNS_SIZES = (4096, 8192)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Run ./sgemm all <N> for each size and regenerate the results "
                    "table, charts and README block.")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES),
                        metavar="N", help="square problem sizes, run in this order")
    parser.add_argument("--turns-sizes", type=int, nargs="*", default=list(DEFAULT_TURNS_SIZES),
                        metavar="N", help="sizes run again with --timing blocks (none: skip)")
    parser.add_argument("--stages", type=int, nargs="+", metavar="S",
                        help="run only these stages and merge their rows into the CSVs already there")
    parser.add_argument("--binary", default="./sgemm",
                        help="sgemm executable (default: ./sgemm)")
    parser.add_argument("--results-dir", default="results",
                        help="outputs go to RESULTS_DIR/<gpu-slug>/ (default: results)")
    parser.add_argument("--readme", default="README.md",
                        help="README whose results block is refreshed (default: README.md)")
    parser.add_argument("--kernels", default="kernels",
                        help="the stage files whose headline figures are rewritten and from which WORKLOG.md, "
                             "beside the README, is written (default: kernels)")
    parser.add_argument("--no-readme", action="store_true",
                        help="leave the README, the chapters' figures and WORKLOG.md untouched")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--ceilings-only", action="store_true",
                       help="measure the ceilings (sgemm peak), run no stage, and rebuild "
                            "from the results.csv already in RESULTS_DIR/<gpu-slug>/")
    modes.add_argument("--no-run", action="store_true",
                       help="run nothing: rebuild from the CSVs already in RESULTS_DIR/<gpu-slug>/")
    modes.add_argument("--stale", action="store_true",
                       help="run only the stages and sizes whose rows in results.csv and results_in_turns.csv "
                            "measured sources that have changed since (scripts/check_results.py), each as it "
                            "was timed, and merge them into the CSVs")
    modes.add_argument("--rows", nargs="+", metavar="CSV",
                       help="run nothing: merge these CSVs' rows (sgemm --csv, run elsewhere) into the results, "
                            "then rebuild")
    parser.add_argument("--gpu", metavar="SLUG",
                        help="with --no-run: the folder under RESULTS_DIR (default: the only one "
                             "with a results.csv)")
    parser.add_argument("--extra-args", nargs=argparse.REMAINDER, default=[],
                        metavar="ARG",
                        help="passed on to the binary after 'all N --csv FILE' (launch by "
                             "launch only); must be the last option")
    return parser.parse_args(argv)


def run_sizes(binary, sizes, extra_args, scratch_dir, timing="launches", stages=None):
    """Run the binary once per size (`all`, or once per stage of `stages`); return
    (label, exit code, rows) for each run."""
    runs = []
    in_turns = " in turns" if timing == "blocks" else ""
    for index, size in enumerate(sizes, start=1):
        for stage in stages or ["all"]:
            label = f"N={size}{in_turns}" + (f" stage {stage}" if stages else "")
            print(f"[size {index}/{len(sizes)}{in_turns}] N={size}" + (f" stage {stage}" if stages else ""),
                  flush=True)
            # One file per run, so a crash mid-run cannot corrupt the other runs' rows.
            csv_path = scratch_dir / f"sgemm_{size}_{stage}_{timing}.csv"
            command = [str(binary), str(stage), str(size), "--csv", str(csv_path), *extra_args]
            # stdout and stderr are inherited so progress reaches the user as it is printed.
            exit_code = subprocess.run(command, cwd=REPO_ROOT, check=False).returncode
            runs.append((label, exit_code, results_csv.read_rows_if_written(csv_path)))
    return runs


def run_stale(binary, extra_args, scratch_dir):
    """run_sizes over the stale rows of results.csv (launch by launch) and results_in_turns.csv
    (in turns): each size once, with the stages stale there; (runs, runs in turns)."""
    stale = check_results.stale_squares()
    if not stale:
        print("no stale rows in results.csv or results_in_turns.csv", flush=True)

    def by_size(file):
        stages = {}
        for name, stage, size in stale:
            if name == file:
                stages.setdefault(int(size), []).append(stage)
        return sorted(stages.items())

    runs = [run for size, stages in by_size("results.csv")
            for run in run_sizes(binary, [size], extra_args, scratch_dir, stages=stages)]
    turns_runs = [run for size, stages in by_size(results_outputs.TURNS_CSV)
                  for run in run_sizes(binary, [size], ["--timing", "blocks"], scratch_dir, "blocks", stages=stages)]
    return runs, turns_runs


def merged(new_rows, old_path):
    """new_rows, after the rows of old_path (if it exists) of other stages or sizes."""
    old_rows = results_csv.read_rows(old_path) if old_path.exists() else []
    return results_csv.merged(new_rows, old_rows, key=lambda row: (row["stage"], row["m"], row["n"], row["k"]))


def rows_run_elsewhere(paths):
    """(runs, runs in turns) as run_sizes returns them, of the rows of CSVs written elsewhere."""
    runs, turns_runs = [], []
    for path in paths:
        rows = results_csv.read_rows(repo_path(path))
        runs.append((path, 0, [row for row in rows if row["timing"] != "blocks"]))
        turns_runs.append((f"{path} in turns", 0, [row for row in rows if row["timing"] == "blocks"]))
    return runs, turns_runs


def measure_ceilings(binary, scratch_dir):
    """Run `sgemm peak --csv`; return its exit code and the CSV path (None if not written)."""
    print("[ceilings] sgemm peak", flush=True)
    csv_path = scratch_dir / "ceilings.csv"
    exit_code = subprocess.run([str(binary), "peak", "--csv", str(csv_path)], cwd=REPO_ROOT,
                               check=False).returncode
    written = csv_path.exists() and csv_path.stat().st_size > 0
    return exit_code, csv_path if written else None


def failure_lines(runs, binary_name, ceilings_exit_code=0):
    lines = []
    if ceilings_exit_code != 0:
        lines.append(f"{binary_name} peak exited with code {ceilings_exit_code}; see its output above")
    for label, exit_code, rows in runs:
        failed = [row for row in rows if row["verified"] == "false"]
        for row in failed:
            lines.append(f"{label}: stage {row['stage']} {row['name']} failed "
                         f"verification ({describe_error(row)})")
        if exit_code != 0 and not failed:
            lines.append(f"{label}: {binary_name} exited with code {exit_code} "
                         "without a failed-verification row; see its output above")
    return lines


def describe_error(row):
    worst = row["worst_error_over_budget"]
    return "no error recorded" if worst is None else f"worst error {worst:.3g}x its budget"


def display(path):
    return path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path


def main(argv=None):
    args = parse_args(argv)
    binary = repo_path(args.binary) if args.no_run or args.rows else executable(args.binary)
    results_dir = repo_path(args.results_dir)

    written = []
    with tempfile.TemporaryDirectory(prefix="sgemm-results-") as scratch:
        running = not (args.no_run or args.rows)
        ceilings_exit_code, ceilings = measure_ceilings(binary, Path(scratch)) if running else (0, None)
        measuring = running and not args.ceilings_only
        if args.stale:
            runs, turns_runs = run_stale(binary, args.extra_args, Path(scratch))
        else:
            runs = run_sizes(binary, args.sizes, args.extra_args, Path(scratch),
                             stages=args.stages) if measuring else []
            turns_runs = run_sizes(binary, args.turns_sizes, ["--timing", "blocks"], Path(scratch),
                                   "blocks", stages=args.stages) if measuring else []
        if args.rows:
            runs, turns_runs = rows_run_elsewhere(args.rows)
        rows = [row for _, _, size_rows in runs for row in size_rows]
        turns_rows = [row for _, _, size_rows in turns_runs for row in size_rows]
        if runs and not rows:
            sys.exit(f"error: {binary.name} wrote no result rows; see its output above")
        if args.ceilings_only and ceilings is None:
            sys.exit(f"error: {binary.name} peak wrote no ceilings; see its output above")
        try:
            if rows:
                out_dir = results_dir / results_csv.gpu_slug(results_csv.single_gpu(rows))
            elif ceilings is not None:
                out_dir = results_dir / results_csv.gpu_slug(
                    results_csv.single_gpu(results_csv.read_ceilings(ceilings).values()))
            else:
                out_dir = results_folder(results_dir, args.gpu, "results.csv")
            if ceilings is not None:
                out_dir.mkdir(parents=True, exist_ok=True)
                written.append(Path(shutil.copyfile(ceilings, out_dir / "ceilings.csv")))
            if rows:  # a run replaces the rows it measured and keeps the others
                rows = merged(rows, out_dir / "results.csv")
                turns_rows = merged(turns_rows, out_dir / results_outputs.TURNS_CSV)
            if turns_rows:
                out_dir.mkdir(parents=True, exist_ok=True)
                turns_path = out_dir / results_outputs.TURNS_CSV
                results_csv.write_rows_sorted(turns_rows, turns_path)
                written.append(turns_path)
        except (ValueError, OSError) as error:
            sys.exit(f"error: {error}")

    failures = failure_lines(runs + turns_runs, binary.name, ceilings_exit_code)
    try:
        if not rows:  # --ceilings-only or --no-run: the results as they are
            committed = out_dir / "results.csv"
            if not committed.exists():
                for path in written:
                    print(f"wrote {display(path)}")
                print(f"no {display(committed)} to rebuild the tables from: make results runs the stages")
                return exit_status(failures)
            rows = results_csv.read_rows(committed)
        readme = None if args.no_readme else repo_path(args.readme)
        written += results_outputs.write_outputs(rows, out_dir, readme)
    except (ValueError, OSError) as error:
        sys.exit(f"error: {error}")
    if readme is not None:  # the chapters and the worklog beside the README cite the same results
        kernels_dir = repo_path(args.kernels)
        try:
            written += worklog.refresh_measured_sentences(kernels_dir, out_dir)
        except ValueError as error:
            sys.exit(f"error: {error}")
        worklog_path = readme.parent / "WORKLOG.md"
        worklog_path.write_text(worklog.worklog(kernels_dir, out_dir, readme.parent))
        written.append(worklog_path)
    for path in written:
        print(f"wrote {display(path)}")
    return exit_status(failures)


if __name__ == "__main__":
    sys.exit(main())
