#!/usr/bin/env python3
"""Fit the fp32 track's model (dispatch/fp32.cpp) on measured times of stage 10's plans, or
say how well the fitted model chooses on problems it was not fitted on.

    python3 scripts/fit_fp32_model.py --plans plans.csv ... [--fitted-on "the draw of seed 5"]
        [--header dispatch/fp32_fit.hpp]
        [--report results/<gpu>/experiments/fits/fp32_model/fp32_model_fit.md]
    python3 scripts/fit_fp32_model.py --evaluate --plans plans.csv ... --report FILE
    python3 scripts/fit_fp32_model.py --check plans.csv

--plans: what `sgemm_model --track fp32 --time` wrote: for each problem, plans of stage 10's
kernel (a tile and a split of K), each plan's terms and its time and cuBLAS SGEMM's, by CUDA
graphs. The fixed times, each tile's two shares of an SM's FFMA rate and the cost of a value
loaded alone (rows off 16 bytes) are fitted by least
squares on the logarithm of the time, so that a 5 us plan weighs as much as a 5 ms one; the
FFMA and DRAM rates are kept as the header has them (the GPU's measured ceilings). Then the
margin by which the track keeps stage 10's own plan (dispatch/fp32.cpp, fp32_track_plan): of
0 to 15 %, the one whose choices run fastest in geomean over the problems where stage 10's own
plan was timed. The report: how often the model, refitted, chooses the fastest plan timed, what its other
choices cost, and by band of M the geomean ratio to SGEMM of its choice and of the fastest
plan timed. --evaluate fits nothing and reports the header's model. --check: the model here
gives the times sgemm_model wrote (from the header it was built with). Times of stage 10's
sources other than this tree's (the rows' `sources`) are refused unless --stale-ok: a fit on
them models a kernel that is no longer there.
"""
import argparse
import csv
import math
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fit_bf16_cost import BANDS, fit, geomean  # noqa: E402
from source_hashes import refuse_times_measured_elsewhere  # noqa: E402
from stage_runs import repo_path  # noqa: E402

HEADER = Path("dispatch/fp32_fit.hpp")
# Fp32ModelConstants, in order; the first FITTED are fitted, the rates kept.
CONSTANTS = ("launch_seconds", "split_launch_seconds", "block_start_seconds", "float_load_fmas",
             "tile_value_seconds", "fmas_per_second_per_sm", "dram_bytes_per_second")
FITTED = 5
TILE_SIZES = ("block_m", "block_n", "block_k")
TERMS = ("block_fmas", "full_waves", "last_wave", "blocks_per_sm", "dram_bytes", "split_bytes", "float_loads_per_fma")


# Stage 10's own launcher (10_tuned.cu, tuned_choice; k_parts in 10_tuned.cuh): the tiles of
# few rows by M, else the tuner's, and the split of K that finishes soonest in whole waves.
OWN_TILES = ((16, "16x256"), (32, "32x256"))
ROWS64_TILE, ROWS64_MIN_BLOCKS, TUNED_TILE = "64x256", 16, "128x128"
K_PARTS_MOST, K_PARTS_MIN_K_TILES, K_PART_COST = 64, 16, 0.03
MARGINS = [i / 200 for i in range(31)]  # the margins the fit weighs: 0 to 15 %
# How much longer than stage 10's own plan's the track's chains may be (dispatch/fp32.hpp).
LONGEST_CHAIN_OVER_OWN = float(re.search(r"kFp32LongestChainOverOwn = ([0-9.]+);",
                                         repo_path("dispatch/fp32.hpp").read_text()).group(1))


class Model:
    """The header's constants: the fixed times and rates, each tile's (full, alone) shares, and
    the margin by which the track keeps stage 10's own plan."""

    def __init__(self, constants, shares, margin=0.0):
        self.constants = tuple(constants)
        self.shares = dict(shares)  # {tile: (full, alone)}
        self.margin = margin

    def vector(self):
        """The fitted values, in the order of from_vector."""
        return self.constants[:FITTED] + tuple(x for tile in self.shares for x in self.shares[tile])

    def from_vector(self, values):
        values = tuple(values)
        shares = {tile: (values[FITTED + 2 * i], values[FITTED + 2 * i + 1]) for i, tile in enumerate(self.shares)}
        return Model(values[:FITTED] + self.constants[FITTED:], shares, self.margin)


def predicted(terms, model):
    """The model of dispatch/fp32.cpp (fp32_predicted_seconds), in seconds."""
    launch, split_launch, block_start, float_load_fmas, tile_value, fmas_per_second, dram_rate = model.constants
    full, alone = model.shares[terms["tile"]]
    fma_times = terms["block_fmas"] * (1 + float_load_fmas * terms["float_loads_per_fma"])
    start = block_start + tile_value * terms["block_m"] * terms["block_n"]

    def wave(blocks):
        return fma_times / (min(alone, full / blocks) * fmas_per_second) + start

    compute = terms["full_waves"] * wave(terms["blocks_per_sm"]) + (wave(terms["last_wave"]) if terms["last_wave"] > 0 else 0)
    split = split_launch + terms["split_bytes"] / dram_rate if terms["split_bytes"] > 0 else 0.0
    return launch + max(compute, terms["dram_bytes"] / dram_rate) + split


def ceil_div(x, y):
    return -(-x // y)


def k_parts(tiles, k_tiles, slots):
    """Stage 10's k_parts: the parts of K that finish soonest, counting whole waves."""
    def time(parts):
        return ceil_div(tiles * parts, slots) * ceil_div(k_tiles, parts) * (1 + K_PART_COST * parts if parts > 1 else 1)
    best = 1
    for parts in range(2, K_PARTS_MOST + 1):
        if k_tiles // parts < K_PARTS_MIN_K_TILES:
            break
        if time(parts) < time(best):
            best = parts
    return best


def own_plan(shape, plans, sms):
    """(tile, parts): stage 10's own plan for the shape, on `sms` SMs that each hold a tile's
    blocks_per_sm blocks (fp32_stage10_plan); the tiles' sizes are the plans'. None where its
    tile is not among them."""
    m, n, k = shape
    tiles = {plan["tile"]: plan for plan in plans}
    tile = next((name for rows, name in OWN_TILES if m <= rows), None)
    if tile is None:
        rows64 = tiles.get(ROWS64_TILE)
        tile = ROWS64_TILE if rows64 and m <= rows64["block_m"] and \
            ceil_div(n, rows64["block_n"]) >= ROWS64_MIN_BLOCKS else TUNED_TILE
    if tile not in tiles:
        return None
    t = tiles[tile]
    count = ceil_div(m, t["block_m"]) * ceil_div(n, t["block_n"])
    return tile, k_parts(count, ceil_div(k, t["block_k"]), int(t["blocks_per_sm"]) * sms)


def own_of(shape, plans, sms):
    """Stage 10's own plan among `plans`, or None: as sgemm_model marked it (on a GPU, from the
    blocks it runs at once), or as own_plan finds it where the file does not say."""
    if any("own" in plan for plan in plans):
        return next((plan for plan in plans if plan["own"]), None)
    return found_own(shape, plans, sms)


def found_own(shape, plans, sms):
    """The plan of `plans` that own_plan names, or None."""
    own = own_plan(shape, plans, sms)
    return next((plan for plan in plans if own and (plan["tile"], plan["parts"]) == own), None)


def chain(shape, plan):
    """The K values a thread sums in one chain (fp32_chain): a part's K steps."""
    block_k = int(plan["block_k"])
    return ceil_div(ceil_div(shape[2], block_k), plan["parts"]) * block_k


def track_choice(shape, plans, model, sms):
    """The plan the track runs (fp32_track_plan): stage 10's own, unless the model predicts one
    faster by more than its margin, of those whose chains are at most LONGEST_CHAIN_OVER_OWN
    times the own plan's; None where the own plan is not among `plans`."""
    own = own_of(shape, plans, sms)
    if own is None:
        return None
    longest = LONGEST_CHAIN_OVER_OWN * chain(shape, own)
    fastest = min((plan for plan in plans if chain(shape, plan) <= longest), key=lambda plan: predicted(plan, model))
    return fastest if predicted(fastest, model) * (1 + model.margin) < predicted(own, model) else own


def read_plans(paths):
    """{(m, n, k): [plan]}: each plan a dict of its tile, parts, terms, the time sgemm_model
    predicted and, where timed, its measured seconds and cuBLAS's."""
    problems = {}
    for path in paths:
        with open(path) as file:
            for row in csv.DictReader(file):
                plan = {name: float(row[name]) for name in TERMS + TILE_SIZES}
                plan.update(tile=row["tile"], parts=int(row["parts"]), predicted_us=float(row["predicted_us"]),
                            chosen=row["chosen"] == "1")
                if "own" in row:  # stage 10's own plan as sgemm_model found it (files before say nothing)
                    plan["own"] = row["own"] == "1"
                if row["median_ms"]:
                    plan.update(seconds=float(row["median_ms"]) * 1e-3, cublas=float(row["cublas_median_ms"]) * 1e-3,
                                sources=row.get("sources", ""))
                problems.setdefault((int(row["m"]), int(row["n"]), int(row["k"])), []).append(plan)
    return problems


def read_header(path):
    text = Path(path).read_text()
    constants = tuple(float(x) for x in re.search(r"kFp32Model\{([^}]*)\}", text).group(1).split(","))
    shares = {tile: (float(full), float(alone))
              for tile, full, alone in re.findall(r'\{"([0-9x]+)", ([0-9.e+-]+), ([0-9.e+-]+)\}', text)}
    margin = float(re.search(r"kFp32OwnPlanMargin = ([0-9.e+-]+);", text).group(1))
    fitted_on = re.search(r"\n// (.*)\nconstexpr Fp32ModelConstants", text).group(1)
    return Model(constants, shares, margin), fitted_on


def write_header(path, model, fitted_on):
    lines = [
        "// Generated by scripts/fit_fp32_model.py: the fp32 track's model's constants (fp32.hpp).",
        "#pragma once",
        "",
        '#include "dispatch/fp32.hpp"',
        "",
        "namespace sgemm {",
        "",
        f"// {fitted_on}",
        f"constexpr Fp32ModelConstants kFp32Model{{{', '.join(f'{x:.6g}' for x in model.constants)}}};",
        "",
        "// Each tile's shares of an SM's FFMA rate, full and alone.",
        "constexpr Fp32TileShares kFp32TileShares[] = {",
        *(f'    {{"{tile}", {full:.6g}, {alone:.6g}}},' for tile, (full, alone) in model.shares.items()),
        "};",
        "",
        "// The track keeps stage 10's own plan unless the model predicts another faster by more than this.",
        f"constexpr double kFp32OwnPlanMargin = {model.margin:.6g};",
        "",
        "}  // namespace sgemm",
        "",
    ]
    Path(path).write_text("\n".join(lines))


def with_blocks_per_sm(problems, blocks_per_sm, sms):
    """The plans with the waves of the tiles in `blocks_per_sm` ({tile: blocks an SM}) worked
    out again (fp32_terms), for a file written when the model took another count for them."""
    def again(shape, plan):
        if plan["tile"] not in blocks_per_sm:
            return plan
        held = blocks_per_sm[plan["tile"]]
        m, n, _ = shape
        on_busiest = ceil_div(ceil_div(m, int(plan["block_m"])) * ceil_div(n, int(plan["block_n"])) * plan["parts"],
                              sms)
        return dict(plan, blocks_per_sm=float(held), full_waves=float(on_busiest // held),
                    last_wave=float(on_busiest % held))
    return {shape: [again(shape, plan) for plan in plans] for shape, plans in problems.items()}


def timed(problems):
    """The problems with at least one plan timed, each with its timed plans only."""
    kept = {shape: [plan for plan in plans if "seconds" in plan] for shape, plans in problems.items()}
    return {shape: plans for shape, plans in kept.items() if plans}


def fit_model(problems, start, sms):
    samples = [(plan, plan["seconds"]) for plans in problems.values() for plan in plans]
    model = start.from_vector(fit(samples, start.vector(), predict=lambda terms, values: predicted(
        terms, start.from_vector(values))))
    return fit_margin(problems, model, sms)


def choices_ratio(problems, model, sms):
    """The geomean ratio to SGEMM of the track's choices, over the problems where stage 10's
    own plan was timed (None: none)."""
    chosen = [track_choice(shape, plans, model, sms) for shape, plans in problems.items()]
    ratios = [plan["cublas"] / plan["seconds"] for plan in chosen if plan is not None]
    return geomean(ratios) if ratios else None


def fit_margin(problems, model, sms):
    """The model with the margin of MARGINS whose choices run fastest (the smallest of ties);
    as it was where stage 10's own plan was timed nowhere."""
    ratios = [choices_ratio(problems, Model(model.constants, model.shares, margin), sms) for margin in MARGINS]
    if ratios[0] is None:
        return model
    return Model(model.constants, model.shares, MARGINS[ratios.index(max(ratios))])


def plan_name(plan):
    """"128x64 / 3": the tile and the parts of K."""
    return f"{plan['tile']} / {plan['parts']}"


def report(problems, model, title, sms):
    """Markdown: the model's error; how the track chooses among the plans timed (stage 10's own
    plan unless the model predicts one faster by more than the margin; where the own plan was
    not timed, the model's fastest), and by band of M the geomean % of SGEMM of its choice, of
    the fastest plan timed and of stage 10's own plan where timed; then each problem."""
    errors, losses, rows = [], [], []
    chosen_ratio, fastest_ratio, own_ratio, alone_ratio = {}, {}, {}, {}
    behind_own = 0
    for shape in sorted(problems):
        plans = problems[shape]
        for plan in plans:
            errors.append(abs(predicted(plan, model) / plan["seconds"] - 1))
        chosen = track_choice(shape, plans, model, sms) or min(plans, key=lambda plan: predicted(plan, model))
        fastest = min(plans, key=lambda plan: plan["seconds"])
        alone = min(plans, key=lambda plan: predicted(plan, model))
        alone_ratio[shape] = alone["cublas"] / alone["seconds"]
        chosen_ratio[shape] = chosen["cublas"] / chosen["seconds"]
        fastest_ratio[shape] = fastest["cublas"] / fastest["seconds"]
        own = own_of(shape, plans, sms)
        if own:
            own_ratio[shape] = own["cublas"] / own["seconds"]
            behind_own += chosen["seconds"] > 1.02 * own["seconds"]
        losses.append(chosen["seconds"] / fastest["seconds"] - 1)
        rows.append(f"| {shape[0]} | {shape[1]} | {shape[2]} | {plan_name(chosen)} | "
                    f"{predicted(chosen, model) * 1e6:.1f} / {chosen['seconds'] * 1e6:.1f} | "
                    f"{plan_name(fastest)} | {fastest['seconds'] * 1e6:.1f} | "
                    f"{100 * chosen_ratio[shape]:.1f} % | {100 * alone_ratio[shape]:.1f} % | "
                    f"{100 * fastest_ratio[shape]:.1f} % |")
    errors.sort()
    count = len(problems)

    def percentile(values, q):
        values = sorted(values)
        return values[int(q * (len(values) - 1))]

    lines = [f"# {title}", "",
             f"{count} problems, {sum(len(p) for p in problems.values())} plans of stage 10's kernel timed (a tile "
             f"and a split of K), each against SGEMM by CUDA graphs. The model's error, predicted over measured "
             f"time less one: median |error| {100 * statistics.median(errors):.1f} %, 90th percentile "
             f"{100 * percentile(errors, 0.9):.1f} %. The track (stage 10's own plan unless the model predicts one "
             f"faster by more than {100 * model.margin:.1f} %) chose the fastest plan timed on "
             f"{sum(loss == 0 for loss in losses)} of {count}; its other choices cost a geomean "
             f"{100 * (geomean([1 + x for x in losses]) - 1):.2f} % over all problems, at most "
             f"{100 * max(losses):.1f} %. Stage 10's own plan was timed on {len(own_ratio)} problems; the track's "
             f"choice ran more than 2 % slower than it on {behind_own}.", "",
             "% of SGEMM by band of M: the track's choice, the model's fastest plan (the choice without the "
             "margin), the fastest plan timed, and stage 10's own plan where timed:", "",
             "| band | problems | choice: geomean | 10th percentile | model's fastest | fastest: geomean | "
             "10th percentile | stage 10's own plan |", "|:--|--:|--:|--:|--:|--:|--:|--:|"]
    for band, member in BANDS:
        inside = [shape for shape in problems if member(shape[0])]
        if inside:
            own = [own_ratio[s] for s in inside if s in own_ratio]
            own_cell = f"{100 * geomean(own):.1f} % ({len(own)})" if own else "–"
            lines.append(f"| {band} | {len(inside)} | {100 * geomean([chosen_ratio[s] for s in inside]):.1f} % | "
                         f"{100 * percentile([chosen_ratio[s] for s in inside], 0.1):.1f} % | "
                         f"{100 * geomean([alone_ratio[s] for s in inside]):.1f} % | "
                         f"{100 * geomean([fastest_ratio[s] for s in inside]):.1f} % | "
                         f"{100 * percentile([fastest_ratio[s] for s in inside], 0.1):.1f} % | {own_cell} |")
    lines += ["", "| M | N | K | chosen (tile / parts) | predicted / measured (us) | fastest | measured (us) | "
              "chosen, % of SGEMM | model's fastest | fastest |", "|--:|--:|--:|:--|--:|:--|--:|--:|--:|--:|", *rows]
    return "\n".join(lines) + "\n"


def check(problems, model, sms):
    """The largest relative difference between sgemm_model's predictions and this model's, and
    the problems where the plans it marked chosen and stage 10's own are not those found here
    (for a file of a GPU modelled by --sms, whose blocks an SM are the tiles' blocks_per_sm)."""
    worst = max(abs(predicted(plan, model) * 1e6 / plan["predicted_us"] - 1)
                for plans in problems.values() for plan in plans)
    wrong = [shape for shape, plans in problems.items()
             if not (track_choice(shape, plans, model, sms) or {}).get("chosen") or
             [plan for plan in plans if plan.get("own")] != [found_own(shape, plans, sms)]]
    return worst, wrong


def main(argv=None):
    parser = argparse.ArgumentParser(description="Fit or evaluate the fp32 track's model")
    parser.add_argument("--plans", nargs="+", default=[], help="sgemm_model --track fp32 --time CSVs")
    parser.add_argument("--header", default=str(HEADER), help=f"the constants' header (default {HEADER})")
    parser.add_argument("--report", help="write the report here")
    parser.add_argument("--fitted-on", default="", help="what the problems were, for the header's comment")
    parser.add_argument("--evaluate", action="store_true", help="fit nothing: report the header's model on these")
    parser.add_argument("--check", help="an sgemm_model --track fp32 CSV: does this model give its predictions "
                        "and its choices?")
    parser.add_argument("--sms", type=int, default=132, help="the SMs of the GPU the plans ran on (default 132)")
    parser.add_argument("--stale-ok", action="store_true",
                        help="fit or evaluate on times of stage 10's sources other than this tree's")
    parser.add_argument("--blocks-per-sm", nargs="+", default=[], metavar="TILE=BLOCKS",
                        help="tiles whose blocks an SM the files counted otherwise (e.g. 32x256=3): their waves "
                        "are worked out again")
    args = parser.parse_args(argv)
    header = repo_path(args.header)
    model, fitted_on = read_header(header)
    if args.check:
        worst, wrong = check(read_plans([args.check]), model, args.sms)
        print(f"largest difference from sgemm_model's predictions: {worst:.2e}; choices not its: {wrong}")
        return 0 if worst < 1e-5 and not wrong else 1
    held = {tile: int(blocks) for tile, blocks in (item.split("=") for item in args.blocks_per_sm)}
    problems = with_blocks_per_sm(timed(read_plans(args.plans)), held, args.sms)
    if not args.stale_ok:
        refuse_times_measured_elsewhere([("10", plan["sources"]) for plans in problems.values() for plan in plans],
                                        "fit_fp32_model.py")
    if args.evaluate:
        text = report(problems, model, f"The fp32 track's model on problems it was not fitted on ({fitted_on})",
                      args.sms)
    else:
        model = fit_model(problems, model, args.sms)
        write_header(header, model, f"Fitted on {len(problems)} problems: {args.fitted_on}.")
        text = report(problems, model, f"The fp32 track's model's fit: {args.fitted_on}", args.sms)
    print(text.split("\n")[2])
    if args.report:
        Path(args.report).write_text(text)
        print(f"wrote {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
