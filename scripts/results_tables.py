"""The Markdown tables of results.md: each stage's throughput against cuBLAS, its
fraction of its unit's ceiling, its SM clock, the tensor-core stages timed in turns,
and the ceilings measured by `./sgemm peak`.
"""

from results_csv import (TIMINGS, input_precision, joined, latest_by_stage, run_key, single_timing, square_rows,
                         square_sizes)

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
                   "stages (15-25), measured on this GPU as the run started"),
    "wgmma_fp8": ("wgmma fp8 (measured)",
                  "the wgmma m64n256k32 e4m3 throughput (operands in shared memory), measured on this GPU "
                  "as the run started"),
}

# The ceilings of a ceilings.csv: for each name, how the tables call it, in the order
# they list them.
MEASURED_CEILINGS = {
    "fp32_ffma": "FFMA on the CUDA cores (FP32)",
    "mma_sync_bf16": "mma.sync m16n8k16, bf16 in, FP32 accumulate",
    "mma_sync_bf16_warp_loop": "the same fed by ldmatrix from shared memory, as stage 14's warp loop "
                               "(eight warps an SM, 64x64 warp tiles), on random operands",
    "mma_sync_bf16_sustained": "the same warp loop: the average after 2 s back to back "
                               "(a power cap shows here)",
    "mma_sync_tf32": "mma.sync m16n8k8, tf32 in, FP32 accumulate",
    "wgmma_bf16": "wgmma m64n256k16, bf16 in, FP32 accumulate",
    "wgmma_fp8": "wgmma m64n256k32, e4m3 in, FP32 accumulate",
    "dram": "DRAM: device-to-device copy, bytes read + written",
    "l2": "L2: every SM re-reading a buffer a quarter the size of L2",
    "shared_memory": "shared memory: every SM reading 16-byte words",
}
# The one ceiling timed after seconds of running rather than as its fastest launch.
SUSTAINED_CEILING = "mma_sync_bf16_sustained"
# Shown per clock against the register-only ceiling, where both clocks were read.
WARP_LOOP_CEILING, REGISTER_CEILING = "mma_sync_bf16_warp_loop", "mma_sync_bf16"
SUSTAINED_NOTE = f"; `{SUSTAINED_CEILING}` is the average once the GPU has run it for seconds"
MISSING = "–"
# What % of cuBLAS is against, by the precision A and B are read in, as the caption says it.
REFERENCE_WORDS = {
    "fp32": "SGEMM for fp32 stages",
    "bf16": "bf16 in, FP32 out for bf16 stages",
    "fp8": "cuBLASLt's FP8 GEMM with the stage's scales, bf16 out, for fp8 stages, in its fast "
           "accumulation where the stage does not promote its sums",
}


def has_ceiling(row):
    """Whether the row's fraction_of_peak is of a measured ceiling: not where the run measured
    none (the fraction empty), nor in FP8 rows written before the binary measured FP8 wgmma
    (the ceiling empty, the fraction 0)."""
    return bool(row["ceiling"]) and bool(row["fraction_of_peak"])


def markdown_table(rows, sizes=None):
    """Caption line plus a Markdown table of the square runs, one line per stage, at
    `sizes` (default: every size the rows have)."""
    square = square_rows(rows)
    if not square:
        raise ValueError("no square (m == n == k) rows to tabulate")
    sizes = sizes or square_sizes(square)
    by_size = {size: latest_by_stage(square, size) for size in sizes}
    header = ["Stage", "Name", "Precision"]
    alignment = ["---:", ":---", ":---"]
    for size in sizes:
        header += [f"N={size} TFLOPS", "% of cuBLAS"]
        alignment += ["---:", "---:"]
    header.append("Verified")
    alignment.append(":---:")
    lines = _table_head(_caption(square), header, alignment)
    for stage, stage_rows in _group_by_stage(square):
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
    cuBLAS alone would hide how close they come to what their instruction can do. A row
    whose run measured no ceiling shows a dash, and the caption says which; None where no
    row has one."""
    square = square_rows(rows)
    if not any(has_ceiling(row) for row in square):
        return None
    sizes = square_sizes(square)
    by_size = {size: latest_by_stage(square, size) for size in sizes}
    header = ["Stage", "Name", "Ceiling"] + [f"N={size} % of ceiling" for size in sizes]
    alignment = ["---:", ":---", ":---"] + ["---:" for _ in sizes]
    caption = (f"Fraction of the ceiling of the unit each stage runs on: {describe_ceilings(square)}."
               f"{_no_ceiling_note(square)}")
    lines = _table_head(caption, header, alignment)
    for stage, stage_rows in _group_by_stage(square):
        latest = stage_rows[-1]
        ceilings = [r["tflops"] / r["fraction_of_peak"] for r in stage_rows if has_ceiling(r)]
        ceiling = (f"{_ceiling_label(latest['ceiling'])}, {sum(ceilings) / len(ceilings):.0f} TFLOPS"
                   if ceilings else MISSING)
        cells = [str(stage), f"`{latest['name']}`", ceiling]
        for size in sizes:
            cells.append(_fraction_of_ceiling(by_size[size].get(stage)))
        lines.append(_table_line(cells))
    return "\n".join(lines)


def clock_table(rows):
    """The SM clock over each stage's timed launches, and its fraction of the ceiling
    scaled from the clock the ceiling was measured at to that one: what the stage does
    per clock against what its unit does per clock. On a GPU at its power cap the two
    clocks differ, and % of ceiling alone mixes the stage's work with the cap's. None
    when no row carries both clocks (files written before the binary read them)."""
    square = [row for row in square_rows(rows) if has_ceiling(row)
              and row["sm_clock_mhz"] is not None and row["ceiling_sm_clock_mhz"] is not None]
    if not square:
        return None
    sizes = square_sizes(square)
    by_size = {size: latest_by_stage(square, size) for size in sizes}
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
    for stage, stage_rows in _group_by_stage(square):
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


def _no_ceiling_note(rows):
    """The sentence that says which stages' runs measured no ceiling, where some did not ("" otherwise)."""
    without = [row for row in rows if not has_ceiling(row)]
    if not without:
        return ""
    return f" A {MISSING} marks a run that measured no ceiling: the {_input_precisions(without)} stages' here."


def _input_precisions(rows):
    """The precisions the rows read A and B in, joined: "bf16 / fp8"."""
    return " / ".join(sorted({input_precision(row["precision"]) for row in rows}))


def _range(values):
    return f"{values[0]}" if len(values) == 1 else f"{values[0]}–{values[-1]}"


def describe_ceilings(rows):
    """Which ceiling the rows' fractions are of, per precision A and B are read in: "for fp32
    stages, ...; for bf16 stages, ..."; rows without a measured ceiling are not named."""
    rows = [row for row in rows if has_ceiling(row)]
    parts = []
    for precision in sorted({input_precision(row["precision"]) for row in rows}, key=lambda p: (p != "fp32", p)):
        names = sorted({row["ceiling"] for row in rows if input_precision(row["precision"]) == precision})
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
    caption = (f"Ceilings measured on **{joined(ceilings.values(), 'gpu')}** by `./sgemm peak`: each unit "
               "or memory alone, kept busy by every SM (registers-only or streaming microbenchmarks, "
               f"the fastest of five launches{SUSTAINED_NOTE if SUSTAINED_CEILING in ceilings else ''}).")
    if clocks:
        caption += (" The SM clock is the one the SMs counted over the fastest launch (src/measuring/sm_clock.hpp); "
                    f"`{WARP_LOOP_CEILING}` is also given per clock against `{REGISTER_CEILING}`.")
    lines = [caption, "", "| Ceiling | What | Measured |" + (" SM clock |" if clocks else ""),
             "| :--- | :--- | ---: |" + (" ---: |" if clocks else "")]
    for name in names:
        ceiling = ceilings[name]
        measured = f"{ceiling_value(ceiling['value'], ceiling['unit'])} {ceiling['unit']}"
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


def ceiling_value(value, unit):
    if unit == "TB/s":
        return f"{value:.2f}"
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def results_markdown(rows, ceilings=None, turns_rows=None):
    """results.md: the throughput table, where rows have a ceiling the fraction-of-ceiling
    table, where they carry clocks the clock table, given rows timed in turns
    (results_in_turns.csv) their table, and given the rows of a ceilings.csv, the measured
    ceilings."""
    parts = [markdown_table(rows)]
    for table in (ceiling_table(rows), clock_table(rows)):
        if table:
            parts.append(table)
    if turns_rows and any(row["precision"] != "fp32" for row in turns_rows):
        parts.append(turns_table(turns_rows, rows))
    if ceilings:
        parts.append(measured_ceilings_table(ceilings))
    return "\n\n".join(parts)


def turns_table(turns_rows, launch_rows):
    """The tensor-core stages timed in turns with cuBLAS (`--timing blocks`), beside the
    same stages' launch-by-launch ratio from the main table: on a power-capped GPU the
    two differ (src/measuring/timing.hpp). Only the precisions whose ratio moves are shown; the
    CSV keeps every row."""
    square = [row for row in square_rows(turns_rows) if row["precision"] != "fp32"]
    if not square:
        raise ValueError("no square tensor-core rows timed in turns to tabulate")
    if {row["timing"] for row in square} != {"blocks"}:
        raise ValueError("the table of turns takes rows timed with --timing blocks only")
    sizes = square_sizes(square)
    by_size = {size: latest_by_stage(square, size) for size in sizes}
    launched = {size: latest_by_stage(square_rows(launch_rows), size) for size in sizes}
    clocked = any(row["sm_clock_mhz"] is not None and row["cublas_sm_clock_mhz"] is not None for row in square)
    header = ["Stage", "Name"]
    alignment = ["---:", ":---"]
    for size in sizes:
        header += [f"N={size} TFLOPS", "% of cuBLAS", "(launch by launch)", "% of ceiling"]
        header += ["SM clock: stage, cuBLAS"] if clocked else []
        alignment += ["---:"] * (5 if clocked else 4)
    clock_words = ("; the SM clock is each kernel's over its turns, counted by the SMs" if clocked else "")
    caption = (f"The {_input_precisions(square)} stages again, each figure the median of "
               f"{_reps_range(square)} launches {TIMINGS['blocks']}; beside each ratio, the "
               "launch-by-launch one from the first table; % of ceiling is of the ceiling that "
               f"run measured as it started{clock_words}.{_no_ceiling_note(square)}")
    lines = _table_head(caption, header, alignment)
    for stage, stage_rows in _group_by_stage(square):
        cells = [str(stage), f"`{stage_rows[-1]['name']}`"]
        for size in sizes:
            row, other = by_size[size].get(stage), launched[size].get(stage)
            cells += _throughput_cells(row)
            cells.append(MISSING if other is None else f"{other['ratio_to_cublas'] * 100:.1f}%")
            cells.append(_fraction_of_ceiling(row))
            if clocked:
                cells.append(_clock_pair(row))
        lines.append(_table_line(cells))
    return "\n".join(lines)


def _fraction_of_ceiling(row):
    """A row's % of its ceiling, or a dash where there is no row or it has no ceiling."""
    return f"{row['fraction_of_peak'] * 100:.1f}%" if row is not None and has_ceiling(row) else MISSING


def _clock_pair(row):
    if row is None or row["sm_clock_mhz"] is None or row["cublas_sm_clock_mhz"] is None:
        return MISSING
    return f"{row['sm_clock_mhz']:.0f}, {row['cublas_sm_clock_mhz']:.0f} MHz"


def _caption(rows):
    return (
        f"Measured on **{joined(rows, 'gpu')}** "
        f"(driver {joined(rows, 'driver')}, CUDA {joined(rows, 'cuda')}); "
        f"square M = N = K; each figure is the median of {_reps_range(rows)} timed runs, "
        f"{_timing_words(rows)}. "
        "% of cuBLAS is throughput relative to cuBLAS at the same size and precision "
        f"({_reference_words(rows)}).")


def _reference_words(rows):
    """What % of cuBLAS is against, for each precision of the rows (fp32 and bf16 always, as
    the caption said before the FP8 stages; fp8 where the rows have it)."""
    present = {input_precision(row["precision"]) for row in rows}
    return "; ".join(words for precision, words in REFERENCE_WORDS.items()
                     if precision in present or precision in ("fp32", "bf16"))


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
    if "unbounded" in states:
        return "unbounded"
    if states == {"true"}:
        return "✓"
    return MISSING


def _table_head(caption, header, alignment):
    """A table's first lines: its caption, a blank line, its header and alignment rows."""
    return [caption, "", _table_line(header), _table_line(alignment)]


def _table_line(cells):
    return "| " + " | ".join(cells) + " |"


def _group_by_stage(rows):
    """[(stage, its rows)], by stage."""
    groups = {}
    for row in rows:
        groups.setdefault(row["stage"], []).append(row)
    return sorted(groups.items(), key=lambda item: run_key(item[0]))
