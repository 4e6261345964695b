"""Read, tabulate and plot the CSV rows written by `./sgemm ... --csv FILE`, the
ceilings written by `./sgemm peak --csv FILE` and the profile written by
scripts/profile_stages.py: results tables, charts, and the roofline.

Importing this module has no side effects: figures are drawn through
matplotlib's object-oriented API on an explicit Agg canvas, so no global
backend is selected and no pyplot state is touched.
"""

import csv
import io
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator

# The SM clock over the stage's timed launches, over cuBLAS's, and over the ceiling's
# fastest launch (src/measuring/sm_clock.hpp): empty where the binary could not read it, and
# absent from files written before it did (read as empty).
CLOCK_COLUMNS = ("sm_clock_mhz", "cublas_sm_clock_mhz", "ceiling_sm_clock_mhz")
COLUMNS = (
    "stage", "name", "precision", "m", "n", "k", "alpha", "beta",
    "median_ms", "tflops", "cublas_median_ms", "cublas_tflops",
    "ratio_to_cublas", "fraction_of_peak", "ceiling", "rel_error_fp64",
    "worst_error_over_budget", "verified", "gpu", "driver", "cuda",
    "timing", "reps", "seed", *CLOCK_COLUMNS, "data",
)
# What the inputs held (sgemm --data); files written before the column read as "uniform".
DATA_KINDS = ("uniform", "wide", "exact")
COLUMNS_BEFORE_DATA = COLUMNS[:-1]
COLUMNS_BEFORE_CLOCKS = COLUMNS_BEFORE_DATA[:-len(CLOCK_COLUMNS)]
INT_COLUMNS = frozenset({"stage", "m", "n", "k", "reps", "seed"})
FLOAT_COLUMNS = frozenset({
    "alpha", "beta", "median_ms", "tflops", "cublas_median_ms",
    "cublas_tflops", "ratio_to_cublas", "fraction_of_peak",
    "rel_error_fp64", "worst_error_over_budget", *CLOCK_COLUMNS,
})
# The binary leaves these empty when it skips verification, or cannot read the clock.
OPTIONAL_COLUMNS = frozenset({"rel_error_fp64", "worst_error_over_budget", *CLOCK_COLUMNS})
VERIFIED_VALUES = ("true", "false", "skipped")
# Rows of `sgemm all N --timing blocks`, beside results.csv; regenerate_results.py
# writes it, write_outputs() tabulates it.
TURNS_CSV = "results_in_turns.csv"
# The `timing` column says how the stage and cuBLAS took turns (`--timing`,
# src/measuring/timing.hpp); for each, how the caption puts it.
TIMINGS = {
    "launches": "interleaved with cuBLAS launch by launch in the same process, so that "
                "both run at the one clock their mix sets",
    "blocks": "taking turns with cuBLAS in blocks of launches in the same process "
              "(`--timing blocks`), so that each runs at the clock its own power draw allows",
}
# The `ceiling` column names what fraction_of_peak is a fraction of: for each name, how
# the tables call it and what it is.
CEILINGS = {
    "fp32_ffma": ("FFMA (measured)",
                  "the FFMA throughput measured on this GPU as the run started (registers only)"),
    "mma_sync_bf16": ("mma.sync (measured)",
                      "the mma.sync m16n8k16 bf16 throughput measured on this GPU as the run started "
                      "(registers only)"),
    "wgmma_bf16": ("wgmma (measured)",
                   "the wgmma m64n256k16 bf16 throughput (operands in shared memory) for the Hopper "
                   "stages (15 on), measured on this GPU as the run started"),
}

# ceilings.csv, from `sgemm peak --csv`: one row per ceiling measured, with the SM clock
# of the launch that measured it where one was read (files written before the binary
# read clocks lack the column); for each name, how the tables call it, in the order
# they list them.
CEILING_COLUMNS = ("ceiling", "unit", "value", "gpu", "sm_clock_mhz")
CEILING_COLUMNS_BEFORE_CLOCKS = CEILING_COLUMNS[:-1]
MEASURED_CEILINGS = {
    "fp32_ffma": "FFMA on the CUDA cores (FP32)",
    "mma_sync_bf16": "mma.sync m16n8k16, bf16 in, FP32 accumulate",
    "mma_sync_bf16_warp_loop": "the same fed by ldmatrix from shared memory, as stage 14's warp loop "
                               "(eight warps an SM, 64x64 warp tiles), on random operands",
    "mma_sync_bf16_sustained": "the same warp loop: the average after 2 s back to back "
                               "(a power cap shows here)",
    "mma_sync_tf32": "mma.sync m16n8k8, tf32 in, FP32 accumulate",
    "wgmma_bf16": "wgmma m64n256k16, bf16 in, FP32 accumulate",
    "dram": "DRAM: device-to-device copy, bytes read + written",
    "l2": "L2: every SM re-reading a buffer a quarter the size of L2",
    "shared_memory": "shared memory: every SM reading 16-byte words",
}
# The one ceiling timed after seconds of running rather than as its fastest launch.
SUSTAINED_CEILING = "mma_sync_bf16_sustained"
# Shown per clock against the register-only ceiling, where both clocks were read.
WARP_LOOP_CEILING, REGISTER_CEILING = "mma_sync_bf16_warp_loop", "mma_sync_bf16"
SUSTAINED_NOTE = f"; `{SUSTAINED_CEILING}` is the average once the GPU has run it for seconds"
# profile.csv, from scripts/profile_stages.py: Nsight Compute counters at one size.
PROFILE_SIZE = 4096
# The roofline's roofs: compute ceilings flat, memory ceilings sloped, and their labels.
COMPUTE_ROOFS = {"fp32_ffma": "FFMA", "mma_sync_tf32": "mma.sync tf32", "mma_sync_bf16": "mma.sync bf16",
                 "wgmma_bf16": "wgmma bf16"}
MEMORY_ROOFS = {"dram": "DRAM", "l2": "L2"}

CUBLAS_STAGE = 0
PREFERRED_PROGRESSION_SIZE = 4096
# The README's one table shows these sizes (where the results have them); results.md, all.
README_SIZES = (4096, 8192)
# The charts in results/<gpu>/, and their captions; the README shows the first.
CHARTS = (("progression.png", "GEMM progression at N={size}"), ("tflops_vs_size.png", "GEMM TFLOPS vs size"),
          ("roofline.png", f"Roofline at N={PROFILE_SIZE}"))
README_BEGIN = "<!-- results:begin -->"
README_END = "<!-- results:end -->"
DPI = 120
MISSING = "–"
# Paired with the 10 tab10 colours, 7 markers keep up to 70 stages distinct.
MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def read_rows(path, extra_columns=()):
    """Parse an sgemm results CSV into dicts with int/float/str values.

    Empty optional error fields become None. extra_columns: text columns that follow
    the binary's own (the shape suite's name and group). Raises ValueError naming the
    file and line when the header or a field does not match the format.
    """
    extra_columns = tuple(extra_columns)
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        header = tuple(reader.fieldnames or ())
        if extra_columns and header != COLUMNS + extra_columns:
            raise ValueError(f"{path}: header must be exactly {','.join(COLUMNS + extra_columns)}; "
                             f"got {','.join(header) or 'nothing'}")
        if not extra_columns and header not in (COLUMNS, COLUMNS_BEFORE_DATA, COLUMNS_BEFORE_CLOCKS):
            raise ValueError(
                f"{path}: header must be exactly {','.join(COLUMNS)} "
                f"(or without the last 1 or {len(CLOCK_COLUMNS) + 1}); got {','.join(header) or 'nothing'}")
        return [_typed_row(raw, path, reader.line_num, extra_columns) for raw in reader]


def _typed_row(raw, path, line, extra_columns=()):
    if None in raw or None in raw.values():
        raise ValueError(f"{path}:{line}: expected {len(COLUMNS) + len(extra_columns)} fields")
    row = {column: raw[column] for column in extra_columns}
    for column in COLUMNS:
        try:
            row[column] = _parse_field(column, raw.get(column, ""))
        except ValueError as error:
            raise ValueError(f"{path}:{line}: {column}: {error}") from None
    return row


def _parse_field(column, text):
    if column in OPTIONAL_COLUMNS and text == "":
        return None
    if column == "data":
        text = text or "uniform"
        if text not in DATA_KINDS:
            raise ValueError(f"expected one of {', '.join(DATA_KINDS)}, got {text!r}")
        return text
    if column in INT_COLUMNS:
        return int(text)
    if column in FLOAT_COLUMNS:
        return float(text)
    if column == "verified" and text not in VERIFIED_VALUES:
        raise ValueError(
            f"expected one of {', '.join(VERIFIED_VALUES)}, got {text!r}")
    if column == "timing" and text not in TIMINGS:
        raise ValueError(f"expected one of {', '.join(TIMINGS)}, got {text!r}")
    return text


def write_rows(rows, path, extra_columns=()):
    """Write rows in the binary's CSV format (header, then one line each), with
    extra_columns after the binary's own."""
    columns = COLUMNS + tuple(extra_columns)
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(
                "" if row[column] is None else row[column]
                for column in columns)


def read_ceilings(path):
    """{ceiling name: {"unit", "value" (float), "gpu", "sm_clock_mhz" (float or None)}}
    from a ceilings.csv.

    Raises ValueError naming the file and line when the header or a value is wrong.
    """
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        header = tuple(reader.fieldnames or ())
        if header not in (CEILING_COLUMNS, CEILING_COLUMNS_BEFORE_CLOCKS):
            raise ValueError(f"{path}: header must be exactly {','.join(CEILING_COLUMNS)} "
                             f"(or without the last); got {','.join(header) or 'nothing'}")
        ceilings = {}
        for raw in reader:
            try:
                value = float(raw["value"])
                clock = raw.get("sm_clock_mhz") or None
                clock = float(clock) if clock is not None else None
            except (TypeError, ValueError):
                raise ValueError(f"{path}:{reader.line_num}: value or sm_clock_mhz: not a number: "
                                 f"{raw['value']!r}, {raw.get('sm_clock_mhz')!r}") from None
            ceilings[raw["ceiling"]] = {"unit": raw["unit"], "value": value, "gpu": raw["gpu"],
                                        "sm_clock_mhz": clock}
        return ceilings


def read_profile(path):
    """{stage: row of text values} of a profile.csv at PROFILE_SIZE; {} when there is none."""
    if not Path(path).exists():
        return {}
    with open(path, newline="", encoding="utf-8") as file:
        return {int(row["stage"]): row for row in csv.DictReader(file) if int(row["size"]) == PROFILE_SIZE}


def gpu_slug(gpu_name):
    """Directory-friendly GPU name: "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3"."""
    name = gpu_name.strip().lower().removeprefix("nvidia ")
    slug = re.sub(r"[^a-z0-9]+", "-", name).strip("-")
    if not slug:
        raise ValueError(f"cannot derive a directory name from GPU name {gpu_name!r}")
    return slug


def markdown_table(rows, sizes=None):
    """Caption line plus a Markdown table of the square runs, one line per stage, at
    `sizes` (default: every size the rows have)."""
    square = _square_rows(rows)
    if not square:
        raise ValueError("no square (m == n == k) rows to tabulate")
    sizes = sizes or _sizes(square)
    by_size = {size: _latest_by_stage(square, size) for size in sizes}
    header = ["Stage", "Name", "Precision"]
    alignment = ["---:", ":---", ":---"]
    for size in sizes:
        header += [f"N={size} TFLOPS", "% of cuBLAS"]
        alignment += ["---:", "---:"]
    header.append("Verified")
    alignment.append(":---:")
    lines = _table_head(_caption(square), header, alignment)
    for stage, stage_rows in sorted(_group_by_stage(square).items()):
        latest = stage_rows[-1]
        cells = [str(stage), f"`{latest['name']}`", latest["precision"]]
        for size in sizes:
            cells += _throughput_cells(by_size[size].get(stage))
        cells.append(_verified_symbol(stage_rows))
        lines.append(_table_line(cells))
    return "\n".join(lines)


def ceiling_table(rows):
    """Each stage's fraction of the ceiling of the unit it runs on, per size, and which
    ceiling that is (the `ceiling` column): measured FFMA for fp32 stages, measured
    mma.sync for bf16 stages, whose cuBLAS reference uses Hopper's faster wgmma, so % of
    cuBLAS alone would hide how close they come to what their instruction can do."""
    square = _square_rows(rows)
    sizes = _sizes(square)
    by_size = {size: _latest_by_stage(square, size) for size in sizes}
    header = ["Stage", "Name", "Ceiling"] + [f"N={size} % of ceiling" for size in sizes]
    alignment = ["---:", ":---", ":---"] + ["---:" for _ in sizes]
    lines = _table_head(f"Fraction of the ceiling of the unit each stage runs on: {describe_ceilings(square)}.",
                        header, alignment)
    for stage, stage_rows in sorted(_group_by_stage(square).items()):
        latest = stage_rows[-1]
        ceilings = [r["tflops"] / r["fraction_of_peak"] for r in stage_rows if r["fraction_of_peak"] > 0]
        kind = _ceiling_label(latest["ceiling"])
        ceiling = f"{kind}, {sum(ceilings) / len(ceilings):.0f} TFLOPS" if ceilings else kind
        cells = [str(stage), f"`{latest['name']}`", ceiling]
        for size in sizes:
            row = by_size[size].get(stage)
            cells.append(MISSING if row is None else f"{row['fraction_of_peak'] * 100:.1f}%")
        lines.append(_table_line(cells))
    return "\n".join(lines)


def clock_table(rows):
    """The SM clock over each stage's timed launches, and its fraction of the ceiling
    scaled from the clock the ceiling was measured at to that one: what the stage does
    per clock against what its unit does per clock. On a GPU at its power cap the two
    clocks differ, and % of ceiling alone mixes the stage's work with the cap's. None
    when no row carries both clocks (files written before the binary read them)."""
    square = [row for row in _square_rows(rows)
              if row["sm_clock_mhz"] is not None and row["ceiling_sm_clock_mhz"] is not None]
    if not square:
        return None
    sizes = _sizes(square)
    by_size = {size: _latest_by_stage(square, size) for size in sizes}
    header = ["Stage", "Name"]
    alignment = ["---:", ":---"]
    for size in sizes:
        header += [f"N={size} SM clock", "% of ceiling at it"]
        alignment += ["---:", "---:"]
    ceiling_clocks = sorted({round(row["ceiling_sm_clock_mhz"]) for row in square})
    caption = ("The SM clock over each stage's timed launches, counted by the SMs (src/measuring/sm_clock.hpp; "
               "launch by launch the stage and cuBLAS share it; it includes the L2 flushes between "
               "launches, which outlast small kernels), and the stage's fraction of its "
               f"ceiling scaled from the clock the ceiling was measured at ({_range(ceiling_clocks)} MHz) "
               "to that one: its work per clock against its unit's.")
    lines = _table_head(caption, header, alignment)
    for stage, stage_rows in sorted(_group_by_stage(square).items()):
        cells = [str(stage), f"`{stage_rows[-1]['name']}`"]
        for size in sizes:
            row = by_size[size].get(stage)
            if row is None:
                cells += [MISSING, MISSING]
                continue
            at_clock = row["fraction_of_peak"] * row["ceiling_sm_clock_mhz"] / row["sm_clock_mhz"]
            cells += [f"{row['sm_clock_mhz']:.0f} MHz", f"{at_clock * 100:.1f}%"]
        lines.append(_table_line(cells))
    return "\n".join(lines)


def _range(values):
    return f"{values[0]}" if len(values) == 1 else f"{values[0]}–{values[-1]}"


def describe_ceilings(rows):
    """Which ceiling the rows' fractions are of, per precision: "for fp32 stages, ...;
    for bf16 stages, ..."."""
    parts = []
    for precision in sorted({row["precision"] for row in rows}, key=lambda p: (p != "fp32", p)):
        names = sorted({row["ceiling"] for row in rows if row["precision"] == precision})
        described = " or ".join(CEILINGS[name][1] if name in CEILINGS else name for name in names)
        parts.append(f"for {precision} stages, {described}")
    return "; ".join(parts)


def _ceiling_label(name):
    return CEILINGS[name][0] if name in CEILINGS else name


def measured_ceilings_table(ceilings):
    """Caption and table of the ceilings in a ceilings.csv, known ones first."""
    names = sorted(ceilings, key=lambda name: (list(MEASURED_CEILINGS).index(name)
                                               if name in MEASURED_CEILINGS else len(MEASURED_CEILINGS), name))
    clocks = any(ceiling.get("sm_clock_mhz") is not None for ceiling in ceilings.values())
    caption = (f"Ceilings measured on **{_joined(ceilings.values(), 'gpu')}** by `./sgemm peak`: each unit "
               "or memory alone, kept busy by every SM (registers-only or streaming microbenchmarks, "
               f"the fastest of five launches{SUSTAINED_NOTE if SUSTAINED_CEILING in ceilings else ''}).")
    if clocks:
        caption += (" The SM clock is the one the SMs counted over the fastest launch (src/measuring/sm_clock.hpp); "
                    f"`{WARP_LOOP_CEILING}` is also given per clock against `{REGISTER_CEILING}`.")
    lines = [caption, "", "| Ceiling | What | Measured |" + (" SM clock |" if clocks else ""),
             "| :--- | :--- | ---: |" + (" ---: |" if clocks else "")]
    for name in names:
        ceiling = ceilings[name]
        measured = f"{_ceiling_value(ceiling['value'], ceiling['unit'])} {ceiling['unit']}"
        per_clock = _per_clock_fraction(ceilings, name, REGISTER_CEILING) if name == WARP_LOOP_CEILING else None
        if per_clock is not None:
            measured += f" ({per_clock * 100:.1f} % of `{REGISTER_CEILING}` per clock)"
        cells = [f"`{name}`", MEASURED_CEILINGS.get(name, ""), measured]
        if clocks:
            clock = ceiling.get("sm_clock_mhz")
            cells.append(f"{clock:.0f} MHz" if clock is not None else MISSING)
        lines.append(_table_line(cells))
    return "\n".join(lines)


def _per_clock_fraction(ceilings, name, reference):
    """ceilings[name] over ceilings[reference], each divided by the clock it ran at; None
    unless both and their clocks are there."""
    if reference not in ceilings:
        return None
    clock, reference_clock = ceilings[name].get("sm_clock_mhz"), ceilings[reference].get("sm_clock_mhz")
    if clock is None or reference_clock is None:
        return None
    return (ceilings[name]["value"] / clock) / (ceilings[reference]["value"] / reference_clock)


def _ceiling_value(value, unit):
    if unit == "TB/s":
        return f"{value:.2f}"
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def results_markdown(rows, ceilings=None, turns_rows=None):
    """results.md: the throughput table, the fraction-of-ceiling table, where the rows
    carry clocks the clock table, given rows timed in turns (results_in_turns.csv) their
    table, and given the rows of a ceilings.csv, the measured ceilings."""
    parts = [markdown_table(rows), ceiling_table(rows)]
    clocks = clock_table(rows)
    if clocks:
        parts.append(clocks)
    if turns_rows and any(row["precision"] != "fp32" for row in turns_rows):
        parts.append(turns_table(turns_rows, rows))
    if ceilings:
        parts.append(measured_ceilings_table(ceilings))
    return "\n\n".join(parts)


def readme_sizes(rows):
    """The sizes of the README's table: README_SIZES where the rows have them, else
    their two largest."""
    sizes = _sizes(_square_rows(rows))
    return [size for size in README_SIZES if size in sizes] or sizes[-2:]


def readme_markdown(rows, out_dir, readme_dir):
    """The README's results block for the results in out_dir: the throughput table at
    readme_sizes, the progression chart, and links to results.md (every table) and to
    the other charts there. Links are relative to readme_dir."""
    out_dir = Path(out_dir)
    charts = [(alt.format(size=_progression_size(rows)), _relative_link(out_dir / name, readme_dir))
              for name, alt in CHARTS if (out_dir / name).exists()]
    links = [f"[every size, each stage's ceiling and SM clock, the timing in turns]"
             f"({_relative_link(out_dir / 'results.md', readme_dir)})"]
    links += [f"[{alt}]({link})" for alt, link in charts[1:]]
    parts = [markdown_table(rows, readme_sizes(rows))]
    if charts:
        parts.append(f"![{charts[0][0]}]({charts[0][1]})")
    parts.append("All the results: " + "; ".join(links) + ".")
    return "\n\n".join(parts)


def turns_table(turns_rows, launch_rows):
    """The tensor-core stages timed in turns with cuBLAS (`--timing blocks`), beside the
    same stages' launch-by-launch ratio from the main table: on a power-capped GPU the
    two differ (src/measuring/timing.hpp). Only the precisions whose ratio moves are shown; the
    CSV keeps every row."""
    square = [row for row in _square_rows(turns_rows) if row["precision"] != "fp32"]
    if not square:
        raise ValueError("no square tensor-core rows timed in turns to tabulate")
    if {row["timing"] for row in square} != {"blocks"}:
        raise ValueError("the table of turns takes rows timed with --timing blocks only")
    sizes = _sizes(square)
    by_size = {size: _latest_by_stage(square, size) for size in sizes}
    launched = {size: _latest_by_stage(_square_rows(launch_rows), size) for size in sizes}
    clocked = any(row["sm_clock_mhz"] is not None and row["cublas_sm_clock_mhz"] is not None for row in square)
    header = ["Stage", "Name"]
    alignment = ["---:", ":---"]
    for size in sizes:
        header += [f"N={size} TFLOPS", "% of cuBLAS", "(launch by launch)", "% of ceiling"]
        header += ["SM clock: stage, cuBLAS"] if clocked else []
        alignment += ["---:"] * (5 if clocked else 4)
    clock_words = ("; the SM clock is each kernel's over its turns, counted by the SMs" if clocked else "")
    caption = (f"The {_joined(square, 'precision')} stages again, each figure the median of "
               f"{_reps_range(square)} launches {TIMINGS['blocks']}; beside each ratio, the "
               "launch-by-launch one from the first table; % of ceiling is of the ceiling that "
               f"run measured as it started{clock_words}.")
    lines = _table_head(caption, header, alignment)
    for stage, stage_rows in sorted(_group_by_stage(square).items()):
        cells = [str(stage), f"`{stage_rows[-1]['name']}`"]
        for size in sizes:
            row, other = by_size[size].get(stage), launched[size].get(stage)
            cells += _throughput_cells(row)
            cells.append(MISSING if other is None else f"{other['ratio_to_cublas'] * 100:.1f}%")
            cells.append(MISSING if row is None else f"{row['fraction_of_peak'] * 100:.1f}%")
            if clocked:
                cells.append(_clock_pair(row))
        lines.append(_table_line(cells))
    return "\n".join(lines)


def _clock_pair(row):
    if row is None or row["sm_clock_mhz"] is None or row["cublas_sm_clock_mhz"] is None:
        return MISSING
    return f"{row['sm_clock_mhz']:.0f}, {row['cublas_sm_clock_mhz']:.0f} MHz"


def _caption(rows):
    return (
        f"Measured on **{_joined(rows, 'gpu')}** "
        f"(driver {_joined(rows, 'driver')}, CUDA {_joined(rows, 'cuda')}); "
        f"square M = N = K; each figure is the median of {_reps_range(rows)} timed runs, "
        f"{_timing_words(rows)}. "
        "% of cuBLAS is throughput relative to cuBLAS at the same size and precision "
        "(SGEMM for fp32 stages; bf16 in, FP32 out for bf16 stages).")


def single_timing(rows):
    """The one way `rows` were timed, a TIMINGS key: rows timed both ways cannot share a
    table, since their ratios to cuBLAS mean different things."""
    used = sorted({row["timing"] for row in rows})
    if len(used) != 1:
        raise ValueError(
            f"rows timed both ways ({', '.join(used)}) cannot share a table: their ratios "
            "to cuBLAS mean different things")
    if used[0] not in TIMINGS:
        raise ValueError(f"expected one of {', '.join(TIMINGS)}, got {used[0]!r}")
    return used[0]


def _timing_words(rows):
    return TIMINGS[single_timing(rows)]


def _reps_range(rows):
    reps = sorted({row["reps"] for row in rows})
    return f"{reps[0]}" if len(reps) == 1 else f"{reps[0]}–{reps[-1]}"


def _throughput_cells(row):
    if row is None:
        return [MISSING, MISSING]
    # One decimal: a ratio is read against a bar, and 64.6 % must not print as 65 %.
    return [f"{row['tflops']:.1f}", f"{row['ratio_to_cublas'] * 100:.1f}%"]


def _verified_symbol(stage_rows):
    states = {row["verified"] for row in stage_rows}
    if "false" in states:
        return "✗"
    if states == {"true"}:
        return "✓"
    return MISSING


def _table_head(caption, header, alignment):
    """A table's first lines: its caption, a blank line, its header and alignment rows."""
    return [caption, "", _table_line(header), _table_line(alignment)]


def _table_line(cells):
    return "| " + " | ".join(cells) + " |"


PRECISION_COLORS = {"fp32": "tab:blue", "bf16": "tab:orange"}
PRECISION_LEGEND = {
    "fp32": "fp32 stages, vs cuBLAS SGEMM",
    "bf16": "bf16 stages (FP32 accumulate), vs cuBLAS bf16 GemmEx",
}


def plot_progression(rows, size, path):
    """Bar chart of each stage's % of cuBLAS at one square size, saved as PNG."""
    at_size = _latest_by_stage(_square_rows(rows), size)
    if not at_size:
        raise ValueError(f"no square rows at N={size} to plot")
    # cuBLAS goes last so the bars read left to right towards the target.
    stages = sorted(at_size, key=lambda stage: (stage == CUBLAS_STAGE, stage))
    percents = [at_size[stage]["ratio_to_cublas"] * 100 for stage in stages]
    # Each stage is compared with cuBLAS at its own precision; the colour says which.
    colors = ["0.25" if stage == CUBLAS_STAGE else PRECISION_COLORS.get(at_size[stage]["precision"], "tab:gray")
              for stage in stages]

    figure, axes = _new_figure(width=max(8.0, 1.1 * len(stages) + 2), height=5.5)
    positions = range(len(stages))
    bars = axes.bar(positions, percents, color=colors)
    axes.bar_label(bars, labels=[_percent_label(p) for p in percents], padding=3)
    axes.axhline(100, color="black", linestyle="--", linewidth=1)
    axes.set_xticks(positions, [_stage_label(at_size[s]) for s in stages],
                    rotation=30, ha="right", rotation_mode="anchor")
    axes.set_ylim(0, max(110.0, max(percents) * 1.15))
    axes.set_ylabel("% of cuBLAS throughput at the same precision")
    axes.set_title(f"GEMM progression on {_joined(at_size.values(), 'gpu')}, "
                   f"M = N = K = {size}")
    present = {at_size[stage]["precision"] for stage in stages if stage != CUBLAS_STAGE}
    handles = [Patch(color=color, label=PRECISION_LEGEND[precision])
               for precision, color in PRECISION_COLORS.items() if precision in present]
    axes.legend(handles=handles, loc="upper left")
    axes.grid(axis="y", alpha=0.3)
    axes.set_axisbelow(True)
    figure.savefig(path, dpi=DPI)


def _percent_label(percent):
    # Early stages sit at a few percent, where a whole-number label hides progress.
    return f"{percent:.1f}%" if percent < 10 else f"{percent:.0f}%"


def plot_tflops_vs_size(rows, path):
    """Line chart of TFLOPS against N for every stage, saved as PNG."""
    square = _square_rows(rows)
    if not square:
        raise ValueError("no square (m == n == k) rows to plot")
    sizes = _sizes(square)
    by_size = {size: _latest_by_stage(square, size) for size in sizes}
    stages = sorted({row["stage"] for row in square},
                    key=lambda stage: (stage == CUBLAS_STAGE, stage))

    figure, axes = _new_figure(width=9.5, height=5.5)
    for index, stage in enumerate(stages):
        series = [by_size[size][stage] for size in sizes if stage in by_size[size]]
        xs = [row["m"] for row in series]
        ys = [row["tflops"] for row in series]
        if stage == CUBLAS_STAGE:
            axes.plot(xs, ys, color="black", linestyle="--", marker="o",
                      linewidth=2, label="cuBLAS (fp32)")
        else:
            # bf16 stages dotted, so the two tracks read apart.
            axes.plot(xs, ys, color=f"C{index % 10}",
                      linestyle=":" if series[-1]["precision"] == "bf16" else "-",
                      marker=MARKERS[index % len(MARKERS)],
                      label=_stage_label(series[-1]))
    # cuBLAS at bf16 has no stage of its own: every bf16 row carries its timing.
    bf16_reference = [(size, _median([row["cublas_tflops"] for row in by_size[size].values()
                                      if row["precision"] == "bf16"]))
                      for size in sizes]
    bf16_reference = [(size, tflops) for size, tflops in bf16_reference if tflops is not None]
    if bf16_reference:
        axes.plot([size for size, _ in bf16_reference], [tflops for _, tflops in bf16_reference],
                  color="0.45", linestyle="--", marker="o", linewidth=2, label="cuBLAS (bf16)")
    axes.set_xscale("log", base=2)
    axes.set_xticks(sizes, [str(size) for size in sizes])
    # Stages span two orders of magnitude; on a linear axis the early ones
    # would be flattened onto zero.
    axes.set_yscale("log")
    # Labels at 1-2-5 steps: decade labels alone are too sparse to read values off.
    axes.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.set_xlabel("N (M = N = K)")
    axes.set_ylabel("TFLOPS (log scale)")
    axes.set_title(f"GEMM throughput vs size on {_joined(square, 'gpu')}")
    axes.grid(which="both", alpha=0.3)
    axes.legend(title="Stage", loc="upper left", bbox_to_anchor=(1.02, 1),
                fontsize="small")
    figure.savefig(path, dpi=DPI)


def roofline_points(rows, profile):
    """Each stage with a result and a profile at PROFILE_SIZE: its arithmetic intensity
    (the GEMM's 2*N^3 FLOPs over the DRAM bytes Nsight Compute counted) and TFLOPS."""
    at_size = _latest_by_stage(_square_rows(rows), PROFILE_SIZE)
    points = []
    for stage, counters in sorted(profile.items()):
        row = at_size.get(stage)
        dram_bytes = _number(counters.get("dram_bytes"))
        if row is None or not dram_bytes:
            continue
        points.append({"stage": stage, "name": row["name"], "precision": row["precision"],
                       "intensity": 2.0 * PROFILE_SIZE ** 3 / dram_bytes, "tflops": row["tflops"]})
    return points


def _number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def roofline_roofs(ceilings, low, high, top):
    """The roofs as segments {"label", "x": (x0, x1), "y": (y0, y1), "sloped", "style"},
    x in FLOPs per byte, y in TFLOPS: each memory ceiling a slope (TFLOPS = TB/s x
    FLOP/byte) from x = `low` up to y = `top`, each compute ceiling flat from where it
    meets the DRAM slope (its ridge point) to x = `high`."""
    roofs = []
    for index, (name, label) in enumerate(MEMORY_ROOFS.items()):
        if name in ceilings:
            bandwidth = ceilings[name]["value"]
            roofs.append({"label": f"{label} {bandwidth:.2f} TB/s", "x": (low, top / bandwidth),
                          "y": (bandwidth * low, top), "sloped": True, "style": "-" if index == 0 else "--"})
    dram = ceilings["dram"]["value"]
    for name, label in COMPUTE_ROOFS.items():
        if name in ceilings:
            value = ceilings[name]["value"]
            roofs.append({"label": f"{label} {_ceiling_value(value, 'TFLOPS')} TFLOPS",
                          "x": (value / dram, high), "y": (value, value), "sloped": False, "style": "-"})
    return roofs


def plot_roofline(rows, profile, ceilings, path):
    """Log-log roofline at N=PROFILE_SIZE, saved as PNG: each stage at its arithmetic
    intensity and throughput, under the measured roofs: DRAM and L2 bandwidth as slopes
    (TFLOPS = TB/s x FLOP per byte), each compute ceiling as a flat line."""
    points = roofline_points(rows, profile)
    if not points:
        raise ValueError(f"no stage has both a result and a profile at N={PROFILE_SIZE}")
    if "dram" not in ceilings:
        raise ValueError("the ceilings have no dram row to draw the memory roof with")
    compute = [ceilings[name]["value"] for name in COMPUTE_ROOFS if name in ceilings]
    top = max([*compute, *(p["tflops"] for p in points)])
    intensities = [p["intensity"] for p in points]
    low = min(intensities) / 4
    high = max(max(intensities), top / ceilings["dram"]["value"]) * 4

    figure, axes = _new_figure(width=9.5, height=6.5)
    for roof in roofline_roofs(ceilings, low, high, top):
        (x0, x1), (y0, y1) = roof["x"], roof["y"]
        if roof["sloped"]:
            axes.plot(roof["x"], roof["y"], color="0.2", linewidth=1.5, linestyle=roof["style"])
            axes.annotate(roof["label"], (x0 * 1.5, y0 * 1.5), xytext=(6, -2), textcoords="offset points",
                          color="0.2", fontsize="small", va="top")
        else:
            axes.plot(roof["x"], roof["y"], color="0.45", linewidth=1.5)
            axes.annotate(roof["label"], (x1, y1), xytext=(-4, 3), textcoords="offset points",
                          ha="right", va="bottom", color="0.3", fontsize="small")
    for point in points:
        cublas = point["stage"] == CUBLAS_STAGE
        color = "0.25" if cublas else PRECISION_COLORS.get(point["precision"], "tab:gray")
        axes.scatter(point["intensity"], point["tflops"], color=color, zorder=3,
                     marker="s" if cublas else "o")
        axes.annotate(str(point["stage"]), (point["intensity"], point["tflops"]), xytext=(4, 4),
                      textcoords="offset points", fontsize="small", color=color)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlim(low, high)
    axes.set_ylim(min(p["tflops"] for p in points) / 3, top * 2)
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.set_xlabel(f"arithmetic intensity: FLOPs per DRAM byte (Nsight Compute, N = {PROFILE_SIZE})")
    axes.set_ylabel(f"TFLOPS at N = {PROFILE_SIZE}")
    axes.set_title(f"Roofline of the stages on {_joined(ceilings.values(), 'gpu')}, "
                   "roofs measured by sgemm peak")
    present = {point["precision"] for point in points if point["stage"] != CUBLAS_STAGE}
    handles = [Line2D([], [], color=color, marker="o", linestyle="", label=f"{precision} stages")
               for precision, color in PRECISION_COLORS.items() if precision in present]
    if any(point["stage"] == CUBLAS_STAGE for point in points):
        handles.append(Line2D([], [], color="0.25", marker="s", linestyle="", label="0: cuBLAS SGEMM"))
    axes.legend(handles=handles, loc="lower right")
    axes.grid(which="both", alpha=0.3)
    axes.set_axisbelow(True)
    figure.savefig(path, dpi=DPI)


def _median(values):
    values = sorted(values)
    if not values:
        return None
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def _new_figure(width, height):
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure, figure.subplots()


def _stage_label(row):
    return "cuBLAS" if row["stage"] == CUBLAS_STAGE else f"{row['stage']} {row['name']}"


def refresh_readme(readme_path, markdown_block):
    """Replace the text between the results marker lines, keeping the markers."""
    path = Path(readme_path)
    text = path.read_text(encoding="utf-8")
    for marker in (README_BEGIN, README_END):
        count = text.count(marker)
        if count != 1:
            raise ValueError(
                f"{path}: expected exactly one '{marker}' line, found {count}; "
                f"put a '{README_BEGIN}' line and a '{README_END}' line "
                "where the results belong")
    start = text.index(README_BEGIN) + len(README_BEGIN)
    end = text.index(README_END)
    if end < start:
        raise ValueError(f"{path}: '{README_END}' comes before '{README_BEGIN}'")
    block = markdown_block.strip("\n")
    path.write_text(f"{text[:start]}\n{block}\n{text[end:]}", encoding="utf-8")


def read_companions(out_dir, rows):
    """(ceilings, rows timed in turns) from the ceilings.csv and results_in_turns.csv in
    out_dir, None for a file that is not there; each must come from the rows' GPU."""
    out_dir = Path(out_dir)
    ceilings_path, turns_path = out_dir / "ceilings.csv", out_dir / TURNS_CSV
    ceilings = read_ceilings(ceilings_path) if ceilings_path.exists() else None
    turns_rows = read_rows(turns_path) if turns_path.exists() else None
    gpus = {row["gpu"] for row in rows}
    for path, measured in ((ceilings_path, ceilings and ceilings.values()), (turns_path, turns_rows)):
        if measured and {entry["gpu"] for entry in measured} != gpus:
            raise ValueError(f"{path} was measured on {_joined(measured, 'gpu')}, "
                             f"the results on {_joined(rows, 'gpu')}")
    return ceilings, turns_rows


def write_rows_sorted(rows, path):
    """write_rows, ordered by size then stage, as results.csv and results_in_turns.csv are."""
    write_rows(sorted(rows, key=_size_then_stage), path)


def write_outputs(rows, out_dir, readme_path=None):
    """Write results.csv, results.md and the charts; optionally refresh the README.
    The ceilings.csv and profile.csv already in out_dir, where there are, add the
    measured ceilings to results.md and draw the roofline (skipped, with a printed
    line, without both); a results_in_turns.csv there adds the table of turns.

    Returns the paths written, in order.
    """
    out_dir = Path(out_dir)
    ceilings_path = out_dir / "ceilings.csv"
    profile_path = out_dir / "profile.csv"
    ceilings, turns_rows = read_companions(out_dir, rows)
    table = results_markdown(rows, ceilings, turns_rows)
    progression_size = _progression_size(rows)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / "results.csv"
    table_path = out_dir / "results.md"
    progression_path = out_dir / "progression.png"
    scaling_path = out_dir / "tflops_vs_size.png"
    roofline_path = out_dir / "roofline.png"

    write_rows_sorted(rows, csv_path)
    table_path.write_text(table + "\n", encoding="utf-8")
    plot_progression(rows, progression_size, progression_path)
    plot_tflops_vs_size(rows, scaling_path)
    written = [csv_path, table_path, progression_path, scaling_path]
    missing = [path.name for path in (ceilings_path, profile_path) if not path.exists()]
    if missing:
        print(f"roofline skipped: no {' and no '.join(missing)} in {out_dir}")
        roofline_path.unlink(missing_ok=True)  # drawn from results that are gone
    else:
        plot_roofline(rows, read_profile(profile_path), ceilings, roofline_path)
        written.append(roofline_path)
    if readme_path is not None:
        refresh_readme(readme_path, readme_markdown(rows, out_dir, Path(readme_path).parent))
        written.append(Path(readme_path))
    return written


def _progression_size(rows):
    sizes = _sizes(_square_rows(rows))
    return PREFERRED_PROGRESSION_SIZE if PREFERRED_PROGRESSION_SIZE in sizes else sizes[-1]


def _relative_link(path, start):
    return Path(os.path.relpath(path, start)).as_posix()


def _size_then_stage(row):
    return (row["m"], row["n"], row["k"], row["stage"])


def _square_rows(rows):
    return [row for row in rows if row["m"] == row["n"] == row["k"]]


def _sizes(square_rows):
    return sorted({row["m"] for row in square_rows})


def _group_by_stage(rows):
    groups = {}
    for row in rows:
        groups.setdefault(row["stage"], []).append(row)
    return groups


def _latest_by_stage(square_rows, size):
    # A CSV may hold repeated runs of one stage; the last one written wins.
    return {row["stage"]: row for row in square_rows if row["m"] == size}


def _joined(rows, column):
    return " / ".join(sorted({str(row[column]) for row in rows}))


def run_tool_into_results(tool, arguments, results_dir, stem, read, usable, markdown, problem_of=None):
    """Run a measuring tool (`tool` and `arguments`, plus --csv PATH), then write what it
    measured to results_dir/<gpu>/stem.csv, as the tool wrote it, and stem.md, from
    markdown(rows). With `problem_of` (a CSV row's fields, as text, to the problem it
    measured), the rows already in stem.csv of problems this run did not measure are kept,
    ahead of the new ones, so that a long table can be measured in parts. Exits when the
    tool is missing or `usable(rows)` is false; returns the tool's exit status."""
    name = Path(tool).name
    if not Path(tool).exists():
        sys.exit(f"{name}: {tool} not found: run make first")
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = Path(tmp) / f"{stem}.csv"
        status = subprocess.run([str(tool), *arguments, "--csv", str(csv_path)]).returncode
        rows = read(csv_path) if csv_path.exists() else []
        if not usable(rows):
            sys.exit(f"{name} measured nothing")
        out_dir = Path(results_dir) / gpu_slug(rows[0]["gpu"])
        out_dir.mkdir(parents=True, exist_ok=True)
        out_csv = out_dir / f"{stem}.csv"
        if problem_of is not None and out_csv.exists():
            out_csv.write_text(_kept_then_new(out_csv, csv_path, problem_of))
        else:
            out_csv.write_text(csv_path.read_text())
    (out_dir / f"{stem}.md").write_text(markdown(read(out_csv)))
    print(f"wrote {out_csv}\nwrote {out_dir / (stem + '.md')}")
    return status


def _kept_then_new(old_path, new_path, problem_of):
    """The CSV text of old_path's rows whose problem new_path does not measure, then
    new_path's rows, in new_path's columns (a column the old rows lack is left empty)."""
    with open(old_path, newline="") as file:
        old_rows = list(csv.DictReader(file))
    with open(new_path, newline="") as file:
        reader = csv.DictReader(file)
        columns, new_rows = reader.fieldnames, list(reader)
    measured = {problem_of(row) for row in new_rows}
    kept = [row for row in old_rows if problem_of(row) not in measured]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, restval="", extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(kept + new_rows)
    return text.getvalue()
