"""What the scripts that run the sgemm binary share (the shape suite, scripts/shapes.py; the
random draw, scripts/draw_shapes.py; the A/B of two binaries, scripts/compare_binaries.py;
scripts/regenerate_results.py): the tracks, what a run is called and how its ratio reads,
one run of the binary on one problem, the folder of results to rebuild from, and the
geomean of ratios.

A run is what the binary's first argument names: a stage's number (`./sgemm 20 ...`, that
stage's kernel) or a track's name (`./sgemm bf16 ...`, the kernel of the stage its dispatch
chooses for the shape, named in the CSV's kernel column).
"""

import argparse
import math
import os
import re
import subprocess
import sys
from pathlib import Path

from results_csv import input_precision, parse_run, read_rows_if_written

REPO_ROOT = Path(__file__).resolve().parent.parent

# The tracks a user calls like a library, what each is, and what it is compared with.
TRACKS = (
    ("bf16", "bf16 on Hopper tensor cores", "cuBLAS bf16"),
    ("fp32-tc", "FP32 on tensor cores", "cuBLAS SGEMM"),
    ("fp32", "FP32 on CUDA cores", "cuBLAS SGEMM"),
    ("fp8", "FP8 (e4m3, scaled) on Hopper tensor cores", "cuBLASLt FP8"),
)
TRACK_NAMES = tuple(name for name, _, _ in TRACKS)
# The tracks the shape suite, a draw and an A/B run when given none. The FP8 track runs only
# when asked for: it computes another product (A and B quantized to e4m3 with scales, D in
# bf16) against another reference, and the committed suites and draws were run without it.
DEFAULT_TRACKS = ("bf16", "fp32-tc", "fp32")
# The precision each track reads A and B in.
PRECISIONS = {"bf16": "bf16", "fp32-tc": "fp32", "fp32": "fp32", "fp8": "fp8"}
# What a stage is compared with, by the precision it reads A and B in (the CSV's precision
# column's first word: "bf16 (bf16 C)" with --c-type bf16; an FP8 run's ends in its scaling,
# "fp8 1x128-128x128", and is timed against cuBLASLt's FP8 GEMM, cuBLAS having none).
REFERENCES = {"bf16": "cuBLAS bf16", "fp32": "cuBLAS SGEMM", "fp8": "cuBLASLt FP8"}
# FP32 on tensor cores, the track and the stages of its kernels (21-24), runs at several
# times SGEMM: its ratio reads as a speed-up ("2.93x"), every other as a share ("85.9 %").
SPEEDUP_RUNS = frozenset({"fp32-tc", 21, 22, 23, 24})
# sgemm's exit status after a usage error: an option, or a shape the stage refuses (in one
# line on stderr, "sgemm: error: stage 20 (...) needs N a multiple of 8, ...").
USAGE_ERROR = 2
# What became of a run (run_problem's, and a draw's "skipped": a problem its guard left out).
STATUSES = ("ok", "refused", "failed", "skipped")


def repo_path(path):
    path = Path(path)
    return path if path.is_absolute() else REPO_ROOT / path


def geomean(values):
    return math.exp(sum(math.log(value) for value in values) / len(values))


def run_argument(text):
    """argparse's type for a run: a stage's number or a track's name."""
    try:
        run = parse_run(text)
    except ValueError:
        run = None
    if run is None or (isinstance(run, str) and run not in TRACK_NAMES):
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither a stage number nor a track ({', '.join(TRACK_NAMES)})")
    return run


def problem_range(text):
    """argparse's type for --problems FIRST-LAST (or one number): the problems' numbers,
    counted from 1."""
    first, _, last = text.partition("-")
    try:
        numbers = range(int(first), int(last or first) + 1)
    except ValueError:
        numbers = None
    if not numbers or numbers[0] < 1:
        raise argparse.ArgumentTypeError(f"takes FIRST-LAST, counted from 1; got {text!r}")
    return numbers


def run_label(run):
    """How a report names a run: "track bf16", "stage 20"."""
    return f"track {run}" if isinstance(run, str) else f"stage {run}"


def runs_words(runs):
    """Runs named together: "tracks bf16 and fp32", "stages 20 and 10, and track fp32"."""
    parts = []
    for kind, chosen in (("stage", [run for run in runs if isinstance(run, int)]),
                         ("track", [run for run in runs if isinstance(run, str)])):
        if chosen:
            names = [str(run) for run in chosen]
            listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            parts.append(f"{kind}{'s' if len(names) > 1 else ''} {listed}")
    return ", and ".join(parts)


def runs_in_order(rows):
    """The runs of `rows` in the order the rows first name them."""
    return list(dict.fromkeys(row["stage"] for row in rows))


def description(run, rows):
    """What a run is: a track's words, or a stage's name as its rows give it."""
    if isinstance(run, str):
        return next(what for name, what, _ in TRACKS if name == run)
    name = next((row["name"] for row in rows if row["stage"] == run and row["name"]), None)
    return f"`{name}`" if name else "–"


def reference(run, rows):
    """What a run's ratio is against: a track's reference, or a stage's by its precision."""
    if isinstance(run, str):
        return next(against for name, _, against in TRACKS if name == run)
    return precision_reference(precision_of(run, rows))


def precision_reference(precision):
    """What a stage reading A and B in `precision` (the CSV's column) is compared with."""
    return REFERENCES.get(input_precision(precision), "cuBLAS")


def fp8_reference_note(rows, what="runs"):
    """" (cuBLASLt FP8 for the fp8 runs)" where the rows have FP8 runs, which are timed against
    cuBLASLt (cuBLAS has no FP8 GEMM): what "against cuBLAS at its precision" means for them;
    "" otherwise. Where an FP8 row's M is not a multiple of 16, cuBLASLt has none of its FP8
    GEMMs, and sgemm runs it on A padded with zero rows (src/gpu/cublaslt_fp8.hpp): said too."""
    fp8_rows = [row for row in rows if input_precision(row["precision"]) == "fp8"]
    if not fp8_rows:
        return ""
    padded = any(int(row["m"]) % 16 for row in fp8_rows)
    return (f" ({REFERENCES['fp8']} for the fp8 {what}"
            + ("; where M is not a multiple of 16, of which it has no FP8 GEMM, on A padded with zero rows to one"
               if padded else "") + ")")


def precision_of(run, rows):
    """The precision a run reads A and B in: a track's, or as its rows give it."""
    if isinstance(run, str):
        return PRECISIONS[run]
    return next((row["precision"] for row in rows if row["stage"] == run and row["precision"]), None)


def ratio_text(run, ratio):
    """A ratio to cuBLAS as it reads for the run: "2.93x" or "85.9 %"."""
    return f"{ratio:.2f}x" if run in SPEEDUP_RUNS else f"{ratio * 100:.1f} %"


def kernel_note(row):
    """", kernel 20 padded" for a track's row whose kernel is known; "" otherwise (a stage
    runs its own kernel, and files written before the column do not say)."""
    return f", kernel {row['kernel']}" if isinstance(row["stage"], str) and row.get("kernel") else ""


def kernels_chosen(rows, run):
    """[(kernel, its rows)] of a track's rows whose kernel is known, the most used first;
    [] for a stage."""
    if not isinstance(run, str):
        return []
    by_kernel = {}
    for row in rows:
        if row["stage"] == run and row.get("kernel"):
            by_kernel.setdefault(row["kernel"], []).append(row)
    return sorted(by_kernel.items(), key=lambda item: (-len(item[1]), item[0]))


def tracks_note(runs):
    """What a report says of its tracks, where it has any: how one runs, and what its
    kernel column means ("" for stages alone). Ends with a space, to go before more."""
    if not any(isinstance(run, str) for run in runs):
        return ""
    return ("A track runs the kernel of the stage its dispatch chooses for the shape (the stage named as "
            "its kernel; \"padded\": on copies of the operands padded with zeros). ")


def run_stage(binary, run, m, n, k, time_budget, csv_path, *options, env=None):
    """Run `binary run -m M -n N -k K --time-budget T --csv csv_path [options]` (with `env`
    for its environment where given), its stdout and stderr passed on; return (exit status,
    the last line of its stderr without the "sgemm: error: " in front: why it refused or
    failed, or "")."""
    command = [str(binary), str(run), "-m", str(m), "-n", str(n), "-k", str(k),
               "--time-budget", str(time_budget), "--csv", str(csv_path), *map(str, options)]
    result = subprocess.run(command, cwd=REPO_ROOT, stderr=subprocess.PIPE, text=True, check=False,
                            env=env)
    sys.stderr.write(result.stderr)
    sys.stderr.flush()
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    return result.returncode, re.sub(r"^\S+: error: ", "", lines[-1]) if lines else ""


def run_problem(binary, run, m, n, k, time_budget, csv_path, *options, env=None):
    """run_stage, and what became of it: (status, why, the row the binary wrote or None).
    ok: verified (or not verified) and timed; refused: the run takes no such shape and
    said so; failed: failed verification, or the binary failed."""
    code, message = run_stage(binary, run, m, n, k, time_budget, csv_path, *options, env=env)
    written = read_rows_if_written(csv_path)
    if written:
        bad = written[0]["verified"] == "false" or code != 0
        return ("failed", message or f"{Path(binary).name} exited with code {code}", written[0]) if bad \
            else ("ok", "", written[0])
    if code == USAGE_ERROR:
        return "refused", message, None
    return "failed", f"{Path(binary).name} exited with code {code}: {message}", None


def executable(path):
    """The binary at `path` (relative to the repository), or exit saying to build it."""
    binary = repo_path(path)
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        sys.exit(f"error: {binary} not found or not executable; run make first")
    return binary


def results_folder(results_dir, gpu, csv_name):
    """The folder under results_dir to rebuild from: RESULTS_DIR/GPU, or without `gpu` the
    only one holding csv_name; where there are none or several, exit saying to choose."""
    if gpu:
        return Path(results_dir) / gpu
    folders = sorted(p for p in Path(results_dir).iterdir() if (p / csv_name).exists()) \
        if Path(results_dir).is_dir() else []
    if len(folders) != 1:
        sys.exit(f"error: choose a GPU with --gpu ({', '.join(p.name for p in folders) or 'no ' + csv_name})")
    return folders[0]


def exit_status(failures):
    """Print the failures last, on stderr; 1 where there were any, else 0."""
    if failures:
        print(f"FAILED ({len(failures)}):", *failures, sep="\n  ", file=sys.stderr)
        return 1
    return 0
