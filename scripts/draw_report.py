"""The random draw's rows (results/<gpu>/draw_<seed>.csv) and its report (draw_<seed>.md):
per run (a track or a stage) and band of M, the problems run, refused, failed and skipped,
and the statistics of the ratio to cuBLAS over the problems run; for M ≤ 256 the share of
the DRAM bound; for a track, the kernels it chose.
"""

import csv
import math
import os
import re
import textwrap
from collections import Counter
from pathlib import Path

import draw_problems
import results_csv
from results_tables import MISSING
from stage_runs import (DEFAULT_TRACKS, SPEEDUP_RUNS, STATUSES, description, fp8_reference_note, geomean, kernel_note,
                        kernels_chosen, precision_of, ratio_text, reference, run_label, runs_in_order, runs_words, tracks_note)

# After the binary's own columns: the problem (its number in the draw, name, kind, band of
# M), what became of the run (STATUSES), and why, where it did not run or failed.
DRAW_COLUMNS = ("index", "problem", "kind", "band", "status", "reason")
# A launch shorter than this is timed again by CUDA graphs with --timing-short graph.
SHORT_LAUNCH_MS = 0.1
ALL_BANDS = "all"


def blank_row(**fields):
    """A draw's row of every column, those not given empty (None)."""
    return results_csv.blank_row(DRAW_COLUMNS, **fields)


def read_draw(path):
    """The rows of a draw_<seed>.csv (results_csv.read_runs)."""
    return results_csv.read_runs(path, DRAW_COLUMNS, int_columns=("index",))


def write_draw(rows, path):
    results_csv.write_rows(rows, path, DRAW_COLUMNS)


def in_draw_order(rows):
    """By problem, each problem's runs in the order the rows first name them, the graph timing last."""
    run_order = {run: number for number, run in enumerate(runs_in_order(rows))}
    return sorted(rows, key=lambda row: (row["index"], run_order[row["stage"]], row["timing"] == "graph"))


def by_method(rows, run, graph_where_short=False):
    """One row per problem of `run`: the first timing's, or with graph_where_short the
    graph's where the launch was timed again by graphs."""
    chosen = {}
    for row in rows:
        if row["stage"] != run:
            continue
        first = chosen.get(row["index"])
        if first is None or (graph_where_short and row["timing"] == "graph" and first["timing"] != "graph"):
            chosen[row["index"]] = row
    return [chosen[index] for index in sorted(chosen)]


def retimed(rows, run):
    """How many problems of `run` were timed a second time, by graphs."""
    return sum(first is not graph for first, graph in zip(by_method(rows, run), by_method(rows, run, True)))


def percentile(values, fraction):
    """The `fraction` quantile of values, interpolated linearly between the nearest two (numpy's default)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


# Bytes a value of A and B takes, by the precision they are read in (FP32 otherwise); an
# FP8 run's scales, at most 4 bytes per 128 values, are left out.
INPUT_BYTES = {"fp8": 1, "bf16": 2}
# Bytes a value of C takes where it is not FP32: an FP8 run's C and D are bf16.
OUTPUT_BYTES = {"fp8": 2}


def dram_bytes(row):
    """A and B at the run's input precision, C written (and read where beta != 0)."""
    precision = results_csv.input_precision(row["precision"])
    input_bytes, c_bytes = INPUT_BYTES.get(precision, 4), OUTPUT_BYTES.get(precision, 4)
    c_passes = 2 if row["beta"] else 1
    return input_bytes * (row["m"] * row["k"] + row["k"] * row["n"]) + c_bytes * c_passes * row["m"] * row["n"]


def dram_share(row, dram_tbps):
    """The DRAM bound's time (dram_bytes at dram_tbps TB/s) over the stage's measured time."""
    return dram_bytes(row) / (dram_tbps * 1e12) / (row["median_ms"] * 1e-3)


def band_stats(rows, dram_tbps=None):
    """The statistics of one track's rows (one per problem) of one band: counts by status,
    then over the rows run: geomean, 10th percentile and worst (a row) of the ratio to cuBLAS,
    the share below 1, and the median share of the DRAM bound (with dram_tbps)."""
    counts = Counter(row["status"] for row in rows)
    run = [row for row in rows if row["status"] == "ok"]
    stats = {status: counts.get(status, 0) for status in STATUSES}
    if run:
        ratios = [row["ratio_to_cublas"] for row in run]
        stats.update(geomean=geomean(ratios), p10=percentile(ratios, 0.1),
                     worst=min(run, key=lambda row: row["ratio_to_cublas"]),
                     below=sum(ratio < 1 for ratio in ratios) / len(ratios))
        if dram_tbps:
            stats["dram"] = percentile([dram_share(row, dram_tbps) for row in run], 0.5)
    return stats


def banded(rows):
    """[(band, its rows)]: each band of M, then all."""
    return [(name, [row for row in rows if member(row["m"])]) for name, member in draw_problems.BANDS] + [
        (ALL_BANDS, rows)]


def _table(run, rows, dram_tbps):
    lines = ["| band | run | refused | failed | skipped | geomean | 10th pct | worst | below cuBLAS | "
             "DRAM bound (median) |", "|:--|--:|--:|--:|--:|--:|--:|:--|--:|--:|"]
    for band, members in banded(rows):
        s = band_stats(members, dram_tbps if band == draw_problems.BANDS[0][0] else None)
        cells = [band, *(str(s[status]) for status in STATUSES)]
        if "geomean" in s:
            cells += [ratio_text(run, s["geomean"]), ratio_text(run, s["p10"]),
                      f"{ratio_text(run, s['worst']['ratio_to_cublas'])} ({s['worst']['problem']}"
                      f"{kernel_note(s['worst'])})", f"{s['below'] * 100:.0f} %"]
        else:
            cells += [MISSING] * 4
        cells.append(f"{s['dram'] * 100:.1f} %" if "dram" in s else MISSING)
        lines.append("| " + " | ".join(cells) + " |")
    return lines


# The layer GEMMs of few tokens whose weights dominate the bytes: what the DRAM bound is
# quoted for (issue 57's bar).
FEW_TOKENS = 64
LARGE_WEIGHTS_BYTES = 16e6


def _large_weights_line(run, rows, dram_tbps):
    """For bf16 runs: the DRAM bound's median and 25th percentile share over the layer GEMMs
    of M <= FEW_TOKENS whose bf16 weights (K x N) are LARGE_WEIGHTS_BYTES or more, by the
    first timing and by graphs where short."""
    def members(method_rows):
        return [row for row in method_rows if row["status"] == "ok" and row["kind"] != "plain"
                and row["m"] <= FEW_TOKENS and 2 * row["k"] * row["n"] >= LARGE_WEIGHTS_BYTES]
    first, graph = members(by_method(rows, run)), members(by_method(rows, run, True))
    if not dram_tbps or not first or not first[0]["precision"].startswith("bf16"):
        return []
    def shares(chosen):
        values = [dram_share(row, dram_tbps) for row in chosen]
        cublas = [dram_share({**row, "median_ms": row["cublas_median_ms"]}, dram_tbps) for row in chosen]
        return (f"{percentile(values, 0.5) * 100:.1f} % (25th percentile {percentile(values, 0.25) * 100:.1f} %; "
                f"cuBLAS {percentile(cublas, 0.5) * 100:.1f} %, {percentile(cublas, 0.25) * 100:.1f} %)")
    return ["", f"Layer GEMMs of M ≤ {FEW_TOKENS} whose weights are {LARGE_WEIGHTS_BYTES / 1e6:.0f} MB or more "
                f"({len(first)} problems): the median share of the DRAM bound {shares(first)}; by graphs where "
                f"short, {shares(graph)}."]


def _kernels_table(run, rows):
    """For a track: each kernel it chose, and in each band of M the problems it ran and their geomean."""
    chosen = kernels_chosen([row for row in rows if row["status"] == "ok"], run)
    if not chosen:
        return []
    bands = [name for name, _ in banded(rows)]
    lines = ["", f"The kernels {run_label(run)} chose, by band of M: problems run, and their geomean ratio to cuBLAS:",
             "", "| kernel | " + " | ".join(bands) + " |", "|:--|" + "--:|" * len(bands)]
    for kernel, members in chosen:
        cells = []
        for _, in_band in banded(members):
            ratios = [row["ratio_to_cublas"] for row in in_band]
            cells.append(f"{len(ratios)}: {ratio_text(run, geomean(ratios))}" if ratios else MISSING)
        lines.append(f"| {kernel} | " + " | ".join(cells) + " |")
    return lines


# Bytes a value of A and B, by the precision they are read in: TMA takes a row that starts on
# 16 bytes, so K and N must be multiples of 16 / bytes.
VALUE_BYTES = {"fp8": 1, "bf16": 2, "fp32": 4}


def rows_on_16_bytes(row):
    """Whether the problem's rows of A and B (K and N values long) start on 16 bytes at its input precision."""
    per_row = 16 // VALUE_BYTES.get(results_csv.input_precision(row["precision"]), 4)
    return row["k"] % per_row == 0 and row["n"] % per_row == 0


def _alignment_table(run, rows):
    """Each band of M split by whether the rows start on 16 bytes (what TMA reads as they are;
    the rest go to kernels that load them by hand or to padded copies): the problems run and
    their geomean ratio, by the first timing and by graphs where short."""
    first = [row for row in by_method(rows, run) if row["status"] == "ok"]
    if not first:
        return []
    graphs = {row["index"]: row for row in by_method(rows, run, True) if row["status"] == "ok"}
    bytes_per_value = VALUE_BYTES.get(results_csv.input_precision(first[0]["precision"]), 4)
    bands = [name for name, _ in banded(first)]
    lines = ["", f"By whether A's and B's rows start on 16 bytes (K and N multiples of {16 // bytes_per_value}: "
                 "what TMA reads as it is), in each band of M: problems run, and their geomean ratio to cuBLAS "
                 "by the first timing / by graphs where short:", "",
             "| rows | " + " | ".join(bands) + " |", "|:--|" + "--:|" * len(bands)]
    for label, aligned in (("on 16 bytes", True), ("off 16 bytes", False)):
        cells = []
        for _, in_band in banded([row for row in first if rows_on_16_bytes(row) == aligned]):
            ratios = [row["ratio_to_cublas"] for row in in_band]
            again = [graphs[row["index"]]["ratio_to_cublas"] for row in in_band]
            cells.append(f"{len(ratios)}: {ratio_text(run, geomean(ratios))} / {ratio_text(run, geomean(again))}"
                         if ratios else MISSING)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def draw_markdown(rows, seed, count, dram_tbps=None, max_flops=draw_problems.MAX_FLOPS,
                  max_bytes=draw_problems.MAX_BYTES):
    gpus = sorted({row["gpu"] for row in rows if row["gpu"]})
    runs = runs_in_order(rows)
    first_timings = sorted({row["timing"] for run in runs for row in by_method(rows, run)})
    timed = "; ".join(results_csv.TIMINGS.get(method, method) for method in first_timings)
    dram = (f"the DRAM bandwidth measured in ceilings.csv, {dram_tbps:g} TB/s" if dram_tbps
            else "the DRAM bandwidth of ceilings.csv (none here: `make peak` measures it)")
    measured = len({row["index"] for row in rows})
    missing = f" ({count - measured} of the first {count} not run yet)" if measured < count else ""
    speedups = [run for run in runs if run in SPEEDUP_RUNS]
    shares = [run for run in runs if run not in speedups]
    units = "; ".join(([f"% of cuBLAS for {runs_words(shares)}"] if shares else [])
                      + ([f"times SGEMM for {runs_words(speedups)}"] if speedups else []))
    stages = "" if set(runs) == set(DEFAULT_TRACKS) else " ".join(str(run) for run in runs)
    stages_option, stages_variable = (f" --stages {stages}", f" STAGES='{stages}'") if stages else ("", "")
    lines = [f"# A random draw of GEMM problems on {', '.join(gpus) or 'no GPU'}: seed {seed}", "",
             f"Generated by `scripts/draw_shapes.py --seed {seed} --count {count}{stages_option}` (`make draw "
             f"SEED={seed} COUNT={count}{stages_variable}`) from `draw_{seed}.csv`: {measured} problems drawn from the seed{missing}, each through "
             f"{runs_words(runs)} against cuBLAS at its precision{fp8_reference_note(rows)} in the same process, "
             f"timed {timed}, and verified against float64. {tracks_note(runs)}The fixed suite (shapes.md) stays for "
             "regressions; figures to quote come from a draw whose seed no rule was fitted on.", "",
             f"**The draw.** {draw_problems.RULE}", "",
             f"**Left out.** {draw_problems.guard_rule(max_flops, max_bytes)}", "",
             "**The columns.** Run: verified and timed. Refused: the run takes no such shape and said so "
             "in one line (below). Failed: failed verification, or the binary failed. Skipped: left out by "
             "the rule above. Over the problems run: the geomean, 10th percentile and worst of the "
             f"ratio to cuBLAS ({units}), and the share "
             "of problems below cuBLAS. For M ≤ 256, where the ceiling is memory, not cuBLAS: the median "
             "over the problems run of the run's share of the DRAM bound, the time to move A and B at "
             "the run's input precision (2 bytes for bf16, 4 for FP32) and C (4 bytes written, and "
             f"read where beta ≠ 0) at {dram}, over the run's measured time.{_fp8_bytes_note(rows)}"]
    for run in runs:
        unit = "times" if run in speedups else "% of"
        lines += ["", f"## {run_label(run).capitalize()} ({description(run, rows)}): {unit} {reference(run, rows)} "
                      f"({precision_of(run, rows)} inputs)", "",
                  *_table(run, by_method(rows, run), dram_tbps), *_not_run_yet(run, rows, count)]
        again = retimed(rows, run)
        if again:
            lines += ["", f"By CUDA graphs where the first timing's launch took under {SHORT_LAUNCH_MS * 1000:.0f} us "
                      f"({again} problem{'s' if again != 1 else ''} timed again with `--timing graph`), "
                      "the first timing elsewhere:", "",
                      *_table(run, by_method(rows, run, True), dram_tbps)]
        lines += _large_weights_line(run, [row for row in rows if row["stage"] == run], dram_tbps)
        lines += _kernels_table(run, by_method(rows, run))
        lines += _alignment_table(run, [row for row in rows if row["stage"] == run])
    lines += _left_out(rows, runs)
    return "\n".join(lines) + "\n"


def _not_run_yet(run, rows, count):
    """A line naming the draw's problems the run has no row for (a run stopped part way),
    else none: the table's counts are over the problems it reached."""
    reached = {int(row["index"]) for row in rows if row["stage"] == run}
    absent = [index for index in range(1, count + 1) if index not in reached]
    if not absent:
        return []
    return ["", f"Not run yet by {run_label(run)}: problem{'s' if len(absent) > 1 else ''} "
                f"{', '.join(map(str, absent))} of the {count} (the run stopped before "
                f"{'them' if len(absent) > 1 else 'it'}); the counts above are over the others."]


def _fp8_bytes_note(rows):
    """What the DRAM bound counts for FP8 runs, where the draw has any ("" otherwise)."""
    if not any(results_csv.input_precision(row["precision"]) == "fp8" for row in rows):
        return ""
    return " For fp8 runs, A and B take 1 byte a value (their scales left out) and C and D, bf16, 2."


def _left_out(rows, runs):
    """The refusals, by run and what it asked for; then every failure."""
    refusals = Counter((row["stage"], (row["reason"] or "").split("; got")[0])
                       for row in rows if row["status"] == "refused")
    failures = [row for row in rows if row["status"] == "failed"]
    lines = []
    if refusals:
        lines += ["", "## Refusals", "", "| run | why | problems |", "|:--|:--|--:|"]
        lines += [f"| {run_label(run)} | {why} | {count} |"
                  for (run, why), count in sorted(refusals.items(), key=lambda item: (runs.index(item[0][0]), item[0][1]))]
    if failures:
        lines += ["", "## Failures", "", "| problem | run | timing | what |", "|:--|:--|:--|:--|"]
        lines += [f"| {row['problem']} | {run_label(row['stage'])} | {row['timing']} | {row['reason']} |"
                  for row in failures]
    return lines


def readme_sentence(draws, readme_dir):
    """The README's sentence on the random draws, from the draw files it quotes: each
    track's geomean ratio to cuBLAS over the problems run, launch by launch and by CUDA
    graphs where a launch was short, its 10th percentile, the share at or above cuBLAS
    where the track is a speedup, and a link to its GPU's flagged.csv where the run's rows are
    flagged (measured before a change to their sources: check_results.py); `draws` [(path of
    draw_<seed>.csv, seed)], links relative to readme_dir. A track run in several draws is
    quoted once, from the draw where it ran the most problems (of those, the latest seed)."""
    runs_by_draw = []
    for path, seed in draws:
        rows = read_draw(path)
        runs = {}
        for run in runs_in_order(rows):
            first = [row for row in by_method(rows, run) if row["status"] == "ok"]
            if first:
                runs[run] = first
        runs_by_draw.append((path, seed, rows, runs))
    quoted = {}
    for _, seed, _, runs in runs_by_draw:
        for run, first in runs.items():
            if run not in quoted or (len(first), seed) >= quoted[run]:
                quoted[run] = (len(first), seed)
    parts = []
    for path, seed, rows, runs in runs_by_draw:
        link = Path(os.path.relpath(Path(path).with_suffix(".md"), readme_dir)).as_posix()
        for run, first in runs.items():
            if quoted[run][1] != seed:
                continue
            ratios = [row["ratio_to_cublas"] for row in first]
            graphs = [row["ratio_to_cublas"] for row in by_method(rows, run, True) if row["status"] == "ok"]
            of = "" if run in SPEEDUP_RUNS else "of "
            text = (f"{run} at {ratio_text(run, geomean(ratios))} {of}{reference(run, rows)} over "
                    f"[seed {seed}]({link})'s {len(first)} problems run")
            if retimed(rows, run):
                text += f" ({ratio_text(run, geomean(graphs))} by CUDA graphs where a launch is short)"
            text += f", 10th percentile {ratio_text(run, percentile(ratios, 0.1))}"
            if run in SPEEDUP_RUNS:
                text += f", at or above it on {sum(r >= 1 for r in ratios) / len(ratios) * 100:.0f} %"
            flags = results_csv.read_flags(Path(path).parent)
            if any(file == Path(path).name and flagged_run == run for file, flagged_run, _, _ in flags):
                flags_link = Path(os.path.relpath(Path(path).parent / results_csv.FLAGS_CSV, readme_dir)).as_posix()
                text += f" ([flagged]({flags_link}): measured before a change to its sources)"
            parts.append(text)
    if not parts:
        return ""
    text = ("Square problems are not what people run. On random draws (`make draw`), each on a seed no constant "
            "was fitted on, in geomean launch by launch: " + "; ".join(parts) + ".")
    # Lines of at most 100 characters, a link's text kept on one line.
    unbroken = "\0"
    text = re.sub(r"\[[^]]*\]", lambda link: link.group(0).replace(" ", unbroken), text)
    return textwrap.fill(text, width=100, break_long_words=False, break_on_hyphens=False).replace(unbroken, " ")
