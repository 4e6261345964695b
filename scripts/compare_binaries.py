#!/usr/bin/env python3
"""An A/B of two sgemm binaries on the same problems: an OLD and a NEW binary take turns
problem by problem (old, new, old, new ...) in one run, so that the GPU's clock and heat
hit both alike, each run's ratio to cuBLAS measured in its own binary's process. Each
binary runs its own list of tracks or stages, paired by position: the old binary's first
with the new one's first, and so on.

    python3 scripts/compare_binaries.py --old OLD --new NEW
        [--suite [--groups square layer skinny k-heavy]] [--draw SEED --count N]
        [--old-stages bf16 fp32-tc fp32] [--new-stages bf16 fp32-tc fp32]
        [--problems FIRST-LAST] [--time-budget 0.25] [--timing launches] [--gpus 0,1,2,3]
        [--seconds S] [--out build/compare] [--rows CSV ...]

The problems are the shape suite's (scripts/shapes.py, --groups for some of them) and/or a
random draw's (scripts/draw_problems.py: the first N of SEED, without those its guard
skips); --problems takes a part of that list (numbered from 1), so that a long comparison
can run in parts. With --gpus the problems are dealt over the GPUs, one worker a GPU with
CUDA_VISIBLE_DEVICES set to it; each worker still alternates old and new on its own. With
--seconds no problem starts after that many seconds (a call's time limit), and the report says
how many of the problems ran: the first ones of the list, a draw's in its random order.

Writes OUT/compare.csv (a row a run: the binary's columns, empty where it wrote no row, then
the problem, its source, the pair, which binary, and what became of the run) and
OUT/compare.md: per pair and band of M (the draw's bands), the geomean ratio to cuBLAS of
each binary over the problems both ran, the difference in points, the problems that moved
most, and the runs that did not run; then prints the short table last. A binary writing
the CSV of before the kernel column (an old one) is read as such. --rows runs nothing: it
writes OUT/compare.csv and compare.md of the rows of compare.csv files written before (the
parts of a comparison run with --problems). OUT/compare.csv is written again after every run, so
that a comparison cut off (by a time limit, say) keeps what it measured for --rows to report. Exits non-zero if a run
failed verification or a binary failed; a refusal is a row.

    # before and after the tracks: the old binary's best stages against the new tracks
    python3 scripts/compare_binaries.py --old old/sgemm --new ./sgemm --suite --draw 7 --count 150 \
        --old-stages 20 24 10 --new-stages bf16 fp32-tc fp32 --gpus 0,1,2,3
"""

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import NamedTuple

import draw_problems
import results_csv
from shape_suite import GROUPS, suite
from stage_runs import (DEFAULT_TRACKS, exit_status, executable, fp8_reference_note, geomean, problem_range, ratio_text,
                        repo_path, run_argument, run_label, run_problem)

# After the binary's own columns: the problem (its name, where it came from), the pair of runs
# ("stage 20 vs track bf16"), the binary (old or new), what became of the run and why.
COMPARE_COLUMNS = ("problem", "source", "pair", "binary", "status", "reason")
CSV_NAME, TABLE_NAME = "compare.csv", "compare.md"
BINARIES = ("old", "new")
# A problem is counted below where the new binary's ratio is under the old's by more than this.
BELOW = 0.02
# The problems of each pair whose ratio to cuBLAS moved most, listed in the report.
MOVED_MOST = 10
ALL_BANDS = "all"


class Problem(NamedTuple):
    name: str
    source: str  # "suite", or "draw SEED"
    m: int
    n: int
    k: int


def parse_args(argv):
    parser = argparse.ArgumentParser(description="Alternate an old and a new sgemm binary problem by problem and "
                                                 "compare their ratios to cuBLAS")
    parser.add_argument("--old", help="the old sgemm binary")
    parser.add_argument("--new", help="the new sgemm binary")
    parser.add_argument("--suite", action="store_true", help="the shape suite's problems")
    parser.add_argument("--groups", nargs="+", choices=GROUPS, default=list(GROUPS),
                        help="with --suite: which groups of shapes (default: all)")
    parser.add_argument("--draw", type=int, metavar="SEED", help="a random draw's problems, from this seed")
    parser.add_argument("--count", type=int, default=150, help="with --draw: problems drawn (default 150)")
    parser.add_argument("--problems", type=problem_range, metavar="FIRST-LAST",
                        help="only these of the problems (numbered from 1: the suite's, then the draw's)")
    parser.add_argument("--old-stages", nargs="+", type=run_argument, default=list(DEFAULT_TRACKS), metavar="RUN",
                        help="the old binary's tracks or stages (default: bf16, fp32-tc and fp32)")
    parser.add_argument("--new-stages", nargs="+", type=run_argument, default=list(DEFAULT_TRACKS), metavar="RUN",
                        help="the new binary's, paired with the old ones by position "
                             "(default: bf16, fp32-tc and fp32)")
    parser.add_argument("--time-budget", type=float, default=0.25,
                        help="seconds per timing measurement, passed to sgemm (default 0.25)")
    parser.add_argument("--timing", choices=sorted(results_csv.TIMINGS), default="launches",
                        help="how each run and cuBLAS take turns, passed to sgemm (default launches)")
    parser.add_argument("--gpus", help="GPUs to deal the problems over, e.g. 0,1,2,3 (default: the one visible)")
    parser.add_argument("--seconds", type=float,
                        help="start no problem after this many seconds; the report says how many ran (default: no limit)")
    parser.add_argument("--out", default="build/compare", help="where compare.csv and compare.md go (default build/compare)")
    parser.add_argument("--rows", nargs="+", metavar="CSV",
                        help="run nothing: write OUT/compare.* of these compare.csv files' rows, in order")
    args = parser.parse_args(argv)
    if args.rows:
        return args
    if not args.old or not args.new:
        parser.error("give both binaries: --old and --new")
    if not args.suite and args.draw is None:
        parser.error("choose the problems: --suite and/or --draw SEED")
    if len(args.old_stages) != len(args.new_stages):
        parser.error(f"--old-stages and --new-stages pair by position: got {len(args.old_stages)} and "
                     f"{len(args.new_stages)}")
    if args.count < 1:
        parser.error("--count must be at least 1")
    args.gpus = args.gpus.split(",") if args.gpus else [None]
    return args


def problems_of(args):
    """The suite's problems of args.groups, then the draw's that its guard does not skip."""
    problems = [Problem(name, "suite", m, n, k) for name, group, m, n, k in suite() if group in args.groups] \
        if args.suite else []
    if args.draw is not None:
        drawn = draw_problems.draw(args.draw, args.count)
        kept = [p for p in drawn if not draw_problems.skip_reason(p)]
        if len(kept) < len(drawn):
            print(f"draw {args.draw}: {len(drawn) - len(kept)} of {len(drawn)} problems skipped by its guard "
                  f"({draw_problems.guard_rule()})", flush=True)
        problems += [Problem(p.name, f"draw {args.draw}", p.m, p.n, p.k) for p in kept]
    if args.problems:
        problems = [problem for number, problem in enumerate(problems, start=1) if number in args.problems]
    return problems


def pair_name(old_run, new_run):
    return f"{run_label(old_run)} vs {run_label(new_run)}"


def run_worker(binaries, problems, args, gpu, scratch, rows, lock, so_far, deadline):
    """Every pair on each of `problems`, the old binary then the new, on `gpu`, starting none
    after `deadline` (time.monotonic(), or None); appends to `rows` and writes them all to
    `so_far` after each run."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu} if gpu is not None else None
    where = f"[gpu {gpu}] " if gpu is not None else ""
    for number, problem in enumerate(problems, start=1):
        if deadline is not None and time.monotonic() >= deadline:
            print(f"{where}--seconds {args.seconds:g} up: {number - 1} of {len(problems)} problems ran", flush=True)
            return
        for pair, runs in enumerate(zip(args.old_stages, args.new_stages)):
            print(f"{where}[{number}/{len(problems)}] {problem.name} ({problem.m} x {problem.n} x {problem.k}) "
                  f"{pair_name(*runs)}", flush=True)
            for binary, run in zip(BINARIES, runs):
                csv_path = scratch / f"{gpu}_{number}_{pair}_{binary}.csv"
                status, why, written = run_problem(binaries[binary], run, problem.m, problem.n, problem.k,
                                                   args.time_budget, csv_path, "--timing", args.timing, env=env)
                fields = dict(problem=problem.name, source=problem.source, pair=pair_name(*runs), binary=binary,
                              status=status, reason=why)
                row = results_csv.blank_row(COMPARE_COLUMNS, **(written or dict(stage=run, m=problem.m, n=problem.n,
                                                                                k=problem.k, timing=args.timing)),
                                            **fields)
                with lock:
                    rows.append(row)
                    results_csv.write_rows(rows, so_far, COMPARE_COLUMNS)


def run_comparison(binaries, problems, args, scratch, so_far):
    """The problems dealt over args.gpus, one worker thread a GPU; [rows], in the order run. The
    rows so far are in `so_far` after every run, so that a comparison cut off keeps them."""
    rows, lock = [], threading.Lock()
    deadline = time.monotonic() + args.seconds if args.seconds is not None else None
    workers = [threading.Thread(target=run_worker, args=(binaries, problems[index::len(args.gpus)], args, gpu,
                                                         scratch, rows, lock, so_far, deadline))
               for index, gpu in enumerate(args.gpus)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return rows


def paired(rows):
    """{pair: [(old row, new row)]} of the problems both binaries ran (status ok)."""
    by_run = {(row["pair"], row["source"], row["problem"], row["binary"]): row for row in rows}
    out = {}
    for (pair, source, problem, binary), old in by_run.items():
        new = by_run.get((pair, source, problem, "new"))
        if binary == "old" and new and old["status"] == new["status"] == "ok":
            out.setdefault(pair, []).append((old, new))
    return out


def band_summary(pairs):
    """[(band, problems, old geomean, new geomean, problems where the new ran below the old by more
    than BELOW)] of one pair's problems: each band of M, then all."""
    out = []
    for band, member in (*draw_problems.BANDS, (ALL_BANDS, lambda m: True)):
        chosen = [(old, new) for old, new in pairs if member(old["m"])]
        if chosen:
            out.append((band, len(chosen), geomean([old["ratio_to_cublas"] for old, _ in chosen]),
                        geomean([new["ratio_to_cublas"] for _, new in chosen]),
                        sum(new["ratio_to_cublas"] < (1 - BELOW) * old["ratio_to_cublas"] for old, new in chosen)))
    return out


def points(old_ratio, new_ratio):
    return f"{(new_ratio - old_ratio) * 100:+.1f}"


def problems_run(rows):
    """How many problems have rows."""
    return len({(row["source"], row["problem"]) for row in rows})


def compare_markdown(rows, args_words, listed=None):
    """The report of `rows`; where `listed` (the problems the comparison was to run) is more than
    ran, it says how many ran."""
    by_pair = paired(rows)
    pairs = list(dict.fromkeys(row["pair"] for row in rows))
    gpus = sorted({row["gpu"] for row in rows if row["gpu"]})
    lines = [f"# An old and a new sgemm on {', '.join(gpus) or 'no GPU'}", "",
             f"Generated by `scripts/compare_binaries.py {args_words}`. On each problem the old binary ran, then "
             "the new one, each run verified and timed against cuBLAS at its precision"
             f"{fp8_reference_note(rows)} in its own process, so that each ratio to cuBLAS is its own binary's; "
             "the geomeans are over the problems both ran. "
             "Points: the new geomean less the old, in % of cuBLAS. Below: the problems where the new ran "
             f"slower than the old by more than {BELOW:.0%}."
             + (f" The time given (--seconds) ran {problems_run(rows)} of the {listed} problems, the first of their list."
                if listed is not None and problems_run(rows) < listed else ""), "",
             "| pair | band | problems | old | new | points | new / old | below |",
             "|:--|:--|--:|--:|--:|--:|--:|--:|"]
    for pair in pairs:
        new_run = next(row["stage"] for row in rows if row["pair"] == pair and row["binary"] == "new")
        for band, count, old, new, below in band_summary(by_pair.get(pair, [])):
            lines.append(f"| {pair} | {band} | {count} | {ratio_text(new_run, old)} | {ratio_text(new_run, new)} | "
                         f"{points(old, new)} | {new / old:.3f} | {below} |")
    for pair in pairs:
        moved = sorted(by_pair.get(pair, []), key=lambda both: -abs(both[1]["ratio_to_cublas"] - both[0]["ratio_to_cublas"]))
        if not moved:
            continue
        new_run = moved[0][1]["stage"]
        lines += ["", f"## {pair}: the {min(MOVED_MOST, len(moved))} problems that moved most", "",
                  "| problem | M | N | K | old | new | points | new kernel |", "|:--|--:|--:|--:|--:|--:|--:|:--|"]
        for old, new in moved[:MOVED_MOST]:
            lines.append(f"| {old['problem']} | {old['m']} | {old['n']} | {old['k']} | "
                         f"{ratio_text(new_run, old['ratio_to_cublas'])} | {ratio_text(new_run, new['ratio_to_cublas'])} | "
                         f"{points(old['ratio_to_cublas'], new['ratio_to_cublas'])} | {new['kernel'] or '–'} |")
    left_out = [row for row in rows if row["status"] != "ok"]
    if left_out:
        lines += ["", "## Runs that did not run", "", "| problem | pair | binary | status | why |", "|:--|:--|:--|:--|:--|"]
        lines += [f"| {row['problem']} | {row['pair']} | {row['binary']} | {row['status']} | {row['reason']} |"
                  for row in left_out]
    return "\n".join(lines) + "\n"


def short_table(rows):
    """Each pair over all its problems: the lines printed last."""
    by_pair = paired(rows)
    lines = [f"{'pair':<36} {'problems':>8} {'old':>9} {'new':>9} {'points':>7}"]
    for pair in dict.fromkeys(row["pair"] for row in rows):
        summary = band_summary(by_pair.get(pair, []))
        if not summary:
            lines.append(f"{pair:<36} {0:>8}")
            continue
        _, count, old, new, _ = summary[-1]
        new_run = by_pair[pair][0][1]["stage"]
        lines.append(f"{pair:<36} {count:>8} {ratio_text(new_run, old):>9} {ratio_text(new_run, new):>9} "
                     f"{points(old, new):>7}")
    return "\n".join(lines)


def read_compare(path):
    """The rows of a compare.csv (results_csv.read_runs)."""
    return results_csv.read_runs(path, COMPARE_COLUMNS)


def main(argv=None):
    args = parse_args(argv)
    out_dir = repo_path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.rows:
        rows = [row for path in args.rows for row in read_compare(repo_path(path))]
    else:
        binaries = {"old": executable(args.old), "new": executable(args.new)}
        problems = problems_of(args)
        with tempfile.TemporaryDirectory(prefix="sgemm-compare-") as scratch:
            rows = run_comparison(binaries, problems, args, Path(scratch), out_dir / CSV_NAME)
        order = {(problem.source, problem.name): index for index, problem in enumerate(problems)}
        pairs = {pair_name(*runs): index for index, runs in enumerate(zip(args.old_stages, args.new_stages))}
        rows.sort(key=lambda row: (order[(row["source"], row["problem"])], pairs[row["pair"]],
                                   BINARIES.index(row["binary"])))
    results_csv.write_rows(rows, out_dir / CSV_NAME, COMPARE_COLUMNS)
    words = " ".join(argv if argv is not None else sys.argv[1:])
    listed = None if args.rows else len(problems)
    (out_dir / TABLE_NAME).write_text(compare_markdown(rows, words, listed), encoding="utf-8")
    print(f"wrote {out_dir / CSV_NAME}\nwrote {out_dir / TABLE_NAME}")
    print(short_table(rows))
    return exit_status([f"{row['problem']} {row['pair']}, {row['binary']} binary: {row['reason']}"
                        for row in rows if row["status"] == "failed"])


if __name__ == "__main__":
    sys.exit(main())
