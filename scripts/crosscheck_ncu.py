#!/usr/bin/env python3
"""Cross-check sgemm's ratios to cuBLAS against Nsight Compute's kernel durations, problem
by problem: what the in-process timings print beside what the profiler measures of the same
launches.

    python3 scripts/crosscheck_ncu.py --run bf16 --problems 16x4096x4096 200x7168x5120 ...
        [--binary ./sgemm] [--repeats 3] [--out results/<gpu>/ncu_crosscheck_bf16]

For each problem: sgemm RUN (a stage or a track) times it launch by launch and by CUDA
graphs (--timing launches, graph), each against cuBLAS in the same process. Then ncu
(--profile-from-start off, --clock-control none, gpu__time_duration.sum; each kernel alone,
caches flushed) profiles one launch of the run's kernels (`--profile`) and one of the cuBLAS
call it is timed against (`--profile-cublas`), each in `--repeats` processes: a launch's time
is the sum of its kernels' durations, the median over the processes, and the profiler's
ratio is cuBLAS's time over the run's. The figure a problem is quoted by is the graph's
where the launch takes under 100 us, launch by launch above (docs/measuring.md).

Writes OUT.md (the table; how far the quoted figure lies from the profiler's) and OUT.csv.
The padded copies of a track's shape off a kernel's multiples are cudaMemcpy and memset
calls, not kernels: the profiler misses them, so such problems are marked and left out of
the summary. Without ncu, or without permission to read the GPU's counters, it says so in
one line and exits 0.
"""
import argparse
import csv
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile_stages import number, parse_ncu_csv  # noqa: E402
from results_csv import gpu_slug  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DURATION = "gpu__time_duration.sum"
SHORT_LAUNCH_MS = 0.1
COLUMNS = ("run", "m", "n", "k", "kernel", "launch_us", "launches_ratio", "graph_ratio", "ncu_ratio",
           "ncu_us", "ncu_cublas_us", "quoted_ratio", "points_off")


def parse_problem(text):
    m, n, k = (int(x) for x in text.lower().split("x"))
    return m, n, k


def timed_row(binary, run, problem, timing):
    """The row sgemm writes timing `problem` by `timing` (no verification: only the ratio)."""
    m, n, k = problem
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.csv"
        subprocess.run([str(binary), run, "-m", str(m), "-n", str(n), "-k", str(k), "--timing", timing,
                        "--no-verify", "--csv", str(path)], check=True, capture_output=True, text=True)
        with open(path, newline="") as file:
            return next(csv.DictReader(file))


def ncu_launch_ns(binary, run, problem, cublas):
    """The summed kernel durations of one profiled launch (ns), or None where ncu may not
    read the counters."""
    m, n, k = problem
    command = ["ncu", "--profile-from-start", "off", "--clock-control", "none", "--csv", "--page", "raw",
               "--print-units", "base", "--metrics", DURATION,
               str(binary), run, "-m", str(m), "-n", str(n), "-k", str(k),
               "--profile-cublas" if cublas else "--profile"]
    result = subprocess.run(command, capture_output=True, text=True)
    if "ERR_NVGPUCTRPERM" in result.stdout + result.stderr:
        return None
    if result.returncode != 0:
        sys.exit(f"crosscheck: ncu failed on {run} {m}x{n}x{k}:\n{(result.stdout + result.stderr)[-2000:]}")
    kernels = parse_ncu_csv(result.stdout)
    if not kernels:
        sys.exit(f"crosscheck: ncu saw no kernel of {run} {m}x{n}x{k}{' (cuBLAS)' if cublas else ''}")
    return sum(number(kernel[DURATION]) for kernel in kernels)


def crosscheck(binary, run, problem, repeats):
    """One row of the table, or None where the profiler may not read the counters."""
    launches, graph = (timed_row(binary, run, problem, timing) for timing in ("launches", "graph"))
    ours, theirs = [], []
    for _ in range(repeats):
        for cublas, durations in ((False, ours), (True, theirs)):
            ns = ncu_launch_ns(binary, run, problem, cublas)
            if ns is None:
                return None
            durations.append(ns)
    ncu_us, cublas_us = statistics.median(ours) / 1e3, statistics.median(theirs) / 1e3
    launch_ms = float(launches["median_ms"])
    quoted = graph if launch_ms < SHORT_LAUNCH_MS else launches
    ncu_ratio = cublas_us / ncu_us
    return {"run": run, "m": problem[0], "n": problem[1], "k": problem[2], "kernel": launches.get("kernel", ""),
            "launch_us": f"{launch_ms * 1e3:.1f}", "launches_ratio": launches["ratio_to_cublas"],
            "graph_ratio": graph["ratio_to_cublas"], "ncu_ratio": f"{ncu_ratio:.4f}", "ncu_us": f"{ncu_us:.2f}",
            "ncu_cublas_us": f"{cublas_us:.2f}", "quoted_ratio": quoted["ratio_to_cublas"],
            "points_off": f"{100 * (float(quoted['ratio_to_cublas']) - ncu_ratio):.1f}", "gpu": launches["gpu"]}


def markdown(rows, command):
    counted = [row for row in rows if "padded" not in row["kernel"]]
    worst = max((abs(float(row["points_off"])) for row in counted), default=0.0)
    within = sum(abs(float(row["points_off"])) <= 3.0 for row in counted)
    lines = [f"# sgemm's ratios to cuBLAS against Nsight Compute's on {rows[0]['gpu']}", "",
             f"Generated by `{command}`. Each problem timed against cuBLAS in the same process launch by launch "
             "and by CUDA graphs, then one launch of its kernels and one of cuBLAS's profiled by ncu "
             "(`--clock-control none`; each kernel alone, caches flushed), the median of the processes. The "
             "quoted figure is the graph's under 100 us a launch, launch by launch above; points off: quoted "
             "less the profiler's.", "",
             f"The quoted figure within 3 points of the profiler's on {within} of {len(counted)} problems; at most "
             f"{worst:.1f} points apart." + (" Problems on padded copies, whose copies the profiler misses, are "
                                            "marked and not counted." if len(counted) < len(rows) else ""), "",
             "| run | problem | kernel | launch (us) | launch by launch | graph | ncu (us: run / cuBLAS) | "
             "points off |", "|:--|:--|:--|--:|--:|--:|--:|--:|"]
    for row in rows:
        lines.append(f"| {row['run']} | {row['m']} x {row['n']} x {row['k']} | {row['kernel']} | {row['launch_us']} | "
                     f"{100 * float(row['launches_ratio']):.1f} % | {100 * float(row['graph_ratio']):.1f} % | "
                     f"{100 * float(row['ncu_ratio']):.1f} % ({row['ncu_us']} / {row['ncu_cublas_us']}) | "
                     f"{row['points_off']}{' (copies missed)' if 'padded' in row['kernel'] else ''} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a stage number or a track (bf16, fp32, fp32-tc)")
    parser.add_argument("--problems", nargs="+", type=parse_problem, required=True, metavar="MxNxK")
    parser.add_argument("--binary", default=str(REPO / "sgemm"))
    parser.add_argument("--repeats", type=int, default=3, help="profiled processes a launch (default 3)")
    parser.add_argument("--out", help="OUT.md and OUT.csv (default results/<gpu>/ncu_crosscheck_RUN)")
    args = parser.parse_args(argv)
    if shutil.which("ncu") is None:
        print("crosscheck: ncu (Nsight Compute) not found on PATH; nothing checked")
        return 0
    rows = []
    for problem in args.problems:
        row = crosscheck(args.binary, args.run, problem, args.repeats)
        if row is None:
            print("crosscheck: no permission to read the GPU's performance counters (ERR_NVGPUCTRPERM)")
            return 0
        rows.append(row)
        print(f"{args.run} {row['m']}x{row['n']}x{row['k']} kernel {row['kernel']}: quoted "
              f"{100 * float(row['quoted_ratio']):.1f} %, ncu {100 * float(row['ncu_ratio']):.1f} %", flush=True)
    out = Path(args.out) if args.out else REPO / "results" / gpu_slug(rows[0]["gpu"]) / f"ncu_crosscheck_{args.run}"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.with_suffix(".csv"), "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=(*COLUMNS, "gpu"))
        writer.writeheader()
        writer.writerows(rows)
    command = "python3 scripts/crosscheck_ncu.py " + " ".join(
        ["--run", args.run, "--problems", *(f"{m}x{n}x{k}" for m, n, k in args.problems),
         "--repeats", str(args.repeats)])
    out.with_suffix(".md").write_text(markdown(rows, command))
    print(f"wrote {out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
