#!/usr/bin/env python3
"""Fit stage 30's plan model (dispatch/bf16_tiles.hpp) on measured times of its plans, or
say how well the fitted model chooses among the plans of other problems.

    python3 scripts/fit_bf16_tiles.py --plans plans.csv --fitted-on "the draw of seed 12"
        [--stage 31] [--header dispatch/bf16_tiles_fit.hpp] [--report FILE.md]
    python3 scripts/fit_bf16_tiles.py --evaluate --plans plans.csv --report FILE.md

--plans: what `sgemm_model --track bf16-tiles --time` wrote (each timed plan's terms and
time); with --stage 31, what `--track fp8-tiles --time` wrote, and the constants are stage
31's own (dispatch/fp8_tiles_fit.hpp: the same model on FP8 shapes counted in its K tiles);
with --stage 29, what `--track fp8 --time` wrote: stage 29's tiles in stage 31's model, with
their own constants (dispatch/fp8_fit.hpp). Stage 31's model adds to stage 30's a consumer's
path through a K block and D's two bytes (dispatch/fp8_tiles.hpp): one more constant, the
promotion's. The
constants are fitted by least squares on the logarithm of the time (so a 5 us plan weighs
as much as a 5 ms one), by Levenberg-Marquardt in plain Python. The report
gives the model's error, and per problem the plan it chooses among those timed against the
fastest timed: the time its choice loses. --evaluate fits nothing: it reads the constants
from the header and reports on the plans given (a draw the model was not fitted on).
--track-with (with --evaluate --stage 31): stage 29's timed tiles of the same problems; the
report is the fp8 track's choice (dispatch/fp8.cpp: the faster predicted of stage 31's plans
and stage 29's tiles, each with its constants) against the best timed of both and against
stage 29 in its own model's tile, each run against cuBLASLt in its own process. Times of the
stage's sources other than this tree's (the rows' `sources`) are refused unless --stale-ok.
"""
import argparse
import csv
import math
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fit_bf16_cost import solve  # noqa: E402
from source_hashes import refuse_times_measured_elsewhere  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
HEADERS = {29: REPO / "dispatch" / "fp8_fit.hpp", 30: REPO / "dispatch" / "bf16_tiles_fit.hpp",
           31: REPO / "dispatch" / "fp8_tiles_fit.hpp"}
NAMES = {29: "kStage29Cost", 30: "kAnyTileCost", 31: "kFp8AnyTileCost"}
CONSTANTS = ("fixed_seconds", "dram_bytes_per_second", "load_bytes_per_second", "macs_per_second",
             "wgmma_seconds", "store_bytes_per_second", "direct_store_bytes_per_second", "split_bytes_per_second",
             "cluster_split_bytes_per_second", "tile_seconds")
FP8_CONSTANTS = CONSTANTS + ("promoted_value_seconds",)
TERMS = ("sm_k_tiles", "step_bytes", "step_macs", "step_wgmmas", "dram_bytes", "sm_store_bytes", "sm_split_bytes",
         "sm_cluster_split_bytes")
# The wgmma term starts from a small time, not zero: the fit works on logarithms.
FLOOR = 1e-12
BANDS = (("M ≤ 256", lambda m: m <= 256), ("256 < M < 1024", lambda m: 256 < m < 1024),
         ("M ≥ 1024", lambda m: m >= 1024), ("all", lambda m: True))


def predicted(terms, direct_stores, c):
    """bf16_tiles.cpp's predicted_seconds; with FP8's constants, fp8_tiles.cpp's
    fp8_predicted_seconds (the K block no shorter than a consumer's path through it, and a
    cost each tile an SM starts)."""
    fp8 = len(c) == len(FP8_CONSTANTS)
    step = max(terms["step_bytes"] / c[2], terms["step_macs"] / c[3] + terms["step_wgmmas"] * c[4])
    if fp8:
        step = max(step, terms["step_macs"] / terms["consumers"] / c[3] + terms["promoted_values"] * c[10])
    # FP8's D is bf16: two bytes a value where stage 30's terms count C's four.
    dram = terms["dram_bytes"] - (2 * terms["d_values"] if fp8 else 0.0)
    store_rate = c[6] if direct_stores else c[5]
    return (c[0] + max(dram / c[1], terms["sm_k_tiles"] * step) + terms["sm_store_bytes"] / store_rate
            + terms["sm_split_bytes"] / c[7] + terms["sm_cluster_split_bytes"] / c[8] + terms["sm_tiles"] * c[9])


def read_plans(path, k_tile=128):
    """[(problem, plan name, terms, direct stores, seconds, cuBLAS seconds)] of the timed rows
    (files written before the split in the cluster have no splits: 1, and no term for it).
    k_tile: the K values a K tile of the rows' sm_k_tiles holds, 64 for stage 30's bf16 plans,
    128 (a K block) for the FP8 stages'."""
    plans = []
    with open(path, newline="") as file:
        for row in csv.DictReader(file):
            if not row["median_ms"]:
                continue
            splits = int(row.get("splits") or 1)
            name = (f"{'swapped ' if row['weights_as_rows'] == '1' else ''}{row['rows']}x{row['columns']}"
                    f"{' cluster ' + row['cluster'] if row['cluster'] != '1' else ''}"
                    f"{' stream-K' if row['split_tail'] == '1' else ''}"
                    f"{f' K split {splits} ways' if splits > 1 else ''}")
            # D from registers: as the row says (stage 29's tiles), else where swapped or split,
            # or N is off 8 (stage 31: out of shared memory by the threads, priced alike).
            direct = (row["direct_stores"] == "1" if row.get("direct_stores")
                      else row["weights_as_rows"] == "1" or splits > 1 or int(row["n"]) % 8 != 0)
            terms = {term: float(row.get(term) or 0) for term in TERMS}
            # The tiles the busiest SM starts (the plans' sm_tiles), from its K tiles over K's.
            terms["sm_tiles"] = math.ceil(terms["sm_k_tiles"] / math.ceil(int(row["k"]) / k_tile) - 1e-9)
            # Stage 31's model's FP8 terms (fp8_terms, stage29_fp8_terms: stage 29's rows say its
            # two consumers): a consumer's share of the tile, promoted every K block; D's values.
            terms["consumers"] = float(row.get("consumers") or 1)
            terms["promoted_values"] = float(row.get("rows") or 0) * float(row.get("columns") or 0) / terms["consumers"]
            terms["d_values"] = float(row["m"]) * float(row["n"])
            plans.append(((int(row["m"]), int(row["n"]), int(row["k"])), name, terms, direct,
                          float(row["median_ms"]) * 1e-3, float(row["cublas_median_ms"]) * 1e-3))
    return plans


def fit(plans, start, iterations=200):
    """The constants of least squared log error, each fitted as its logarithm (Levenberg-Marquardt)."""
    def residuals(x):
        c = [math.exp(v) for v in x]
        return [math.log(predicted(terms, swapped, c) / seconds) for _, _, terms, swapped, seconds, _ in plans]

    x = [math.log(max(v, FLOOR)) for v in start]
    r = residuals(x)
    damping = 1e-3
    for _ in range(iterations):
        columns = []
        for i in range(len(x)):
            step = list(x)
            step[i] += 1e-6
            columns.append([(a - b) / 1e-6 for a, b in zip(residuals(step), r)])
        normal = [[sum(p * q for p, q in zip(columns[i], columns[j])) for j in range(len(x))] for i in range(len(x))]
        gradient = [sum(p * q for p, q in zip(columns[i], r)) for i in range(len(x))]
        cost = sum(v * v for v in r)
        while True:
            damped = [[normal[i][j] + (damping * (normal[i][i] + 1e-12) if i == j else 0.0) for j in range(len(x))]
                      for i in range(len(x))]
            # A step of at most a factor e^2 in any constant: far steps overflow.
            delta = [max(-2.0, min(2.0, d)) for d in solve(damped, [-g for g in gradient])]
            candidate = residuals([a + b for a, b in zip(x, delta)])
            if sum(v * v for v in candidate) < cost:
                x, r, damping = [a + b for a, b in zip(x, delta)], candidate, damping / 3
                break
            damping *= 3
            if damping > 1e12:
                return [math.exp(v) for v in x]
        if max(abs(d) for d in delta) < 1e-9:
            break
    return [math.exp(v) for v in x]


def geomean(values):
    return math.exp(statistics.fmean(math.log(v) for v in values))


def report(plans, constants, title, command):
    errors = [abs(math.log(predicted(t, s, constants) / seconds)) for _, _, t, s, seconds, _ in plans]
    by_problem = defaultdict(list)
    for plan in plans:
        by_problem[plan[0]].append(plan)
    lines = [f"# {title}", "", f"Generated by `{command}`.", "",
             f"{len(plans)} timed plans of {len(by_problem)} problems. The model's error on a plan's time: "
             f"median {100 * (math.exp(statistics.median(errors)) - 1):.1f} %, 90th percentile "
             f"{100 * (math.exp(sorted(errors)[int(0.9 * (len(errors) - 1))]) - 1):.1f} %.", "",
             "Per problem, the plan the model chooses among those timed against the fastest timed, and each "
             "against cuBLAS (geomean):", "",
             "| band | problems | chosen / fastest (time) | choice within 2 % | fastest timed, of cuBLAS | "
             "chosen, of cuBLAS |", "|:--|--:|--:|--:|--:|--:|"]
    rows = []
    for problem, options in sorted(by_problem.items()):
        chosen = min(options, key=lambda p: predicted(p[2], p[3], constants))
        fastest = min(options, key=lambda p: p[4])
        rows.append((problem, chosen, fastest))
    for band, member in BANDS:
        picked = [row for row in rows if member(row[0][0])]
        if not picked:
            continue
        losses = [chosen[4] / fastest[4] for _, chosen, fastest in picked]
        lines.append(f"| {band} | {len(picked)} | {geomean(losses):.3f} | {sum(x <= 1.02 for x in losses)} | "
                     f"{100 * geomean([f[5] / f[4] for _, _, f in picked]):.1f} % | "
                     f"{100 * geomean([c[5] / c[4] for _, c, _ in picked]):.1f} % |")
    lines += ["", "| problem | chosen | fastest timed | chosen / fastest | chosen, of cuBLAS |",
              "|:--|:--|:--|--:|--:|"]
    for problem, chosen, fastest in rows:
        lines.append(f"| {problem[0]} x {problem[1]} x {problem[2]} | {chosen[1]} | {fastest[1]} | "
                     f"{chosen[4] / fastest[4]:.3f} | {100 * chosen[5] / chosen[4]:.1f} % |")
    return "\n".join(lines) + "\n"


def track_report(plans31, plans29, title, command):
    """The fp8 track's choice per problem (see the docstring's --track-with), by band of M."""
    c31, c29 = read_header(HEADERS[31], NAMES[31]), read_header(HEADERS[29], NAMES[29])
    own = {}
    with open(plans29[1], newline="") as file:
        for row in csv.DictReader(file):
            if row["chosen"] == "1" and row["median_ms"]:
                own[(int(row["m"]), int(row["n"]), int(row["k"]))] = (float(row["cublas_median_ms"])
                                                                      / float(row["median_ms"]))
    options = defaultdict(list)
    for plans, constants, stage in ((plans31, c31, 31), (plans29[0], c29, 29)):
        for problem, name, terms, direct, seconds, cublas in plans:
            options[problem].append((predicted(terms, direct, constants), cublas / seconds, stage, name))
    rows = []
    for problem, weighed in sorted(options.items()):
        if problem not in own or not any(option[2] == 31 for option in weighed):
            continue
        chosen = min(weighed, key=lambda option: option[0])
        best = max(weighed, key=lambda option: option[1])
        rows.append((problem, chosen, best, own[problem]))
    lines = [f"# {title}", "", f"Generated by `{command}`.", "",
             "Per problem, the kernel and plan the fp8 track chooses among those timed (stage 31's plans, stage "
             "29's tiles), each timed against cuBLASLt in its own process: geomean of the ratio to cuBLASLt of "
             "the track's choice, of the best timed, and of stage 29 in its own model's tile (the track before "
             "it weighed stage 31).", "",
             "| band | problems | the track's choice | stage 31 chosen | best timed | stage 29, its own tile |",
             "|:--|--:|--:|--:|--:|--:|"]
    for band, member in BANDS:
        picked = [row for row in rows if member(row[0][0])]
        if picked:
            lines.append(f"| {band} | {len(picked)} | {100 * geomean([c[1] for _, c, _, _ in picked]):.1f} % | "
                         f"{sum(c[2] == 31 for _, c, _, _ in picked)} | "
                         f"{100 * geomean([b[1] for _, _, b, _ in picked]):.1f} % | "
                         f"{100 * geomean([o for _, _, _, o in picked]):.1f} % |")
    lines += ["", "| problem | chosen | of cuBLASLt | best timed | of cuBLASLt | stage 29, its own tile |",
              "|:--|:--|--:|:--|--:|--:|"]
    for problem, chosen, best, own_ratio in rows:
        lines.append(f"| {problem[0]} x {problem[1]} x {problem[2]} | {chosen[2]}: {chosen[3]} | "
                     f"{100 * chosen[1]:.1f} % | {best[2]}: {best[3]} | {100 * best[1]:.1f} % | "
                     f"{100 * own_ratio:.1f} % |")
    return "\n".join(lines) + "\n"


def read_header(path, name="kAnyTileCost"):
    """The constants `name` in the header at path; where it is another stage's (`= kAnyTileCost;`,
    not fitted on its own plans yet), that stage's."""
    text = Path(path).read_text()
    found = re.search(r"\b" + name + r"\{([^}]*)\}", text)
    if found:
        return [float(x) for x in found.group(1).split(",")]
    alias = re.search(r"\b" + name + r" = (\w+);", text)
    if alias and alias.group(1) in NAMES.values():
        stage = next(stage for stage, other in NAMES.items() if other == alias.group(1))
        return read_header(HEADERS[stage], alias.group(1))
    sys.exit(f"fit_bf16_tiles: {path} defines no {name}")


def write_header(path, constants, fitted_on, name="kAnyTileCost"):
    text = Path(path).read_text()
    values = ", ".join(f"{v:.6g}" for v in constants)
    text, count = re.subn(r"// .*\nconstexpr (\w+) " + name + r"(\{[^}]*\}| = \w+);",
                          lambda found: f"// Fitted by scripts/fit_bf16_tiles.py on {fitted_on}.\n"
                                        f"constexpr {found.group(1)} {name}{{{values}}};", text, count=1)
    if count != 1:
        sys.exit(f"fit_bf16_tiles: {path} defines no {name} to replace")
    Path(path).write_text(text)


def timed_sources(path):
    """The sources each timed row of a plans file names (sgemm_model's `sources`; "" in files
    from before it named them)."""
    with open(path, newline="") as file:
        return [row.get("sources") or "" for row in csv.DictReader(file) if row["median_ms"]]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plans", required=True, nargs="+")
    parser.add_argument("--stage", type=int, choices=sorted(HEADERS), default=30,
                        help="whose constants: stage 30's (bf16 plans, default), stage 31's (FP8 plans) or "
                             "stage 29's (its tiles, as stage 31's model sees them)")
    parser.add_argument("--header", help="the header of the constants (default: the stage's under dispatch/)")
    parser.add_argument("--fitted-on", default="the plans given")
    parser.add_argument("--evaluate", action="store_true")
    parser.add_argument("--track-with", help="with --evaluate --stage 31: stage 29's timed tiles (the fp8 track)")
    parser.add_argument("--report")
    parser.add_argument("--stale-ok", action="store_true",
                        help="fit or evaluate on times of the stage's sources other than this tree's")
    args = parser.parse_args(argv)
    if args.track_with and not (args.evaluate and args.stage == 31):
        sys.exit("fit_bf16_tiles: --track-with goes with --evaluate --stage 31")
    k_tile = 64 if args.stage == 30 else 128
    plans = [plan for path in args.plans for plan in read_plans(path, k_tile)]
    if not plans:
        sys.exit("fit_bf16_tiles: no timed plans")
    if not args.stale_ok:
        recorded = [(str(args.stage), hash_) for path in args.plans for hash_ in timed_sources(path)]
        if args.track_with:
            recorded += [("29", hash_) for hash_ in timed_sources(args.track_with)]
        refuse_times_measured_elsewhere(recorded, "fit_bf16_tiles.py")
    header, name = args.header or str(HEADERS[args.stage]), NAMES[args.stage]
    constants = read_header(header, name)
    command = "python3 scripts/fit_bf16_tiles.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if not args.evaluate:
        constants = fit(plans, constants)
        write_header(header, constants, args.fitted_on, name)
        print("fitted:", ", ".join(f"{name} {value:.4g}" for name, value in zip(FP8_CONSTANTS, constants)))
    title = (f"Stage {args.stage}'s plan model "
             f"{'on plans it was not fitted on' if args.evaluate else 'fitted on ' + args.fitted_on}")
    text = report(plans, constants, title, command)
    if args.track_with:
        text = track_report(plans, (read_plans(args.track_with), args.track_with),
                            "The fp8 track's choice between stages 29 and 31", command)
    if args.report:
        Path(args.report).parent.mkdir(parents=True, exist_ok=True)
        Path(args.report).write_text(text)
    print(text.split("\n\n")[2])
    print("\n".join(line for line in text.splitlines()
                    if line.startswith("| M") or line.startswith("| 256") or line.startswith("| all")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
