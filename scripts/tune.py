#!/usr/bin/env python3
"""Tune stage 10, 14 or 20 on this GPU: run sgemm_tune over the stage's candidate tile
shapes, rank them, write what was tried and the winner to
results/<gpu>/tuning_stage<N>.csv and .md (tuning_stage<N>_in_turns.* with --timing
blocks), and with --apply compile the winner into the stage's file.

    python3 scripts/tune.py --stage 10 [--sizes 4096 8192] [--timing blocks] [--apply]
    python3 scripts/tune.py --stage 20 --shapes qkv_64 n64 ...   (names from scripts/shapes.py)

A candidate's score is its lowest ratio to cuBLAS over the sizes: the shape must hold
up at every size, not win one by a margin and lose another. The candidates are timed in
--passes passes over the whole list (3 by default) and each ratio is the median over the
passes: on a power-limited GPU one timing moves by a few percent from run to run, as
much as the best candidates differ, and a single pass would crown whichever got lucky.
--timing says how each candidate and cuBLAS take turns, as in sgemm (src/measuring/timing.hpp).

With --shapes the candidates run on shapes of the suite instead of squares, and the table
(tuning_stage<N>_shapes.md) gives each shape's fastest candidate: what a stage that
chooses its configuration per shape is checked against.
"""
import argparse
import csv
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from shape_suite import suite

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
from results_csv import TIMINGS, gpu_slug, read_typed, single_timing  # noqa: E402

STAGE_FILES = {10: REPO / "kernels" / "10_tuned.cuh", 14: REPO / "kernels" / "14_multistage.cu",
               20: REPO / "kernels" / "20_hopper_tuned.cu"}


def read_rows(path):
    rows = read_typed(path, {**dict.fromkeys(("group_rows", "threads", "shared_bytes", "registers", "m", "n", "k"), int),
                             **dict.fromkeys(("median_ms", "tflops", "cublas_tflops", "ratio_to_cublas"), float)})
    for row in rows:
        row["size"] = row["m"] if row["m"] == row["n"] == row["k"] else f'{row["m"]}x{row["n"]}x{row["k"]}'
    return rows


def rank_candidates(rows):
    """One entry per (config, group_rows), best first, with the median over the passes
    of its TFLOPS and ratio at each size; only candidates that verified in every pass at
    every size are ranked."""
    by_candidate = {}
    for row in rows:
        by_candidate.setdefault((row["config"], row["group_rows"]), []).append(row)
    ranked = []
    for (config, group_rows), results in by_candidate.items():
        if any(r["verified"] != "true" for r in results):
            continue
        sizes = sorted({r["size"] for r in results})
        ratios = {size: statistics.median(r["ratio_to_cublas"] for r in results if r["size"] == size)
                  for size in sizes}
        ranked.append({
            "config": config,
            "group_rows": group_rows,
            "threads": results[0]["threads"],
            "registers": results[0]["registers"],
            "shared_bytes": results[0]["shared_bytes"],
            "tflops": {size: statistics.median(r["tflops"] for r in results if r["size"] == size)
                       for size in sizes},
            "ratios": ratios,
            "score": min(ratios.values()),
        })
    ranked.sort(key=lambda c: (c["score"], sum(c["ratios"].values())), reverse=True)
    return ranked


def tuning_markdown(stage, ranked, rows):
    sizes = sorted({r["size"] for r in rows})
    passes = len({r.get("pass", 1) for r in rows})
    gpu = rows[0]["gpu"]
    timing = single_timing(rows)
    failed = sorted({(r["config"], r["group_rows"]) for r in rows if r["verified"] != "true"})
    timed = "once" if passes == 1 else f"in {passes} passes over the list, each figure the median of the passes"
    lines = [
        f"Stage {stage} tuning on **{gpu}**: every candidate verified and timed against cuBLAS "
        f"at the stage's precision, {TIMINGS[timing]}, {timed} "
        f"(`scripts/tune.py --stage {stage} --timing {timing}`). "
        f"Ranked by the lowest % of cuBLAS over N = {', '.join(map(str, sizes))}.",
        "",
        "| rank | tile config | raster group | threads | registers | shared KB | "
        + " | ".join(f"N={s} TFLOPS | N={s} % of cuBLAS" for s in sizes) + " |",
        "| ---: | :--- | ---: | ---: | ---: | ---: | " + " | ".join("---: | ---:" for _ in sizes) + " |",
    ]
    for rank, c in enumerate(ranked, 1):
        cells = [f"{c['tflops'][s]:.2f} | {100 * c['ratios'][s]:.1f}%" for s in sizes]
        marker = " **(winner)**" if rank == 1 else ""
        lines.append(f"| {rank} | `{c['config']}`{marker} | {c['group_rows']} | {c['threads']} | "
                     f"{c['registers']} | {c['shared_bytes'] / 1024:.1f} | " + " | ".join(cells) + " |")
    if failed:
        lines += ["", "Failed verification (not ranked): "
                  + ", ".join(f"`{config}` group {group}" for config, group in failed)]
    return "\n".join(lines) + "\n"


def shapes_markdown(stage, rows, shape_names):
    """The per-shape table: for each shape (in the suite's order), every candidate's median
    % of cuBLAS over the passes, the fastest in bold; candidates numbered in a legend."""
    timing = single_timing(rows)
    passes = len({r.get("pass", 1) for r in rows})
    configs = list(dict.fromkeys((r["config"], r["group_rows"]) for r in rows))
    gpu = rows[0]["gpu"]
    lines = [
        f"Stage {stage} candidates on shapes of the suite (`scripts/shapes.py`), on **{gpu}**: each verified "
        f"and timed against cuBLAS at the stage's precision, {TIMINGS[timing]}, in {passes} pass(es), "
        f"each figure the median % of cuBLAS over the passes (`scripts/tune.py --stage {stage} --shapes ...`). "
        "The fastest candidate of each shape is in bold; ✗ failed verification.",
        "",
        "| # | candidate | raster group |",
        "| --: | :--- | --: |",
    ]
    lines += [f"| {i} | `{config}` | {group} |" for i, (config, group) in enumerate(configs, 1)]
    lines += ["", "| shape | M | N | K | fastest | " + " | ".join(str(i) for i in range(1, len(configs) + 1)) + " |",
              "| :-- | --: | --: | --: | --: | " + " | ".join("--:" for _ in configs) + " |"]
    for name, m, n, k in shape_names:
        cells, ratios = [], {}
        for i, key in enumerate(configs, 1):
            mine = [r for r in rows if (r["config"], r["group_rows"]) == key and (r["m"], r["n"], r["k"]) == (m, n, k)]
            if not mine:
                cells.append("")
            elif any(r["verified"] != "true" for r in mine):
                cells.append("✗")
            else:
                ratios[i] = statistics.median(r["ratio_to_cublas"] for r in mine)
                cells.append(f"{100 * ratios[i]:.1f}")
        if not ratios:
            continue
        best = max(ratios, key=ratios.get)
        cells[best - 1] = f"**{cells[best - 1]}**"
        lines.append(f"| {name} | {m} | {n} | {k} | {best} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def suite_shapes(names):
    """(name, m, n, k) for each name of the suite (scripts/shape_suite.py), or of a group's shapes."""
    known = suite()
    chosen = []
    for name in names:
        matches = [s for s in known if name in (s[0], s[1])]
        if not matches:
            raise ValueError(f"'{name}' is neither a shape nor a group of scripts/shapes.py")
        chosen += [(s[0], s[2], s[3], s[4]) for s in matches if s[0] not in {c[0] for c in chosen}]
    return chosen


def output_stem(stage, timing, shapes=False):
    """Where a tuning run's table goes (results/<gpu>/<stem>.csv and .md): one file per
    way of timing, so that a run in turns does not overwrite one launch by launch, and
    one for the shapes."""
    return f"tuning_stage{stage}" + ("_shapes" if shapes else "") + ("_in_turns" if timing == "blocks" else "")


def apply_winner(stage_file, winner):
    text = stage_file.read_text()
    text, configs = re.subn(r"using TunedConfig = \w+<[^>]*>;",
                            f"using TunedConfig = {winner['config']};", text)
    text, groups = re.subn(r"constexpr int kTunedGroupRows = \d+;",
                           f"constexpr int kTunedGroupRows = {winner['group_rows']};", text)
    if configs != 1 or groups != 1:
        raise ValueError(f"{stage_file} lacks the TunedConfig or kTunedGroupRows line")
    stage_file.write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", type=int, choices=sorted(STAGE_FILES), required=True)
    parser.add_argument("--binary", default=str(REPO / "build" / "sgemm_tune"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    parser.add_argument("--shapes", nargs="+", help="shapes or groups of scripts/shapes.py, instead of the sizes")
    parser.add_argument("--results-dir", default=str(REPO / "results"))
    parser.add_argument("--passes", type=int, default=3, help="time every candidate this many times")
    parser.add_argument("--time-budget", type=float, default=1.0, help="seconds per measurement (sgemm_tune)")
    parser.add_argument("--timing", choices=sorted(TIMINGS), default="launches",
                        help="how each candidate and cuBLAS take turns (sgemm --timing)")
    parser.add_argument("--apply", action="store_true", help="write the winner into the stage's file")
    args = parser.parse_args()
    if args.passes < 1:
        parser.error("--passes must be at least 1")
    if args.shapes and args.apply:
        parser.error("--apply takes the winner over square sizes, not --shapes")
    try:
        shapes = suite_shapes(args.shapes) if args.shapes else []
    except ValueError as error:
        parser.error(str(error))
    problems = (["--shapes", *(f"{m}x{n}x{k}" for _, m, n, k in shapes)] if shapes
                else ["--sizes", *map(str, args.sizes)])

    if not Path(args.binary).exists():
        sys.exit(f"tune: {args.binary} not found: run make first")
    rows, status = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(1, args.passes + 1):
            print(f"pass {number} of {args.passes}", flush=True)
            csv_path = Path(tmp) / f"tuning{number}.csv"
            command = [args.binary, "--stage", str(args.stage), "--csv", str(csv_path), *problems,
                       "--timing", args.timing, "--time-budget", str(args.time_budget)]
            status = subprocess.run(command).returncode or status
            rows += [{"pass": number, **row} for row in read_rows(csv_path)]
    if not rows:
        sys.exit("tune: sgemm_tune wrote no rows")

    out_dir = Path(args.results_dir) / gpu_slug(rows[0]["gpu"])
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = output_stem(args.stage, args.timing, bool(shapes))
    with open(out_dir / f"{stem}.csv", "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    if shapes:
        (out_dir / f"{stem}.md").write_text(shapes_markdown(args.stage, rows, shapes))
        print(f"wrote {out_dir / (stem + '.csv')}\nwrote {out_dir / (stem + '.md')}")
        return 0 if status == 0 else 1
    ranked = rank_candidates(rows)
    (out_dir / f"{stem}.md").write_text(tuning_markdown(args.stage, ranked, rows))
    print(f"wrote {out_dir / (stem + '.csv')}\nwrote {out_dir / (stem + '.md')}")
    if not ranked:
        sys.exit("tune: no candidate verified")
    winner = ranked[0]
    print(f"winner: {winner['config']}, group rows {winner['group_rows']}, "
          f"{100 * winner['score']:.1f} % of cuBLAS at worst")
    if args.apply:
        apply_winner(STAGE_FILES[args.stage], winner)
        print(f"wrote the winner into {STAGE_FILES[args.stage].relative_to(REPO)}; rebuild with make")
    return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
