#!/usr/bin/env python3
"""Fit the bf16 track's cost model (dispatch/bf16_cost.hpp) on measured times, or say how
well the fitted model predicts the times of other problems.

    python3 scripts/fit_bf16_cost.py --terms terms.csv --times rows.csv ... [--timing graph]
        [--fitted-on "the draw of seed 5"] [--header dispatch/bf16_cost_fit.hpp]
        [--report results/<gpu>/experiments/fits/bf16_cost/bf16_cost_fit.md]
    python3 scripts/fit_bf16_cost.py --evaluate --terms terms.csv --times rows.csv ... --report FILE
    python3 scripts/fit_bf16_cost.py --set NAME --terms terms.csv --times rows.csv ... [--compare rows.csv ...]
    python3 scripts/fit_bf16_cost.py --evaluate --off-multiples --terms terms.csv --times rows.csv ... --report FILE
    python3 scripts/fit_bf16_cost.py --prior --ceilings results/<gpu>/ceilings.csv
    python3 scripts/fit_bf16_cost.py --check terms.csv

--terms: what sgemm_model wrote for the problems (each kernel's terms); --times: rows that
./sgemm wrote running the stages on the same problems (with --timing TIMING where a
problem has several, else the one it has). Each kernel's five constants are fitted by least
squares on the logarithm of its time, so a 5 us problem weighs as much as a 5 ms one. The
header holds the constants and what they were fitted on; the report, each problem's
predicted and measured times, the model's error, and how often the kernel it predicts
faster was the faster one, with what its wrong choices cost. --evaluate fits nothing: it
reads the constants from the header and reports on the problems given (a draw the model was
not fitted on). --set fits one set of constants alone on its stage's rows, on problems off
the multiples of 8: kStage25ByHandCost (stage 25 loading rows off 16 bytes by hand),
kStage14Cost, and kStage20PaddedCost (stage 20 on padded copies: only the fixed part and
the copies' rate, the kernel's own constants kept from kStage20Cost); --compare: other
kernels' rows on them, for the report. Where the times hold stages 14, 20 and 25, the
report says how the model chooses among them, as --evaluate --off-multiples does on a
draw it was not fitted on.
--prior writes the constants the fit starts from, from the GPU's measured ceilings: the
header a first build needs before any problem has been timed. --check: the model here gives
the times sgemm_model wrote (from the header it was built with), each row's from its own
terms, and the kernel it marked chosen is the one of least time.
"""
import argparse
import csv
import math
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stage_runs import repo_path  # noqa: E402

STAGES = (20, 25)
# Off the multiples of 8, the kernels the track weighs and the constants of each there.
OFF_MULTIPLES = {25: "kStage25ByHandCost", 14: "kStage14Cost", 20: "kStage20PaddedCost"}
# Each set of constants in the header: a kernel's; and off the multiples of 8 (each fitted
# with --set on problems off them), stage 25's loading rows off 16 bytes by hand, stage
# 14's, and stage 20's on padded copies.
SETS = {"kStage20Cost": 20, "kStage25Cost": 25, "kStage25ByHandCost": 25, "kStage14Cost": 14,
        "kStage20PaddedCost": 20}
CONSTANTS = ("fixed_seconds", "dram_bytes_per_second", "load_bytes_per_second", "macs_per_second",
             "split_bytes_per_second", "copy_bytes_per_second")
TERMS = ("dram_bytes", "sm_steps", "step_bytes", "step_macs", "split_bytes", "copy_bytes")
# With --set kStage20PaddedCost, the constants fitted (the fixed part and the copies' rate);
# the rest are kStage20Cost's.
PADDED_FREE = (0, 5)
HEADER = Path("dispatch/bf16_cost_fit.hpp")


def predicted(terms, constants):
    """The model of dispatch/bf16_cost.cpp (predicted_seconds), in seconds."""
    fixed, dram, load, macs, split, copy = constants
    step = max(terms["step_bytes"] / load, terms["step_macs"] / macs)
    return (fixed + max(terms["dram_bytes"] / dram, terms["sm_steps"] * step) + terms["split_bytes"] / split
            + terms.get("copy_bytes", 0.0) / copy)


def prior(ceilings_path, sms=132):
    """Constants from the GPU's ceilings: DRAM at its measured bandwidth, an SM's MMA at its
    share of the wgmma ceiling, an SM's loads at three times its share of DRAM (L2 hits), the
    partial sums it adds at its share of L2's bandwidth, copies at DRAM's bandwidth, and a
    few microseconds to launch."""
    with open(ceilings_path) as file:
        values = {row["ceiling"]: float(row["value"]) for row in csv.DictReader(file)}
    dram, l2 = values["dram"] * 1e12, values["l2"] * 1e12
    return {name: (4e-6, dram, 3 * dram / sms, values["wgmma_bf16"] * 1e12 / 2 / sms, l2 / sms, dram)
            for name in SETS}


def read_terms(path):
    terms = {}
    with open(path) as file:
        for row in csv.DictReader(file):
            key = (int(row["kernel"]), int(row["m"]), int(row["n"]), int(row["k"]))
            terms[key] = {name: float(row[name]) for name in TERMS}
    return terms


def read_times(paths, timing):
    """(seconds, ratio to cuBLAS) by (stage, m, n, k): the row of the timing asked for where
    a problem has several, else its only one."""
    times = {}
    for path in paths:
        with open(path) as file:
            for row in csv.DictReader(file):
                if int(row["stage"]) not in SETS.values() or not row["median_ms"] or row.get("verified") == "false":
                    continue
                key = (int(row["stage"]), int(row["m"]), int(row["n"]), int(row["k"]))
                if key not in times or row["timing"] == timing:
                    times[key] = (float(row["median_ms"]) * 1e-3, float(row["ratio_to_cublas"]))
    return times


BANDS = (("M ≤ 64", lambda m: m <= 64), ("64 < M ≤ 256", lambda m: 64 < m <= 256),
         ("256 < M < 1024", lambda m: 256 < m < 1024), ("M ≥ 1024", lambda m: m >= 1024),
         ("all", lambda m: True))


def geomean(values):
    return math.exp(statistics.fmean(math.log(x) for x in values))


def solve(matrix, vector):
    """x with matrix x = vector: Gaussian elimination with partial pivoting, for the few
    constants of a fit."""
    n = len(vector)
    rows = [list(matrix[i]) + [vector[i]] for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(col + 1, n):
            factor = rows[r][col] / rows[col][col]
            if factor:
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col])]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (rows[i][n] - sum(rows[i][c] * x[c] for c in range(i + 1, n))) / rows[i][i]
    return x


def fit(samples, start, free=None, iterations=500, predict=None):
    """Least squares on log time over the constants (those at the indices `free`, or all;
    the rest as in `start`), each fitted as its logarithm, by Levenberg-Marquardt in plain
    Python (a few dozen constants at most). samples: (terms, seconds); predict(terms,
    constants): the model (this one's `predicted` unless given)."""
    log_start = [math.log(v) for v in start]
    free = list(range(len(start))) if free is None else list(free)
    predict = predicted if predict is None else predict

    def constants_of(x):
        log_constants = list(log_start)
        for index, value in zip(free, x):
            log_constants[index] = value
        return [math.exp(v) for v in log_constants]

    def residuals(x):
        constants = constants_of(x)
        return [math.log(predict(terms, constants) / seconds) for terms, seconds in samples]

    def squared(r):
        return sum(v * v for v in r)

    x = [log_start[i] for i in free]
    r = residuals(x)
    damping = 1e-3
    for _ in range(iterations):
        columns = []
        for i in range(len(x)):
            stepped = list(x)
            stepped[i] += 1e-6
            columns.append([(a - b) / 1e-6 for a, b in zip(residuals(stepped), r)])
        normal = [[sum(a * b for a, b in zip(ci, cj)) for cj in columns] for ci in columns]
        gradient = [sum(a * b for a, b in zip(ci, r)) for ci in columns]
        while True:
            damped = [[value + (damping * (row[i] + 1e-12) if i == j else 0.0) for j, value in enumerate(row)]
                      for i, row in enumerate(normal)]
            delta = solve(damped, [-g for g in gradient])
            moved = [a + b for a, b in zip(x, delta)]
            candidate = residuals(moved)
            if squared(candidate) < squared(r):
                x, r, damping = moved, candidate, damping / 3
                break
            damping *= 3
            if damping > 1e12:
                return tuple(constants_of(x))
        if max(abs(d) for d in delta) < 1e-9:
            break
    return tuple(constants_of(x))


def read_header(path):
    """{set name: its constants} (SETS)."""
    text = Path(path).read_text()
    return {name: tuple(float(x) for x in re.search(rf"{name}\{{([^}}]*)\}}", text).group(1).split(","))
            for name in SETS}


def constants_name(stage, n, k):
    """The set of constants the track predicts `stage` with on a shape of N = n, K = k."""
    return f"kStage{stage}Cost" if n % 8 == 0 and k % 8 == 0 else OFF_MULTIPLES[stage]


def check(path, constants):
    """sgemm_model's CSV against this model: the largest relative difference between a row's
    predicted_us and this model's time from the row's terms; and the shapes whose row marked
    chosen is not the one of least predicted_us."""
    worst, rows = 0.0, {}
    with open(path) as file:
        for row in csv.DictReader(file):
            shape, stage = (int(row["m"]), int(row["n"]), int(row["k"])), int(row["kernel"])
            mine = predicted({name: float(row[name]) for name in TERMS}, constants[constants_name(stage, *shape[1:])])
            worst = max(worst, abs(mine * 1e6 / float(row["predicted_us"]) - 1))
            rows.setdefault(shape, []).append((float(row["predicted_us"]), row["chosen"] == "1"))
    misses = [shape for shape, kernels in rows.items() if [chosen for _, chosen in sorted(kernels)] !=
              [True] + [False] * (len(kernels) - 1)]
    return worst, misses


def write_header(path, constants, fitted_on):
    """constants: {set name: its constants}; fitted_on: {set name: what it was fitted on}."""
    lines = [
        "// Generated by scripts/fit_bf16_cost.py: the bf16 track's cost model's constants",
        "// (bf16_cost.hpp), in the order of CostConstants:",
        "// " + ", ".join(CONSTANTS) + ".",
        "#pragma once",
        "",
        '#include "dispatch/bf16_cost.hpp"',
        "",
        "namespace sgemm {",
        "",
    ]
    for name in SETS:
        lines.append(f"// {fitted_on[name]}")
        lines.append(f"constexpr CostConstants {name}{{{', '.join(f'{x:.6g}' for x in constants[name])}}};")
    lines += ["", "}  // namespace sgemm", ""]
    Path(path).write_text("\n".join(lines))


def read_fitted_on(path):
    """{set name: the comment above it}."""
    lines = Path(path).read_text().split("\n")
    return {name: next(lines[i - 1][3:] for i, line in enumerate(lines) if line.startswith(f"constexpr CostConstants {name}"))
            for name in SETS}


def read_kernel_ratios(paths):
    """{(m, n, k): {kernel: ratio to cuBLAS}} from ./sgemm rows, by their kernel column
    ("14", "20 padded", ...)."""
    ratios = {}
    for path in paths:
        with open(path) as file:
            for row in csv.DictReader(file):
                if row["median_ms"] and row.get("verified") != "false":
                    shape = (int(row["m"]), int(row["n"]), int(row["k"]))
                    ratios.setdefault(shape, {})[row["kernel"]] = float(row["ratio_to_cublas"])
    return ratios


def set_report(stage, terms, times, constants, title, others=None):
    """Markdown: one stage's kernel, each problem's predicted and measured time; with others
    ({shape: {kernel: ratio}}), the other kernels' geomeans on the same problems, over all of
    them and by length of K."""
    keys = sorted(key for key in times if key[0] == stage and key in terms)
    errors = sorted(abs(predicted(terms[key], constants) / times[key][0] - 1) for key in keys)
    lines = [f"# {title}", "", f"{len(keys)} problems. The model's error, predicted over measured time less one: "
             f"median |error| {100 * statistics.median(errors):.1f} %, 90th percentile "
             f"{100 * errors[int(0.9 * (len(errors) - 1))]:.1f} %. Stage {stage}'s geomean ratio to cuBLAS over "
             f"them: {100 * geomean([times[key][1] for key in keys]):.1f} %.", ""]
    if others:
        kernels = sorted({kernel for key in keys for kernel in others.get(key[1:], {})})
        lines += ["Geomean % of cuBLAS over the same problems, each kernel run in its own process:", "",
                  f"| K | problems | stage {stage} | " + " | ".join(kernels) + " |",
                  "|:--|--:|--:|" + "--:|" * len(kernels)]
        for label, member in (("all", lambda k: True), ("K ≤ 300", lambda k: k <= 300),
                              ("300 < K < 5000", lambda k: 300 < k < 5000), ("K ≥ 5000", lambda k: k >= 5000)):
            inside = [key for key in keys if member(key[3]) and all(kernel in others.get(key[1:], {})
                                                                     for kernel in kernels)]
            if inside:
                cells = [f"{100 * geomean([times[key][1] for key in inside]):.1f} %"]
                cells += [f"{100 * geomean([others[key[1:]][kernel] for key in inside]):.1f} %" for kernel in kernels]
                lines.append(f"| {label} | {len(inside)} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["| M | N | K | predicted / measured (us) | % of cuBLAS |", "|--:|--:|--:|--:|--:|"]
    lines += [f"| {m} | {n} | {k} | {predicted(terms[(stage, m, n, k)], constants) * 1e6:.1f} / "
              f"{times[(stage, m, n, k)][0] * 1e6:.1f} | {100 * times[(stage, m, n, k)][1]:.1f} % |"
              for _, m, n, k in keys]
    return "\n".join(lines) + "\n"


def choice_lines(terms, times, constants, stages, names, bands=BANDS):
    """Markdown lines: over the problems timed on every one of `stages`, how often the
    model (each stage's constants: names[stage]) chose the faster, what its wrong choices
    cost, and by band of M each stage's, the choice's and the faster's geomean ratio to
    cuBLAS; then the table of each problem's predictions. Returns (lines, rows)."""
    problems = sorted({key[1:] for key in times if all((stage, *key[1:]) in times for stage in stages)
                       and all((stage, *key[1:]) in terms for stage in stages)})
    rows, errors, losses = [], [], []
    chosen_ratio, faster_ratio = {}, {}
    for m, n, k in problems:
        cells, guess, truth = [], {}, {}
        for stage in stages:
            guess[stage] = predicted(terms[(stage, m, n, k)], constants[names[stage]])
            truth[stage] = times[(stage, m, n, k)][0]
            errors.append(guess[stage] / truth[stage] - 1)
            cells.append(f"{guess[stage] * 1e6:.1f} / {truth[stage] * 1e6:.1f}")
        chosen, faster = min(stages, key=guess.get), min(stages, key=truth.get)
        chosen_ratio[(m, n, k)] = times[(chosen, m, n, k)][1]
        faster_ratio[(m, n, k)] = times[(faster, m, n, k)][1]
        losses.append(truth[chosen] / truth[faster] - 1)
        rows.append(f"| {m} | {n} | {k} | " + " | ".join(cells) + f" | {chosen} | {faster} | {100 * losses[-1]:.1f} % |")
    if not problems:
        return [], []
    absolute = sorted(abs(e) for e in errors)
    right = sum(loss == 0 for loss in losses)
    names_text = " and ".join(f"stage {stage}" for stage in stages)
    lines = [f"{len(problems)} problems, each timed on {names_text}. The model's error, predicted over measured "
             f"time less one, over the kernels: median |error| {100 * statistics.median(absolute):.1f} %, 90th "
             f"percentile {100 * absolute[int(0.9 * (len(absolute) - 1))]:.1f} %. It chose the faster kernel on "
             f"{right} of {len(problems)}; its wrong choices cost a geomean "
             f"{100 * (geomean([1 + x for x in losses]) - 1):.2f} % over all problems, at most "
             f"{100 * max(losses):.1f} %.", "",
             "Geomean % of cuBLAS by band of M: each kernel on every problem, the kernel the model chose, and the "
             "faster:", "",
             "| band | problems | " + " | ".join(f"stage {stage}" for stage in stages) +
             " | the model's choice | the faster |", "|:--|--:|" + "--:|" * (len(stages) + 2)]
    for band, member in bands:
        inside = [p for p in problems if member(p[0])]
        if inside:
            cells = [f"{100 * geomean([times[(stage, *p)][1] for p in inside]):.1f} %" for stage in stages]
            cells += [f"{100 * geomean([ratios[p] for p in inside]):.1f} %" for ratios in (chosen_ratio, faster_ratio)]
            lines.append(f"| {band} | {len(inside)} | " + " | ".join(cells) + " |")
    header = ["", "| M | N | K | " + " | ".join(f"stage {stage} predicted / measured (us)" for stage in stages) +
              " | chosen | faster | lost |", "|--:|--:|--:|" + "--:|" * len(stages) + ":-:|:-:|--:|"]
    return lines, header + rows


def report(terms, times, constants, title):
    """Markdown: by band of M, each kernel's and the model's choice's geomean ratio to
    cuBLAS; the model's error and its choices; then each problem's predicted and measured
    times."""
    lines, rows = choice_lines(terms, times, constants, STAGES, {stage: f"kStage{stage}Cost" for stage in STAGES})
    return "\n".join([f"# {title}", "", *lines, *rows]) + "\n"


def timed_off_multiples(times):
    """The stages of OFF_MULTIPLES that the times hold rows of."""
    return tuple(stage for stage in OFF_MULTIPLES if any(key[0] == stage for key in times))


def off_multiples_report(terms, times, constants, title):
    """Markdown: off the multiples of 8, the model's choice among the kernels the track
    weighs there (OFF_MULTIPLES)."""
    lines, rows = choice_lines(terms, times, constants, timed_off_multiples(times), OFF_MULTIPLES)
    return "\n".join([f"# {title}", "", *lines, *rows]) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description="Fit or evaluate the bf16 track's cost model")
    parser.add_argument("--terms", help="sgemm_model's CSV for the problems")
    parser.add_argument("--times", nargs="+", default=[], help="./sgemm CSVs of stages 20 and 25 on them")
    parser.add_argument("--timing", default="graph", help="the timing to use where a problem has several")
    parser.add_argument("--header", default=str(HEADER), help=f"the constants' header (default {HEADER})")
    parser.add_argument("--report", help="write the report here")
    parser.add_argument("--fitted-on", default="", help="what the problems were, for the header's comment")
    parser.add_argument("--evaluate", action="store_true", help="fit nothing: report the header's model on these")
    parser.add_argument("--prior", action="store_true", help="write the fit's starting constants to the header")
    parser.add_argument("--set", choices=tuple(OFF_MULTIPLES.values()),
                        help="fit this set of constants alone, on its stage's rows, problems off the multiples of 8")
    parser.add_argument("--off-multiples", action="store_true",
                        help="with --evaluate: the choice between the kernels that run shapes off the multiples")
    parser.add_argument("--compare", nargs="+", default=[],
                        help="with --set: ./sgemm CSVs of other kernels on the same problems, for the report")
    parser.add_argument("--ceilings", help="with --prior: the GPU's ceilings.csv")
    parser.add_argument("--check", help="an sgemm_model CSV: does this model give its predictions and choices?")
    args = parser.parse_args(argv)
    header = repo_path(args.header)
    if args.check:
        worst, misses = check(args.check, read_header(header))
        print(f"largest difference from sgemm_model's predictions: {worst:.2e}; shapes where the kernel chosen "
              f"is not the one of least time: {misses or 'none'}")
        # Each term and time written to 6 significant digits: a few parts in a million apart.
        return 0 if worst < 1e-4 and not misses else 1
    if args.prior:
        note = f"Not fitted: the fit's starting point, from the GPU's ceilings ({Path(args.ceilings).name})."
        write_header(header, prior(args.ceilings), dict.fromkeys(SETS, note))
        return 0
    terms, times = read_terms(args.terms), read_times(args.times, args.timing)
    constants, fitted_on = read_header(header), read_fitted_on(header)
    counted = len({key[1:] for key in times})
    if args.set:
        stage = SETS[args.set]
        what = {"kStage25ByHandCost": "Stage 25 loading rows by hand",
                "kStage20PaddedCost": "Stage 20 on padded copies"}.get(args.set, f"Stage {stage}")
        samples = [(terms[key], seconds) for key, (seconds, _) in times.items() if key[0] == stage and key in terms]
        if args.set == "kStage20PaddedCost":
            start = tuple(constants["kStage20Cost"][i] if i not in PADDED_FREE else c
                          for i, c in enumerate(constants[args.set]))
            constants[args.set] = fit(samples, start, PADDED_FREE)
        else:
            constants[args.set] = fit(samples, constants[args.set])
        fitted_on[args.set] = f"{what}: fitted on {len(samples)} problems: {args.fitted_on}."
        write_header(header, constants, fitted_on)
        text = set_report(stage, terms, times, constants[args.set],
                          f"{what}, the cost model's fit: {args.fitted_on}", read_kernel_ratios(args.compare))
        lines, rows = choice_lines(terms, times, constants, timed_off_multiples(times), OFF_MULTIPLES)
        if lines:
            text += "\n".join(["", "## The model's choice among the kernels it weighs off the multiples", "",
                                *lines, *rows]) + "\n"
    elif args.evaluate and args.off_multiples:
        text = off_multiples_report(terms, times, constants,
                                    "Off the multiples of 8, the bf16 cost model's choice on problems it was not "
                                    "fitted on")
    elif args.evaluate:
        text = report(terms, times, constants, "The bf16 cost model on problems it was not fitted on")
    else:
        for stage in STAGES:
            name = f"kStage{stage}Cost"
            samples = [(terms[key], seconds) for key, (seconds, _) in times.items() if key[0] == stage and key in terms]
            constants[name] = fit(samples, constants[name])
            fitted_on[name] = f"Fitted on {counted} problems: {args.fitted_on}."
        write_header(header, constants, fitted_on)
        text = report(terms, times, constants, f"The bf16 cost model's fit: {args.fitted_on}")
    if args.report:
        Path(args.report).write_text(text)
    print(text.split("\n")[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
