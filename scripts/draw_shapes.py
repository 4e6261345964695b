#!/usr/bin/env python3
"""A random draw of GEMM problems: COUNT problems drawn from SEED (scripts/draw_problems.py:
transformer layer GEMMs of models drawn over hidden 1k-8k at 1-16384 tokens, and plain
problems of any M, N, K over 16-16384), each through each track (bf16, fp32-tc, fp32), or
the stages asked for, against cuBLAS, verified; a report per run and band of M. The fixed
suite (shapes.py) stays for regressions; the figures to quote come from a draw whose seed no
rule was fitted on.

    python3 scripts/draw_shapes.py [--seed 1] [--count 150] [--stages bf16 fp32-tc fp32 | 20 ...]
        [--time-budget 0.25] [--timing launches] [--timing-short graph]
        [--problems FIRST-LAST] [--max-flops F] [--max-bytes B] [--binary ./sgemm]
        [--results-dir results] [--no-run [--gpu SLUG]]

Writes results/<gpu>/draw_<seed>.csv (a row per run: the columns of results.csv, then the
problem's number, name, kind and band of M, the run's status, ok, refused, failed or
skipped, and why) and draw_<seed>.md. A run replaces the rows of the problems and runs
(tracks or stages) it ran and keeps the others, so a draw can be measured in parts
(--problems 1-50, ...); the CSV is written after each problem, so a run stopped part way
(a time limit) keeps the problems it finished. --no-run rebuilds draw_<seed>.md from
draw_<seed>.csv. Exits non-zero if a run failed verification or the binary failed; a
refusal (a shape the run does not take) is a row.
"""

import argparse
import sys
import tempfile
from pathlib import Path

import draw_problems
import draw_report
import results_csv
from stage_runs import (DEFAULT_TRACKS, PRECISIONS, executable, exit_status, problem_range, repo_path, results_folder,
                        run_argument, run_label, run_problem)


def parse_args(argv):
    parser = argparse.ArgumentParser(description="Run a random draw of GEMM problems; write results/<gpu>/draw_<seed>.*")
    parser.add_argument("--seed", type=int, default=1, help="the draw's seed (default 1)")
    parser.add_argument("--count", type=int, default=150, help="problems drawn (default 150)")
    parser.add_argument("--stages", nargs="+", type=run_argument, default=list(DEFAULT_TRACKS), metavar="RUN",
                        help="tracks (bf16, fp32-tc, fp32, fp8) or stage numbers to run "
                             "(default: bf16, fp32-tc and fp32)")
    parser.add_argument("--problems", type=problem_range, metavar="FIRST-LAST",
                        help="run only these problems of the draw (numbered from 1, as printed)")
    parser.add_argument("--binary", default="sgemm", help="sgemm executable (default: ./sgemm)")
    parser.add_argument("--results-dir", default="results", help="outputs go to RESULTS_DIR/<gpu-slug>/")
    parser.add_argument("--time-budget", type=float, default=0.25,
                        help="seconds per timing measurement, passed to sgemm (default 0.25)")
    parser.add_argument("--timing", choices=sorted(results_csv.TIMINGS), default="launches",
                        help="how the stage and cuBLAS take turns, passed to sgemm (default launches)")
    parser.add_argument("--timing-short", choices=["graph"],
                        help=f"time again by this method the launches under {draw_report.SHORT_LAUNCH_MS * 1000:.0f} us")
    parser.add_argument("--max-flops", type=float, default=draw_problems.MAX_FLOPS,
                        help="skip problems of more FLOPs, 2MNK (default 2 x 8192^3)")
    parser.add_argument("--max-bytes", type=float, default=draw_problems.MAX_BYTES,
                        help="skip problems whose memory estimate is over this (default 60e9)")
    parser.add_argument("--no-run", action="store_true", help="run nothing: rebuild draw_<seed>.md from its CSV")
    parser.add_argument("--gpu", help="with --no-run: the folder under RESULTS_DIR")
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error("--count must be at least 1")
    if args.problems and args.problems[-1] > args.count:
        parser.error(f"--problems must lie within 1-{args.count}")
    return args


def problem_fields(problem, run, timing):
    """The columns a row of `run` on `problem` has whether or not it ran (a stage's precision
    is known only once it has run)."""
    return dict(index=problem.index, problem=problem.name, kind=problem.kind, band=draw_problems.band(problem.m),
                stage=run, precision=PRECISIONS.get(run), m=problem.m, n=problem.n, k=problem.k,
                alpha=1.0, beta=0.0, timing=timing)


def run_once(binary, problem, run, timing, time_budget, scratch):
    """One run of the binary: a row of every column, with its status and why."""
    fields = problem_fields(problem, run, timing)
    status, why, written = run_problem(binary, run, problem.m, problem.n, problem.k, time_budget,
                                       scratch / f"{problem.index}_{run}_{timing}.csv", "--timing", timing)
    if written:
        return draw_report.blank_row(**written, **{key: fields[key] for key in draw_report.DRAW_COLUMNS[:4]},
                                     status=status, reason=why)
    return draw_report.blank_row(**fields, status=status, reason=why)


def run_draw(binary, problems, args, scratch, save=lambda rows: None):
    """Every run of args.stages on every problem; [rows]. save(rows) after each problem, so
    that a draw stopped part way (a time limit) keeps what it measured."""
    rows = []
    for problem in problems:
        if rows:
            save(rows)
        reason = draw_problems.skip_reason(problem, args.max_flops, args.max_bytes)
        if reason:
            print(f"[{problem.index}/{args.count}] {problem.name}: skipped, {reason}", flush=True)
        for run in args.stages:
            if reason:
                rows.append(draw_report.blank_row(**problem_fields(problem, run, args.timing),
                                                  status="skipped", reason=reason))
                continue
            print(f"[{problem.index}/{args.count}] {problem.name} ({problem.m} x {problem.n} x {problem.k}) "
                  f"{run_label(run)}", flush=True)
            rows.append(run_once(binary, problem, run, args.timing, args.time_budget, scratch))
            first = rows[-1]
            if (args.timing_short and args.timing_short != args.timing and first["status"] == "ok"
                    and first["median_ms"] < draw_report.SHORT_LAUNCH_MS):
                print(f"  again with --timing {args.timing_short}", flush=True)
                rows.append(run_once(binary, problem, run, args.timing_short, args.time_budget, scratch))
    return rows


def save_draw(rows, results_dir, csv_name, old_rows, strict):
    """The run's rows merged into RESULTS_DIR/<gpu>/csv_name with the rows it held before the
    run (read once, into old_rows); (folder, all rows). Before a row names its GPU nothing is
    written: strict exits then, as at the end of a run; otherwise (None, rows)."""
    try:
        gpu = results_csv.single_gpu(rows)
    except ValueError as error:
        if strict:
            sys.exit(f"error: {error}; see the output above")
        return None, rows
    rows = [dict(row, gpu=row["gpu"] or gpu) for row in rows]
    out_dir = results_dir / results_csv.gpu_slug(gpu)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / csv_name
    if out_dir not in old_rows:
        old_rows[out_dir] = draw_report.read_draw(path) if path.exists() else []
    merged = results_csv.merged(rows, old_rows[out_dir], key=lambda row: (row["index"], row["stage"]))
    rows = draw_report.in_draw_order(merged)
    draw_report.write_draw(rows, path)
    return out_dir, rows


def dram_tbps(out_dir):
    path = out_dir / "ceilings.csv"
    ceiling = results_csv.read_ceilings(path).get("dram") if path.exists() else None
    return ceiling["value"] if ceiling and ceiling["unit"] == "TB/s" else None


def check_against_draw(rows, seed, path):
    """Exit unless every row's problem is the one the generator draws at its number."""
    drawn = draw_problems.draw(seed, max(row["index"] for row in rows))
    for row in rows:
        problem = drawn[row["index"] - 1]
        if (row["problem"], row["m"], row["n"], row["k"]) != (problem.name, problem.m, problem.n, problem.k):
            sys.exit(f"error: {path}: problem {row['index']} is {row['problem']}, but seed {seed} draws "
                     f"{problem.name}: the generator changed since; run the draw again")


def main(argv=None):
    args = parse_args(argv)
    results_dir = repo_path(args.results_dir)
    csv_name = f"draw_{args.seed}.csv"
    failures = []
    if args.no_run:
        out_dir = results_folder(results_dir, args.gpu, csv_name)
        rows = draw_report.read_draw(out_dir / csv_name)
        if not rows:
            sys.exit(f"error: {out_dir / csv_name} holds no rows")
        check_against_draw(rows, args.seed, out_dir / csv_name)
    else:
        binary = executable(args.binary)
        problems = draw_problems.draw(args.seed, args.count)
        if args.problems:
            problems = [problem for problem in problems if problem.index in args.problems]
        old_rows = {}  # by the folder written to: its rows before this run
        with tempfile.TemporaryDirectory(prefix="sgemm-draw-") as scratch:
            rows = run_draw(binary, problems, args, Path(scratch),
                            save=lambda rows: save_draw(rows, results_dir, csv_name, old_rows, strict=False))
        failures = [f"{row['problem']} {run_label(row['stage'])} ({row['timing']}): {row['reason']}"
                    for row in rows if row["status"] == "failed"]
        out_dir, rows = save_draw(rows, results_dir, csv_name, old_rows, strict=True)
        print(f"wrote {out_dir / csv_name}")
    count = max(row["index"] for row in rows)
    markdown = draw_report.draw_markdown(rows, args.seed, count, dram_tbps(out_dir), args.max_flops, args.max_bytes)
    (out_dir / f"draw_{args.seed}.md").write_text(markdown, encoding="utf-8")
    print(f"wrote {out_dir / f'draw_{args.seed}.md'}")
    return exit_status(failures)


if __name__ == "__main__":
    sys.exit(main())
