"""The CSV files the results are kept in: the rows written by `./sgemm ... --csv FILE`
(their columns, reading and writing them), the ceilings written by
`./sgemm peak --csv FILE`, the profile written by scripts/profile_stages.py, the CSVs of
the measuring tools (sgemm_tune, sgemm_survey, sgemm_accuracy), and the selections of
rows the tables and charts share.
"""

import csv
import re
from pathlib import Path

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
# The `timing` column says how the stage and cuBLAS took turns (`--timing`,
# src/measuring/timing.hpp); for each, how the caption puts it.
TIMINGS = {
    "launches": "interleaved with cuBLAS launch by launch in the same process, so that "
                "both run at the one clock their mix sets",
    "blocks": "taking turns with cuBLAS in blocks of launches in the same process "
              "(`--timing blocks`), so that each runs at the clock its own power draw allows",
    "graph": "in CUDA graphs of launches back to back over operand sets that take them past "
             "twice the L2, the stage's graph and cuBLAS's in turns (`--timing graph`)",
}

# ceilings.csv, from `sgemm peak --csv`: one row per ceiling measured, with the SM clock
# of the launch that measured it where one was read (files written before the binary
# read clocks lack the column).
CEILING_COLUMNS = ("ceiling", "unit", "value", "gpu", "sm_clock_mhz")
CEILING_COLUMNS_BEFORE_CLOCKS = CEILING_COLUMNS[:-1]
# profile.csv, from scripts/profile_stages.py: Nsight Compute counters at one size.
PROFILE_SIZE = 4096


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


def write_rows_sorted(rows, path):
    """write_rows, ordered by size then stage, as results.csv and results_in_turns.csv are."""
    write_rows(sorted(rows, key=_size_then_stage), path)


def read_typed(path, converters):
    """The rows of a measuring tool's CSV (sgemm_tune, sgemm_survey, sgemm_accuracy) as
    dicts of text, each column of `converters` passed through its function (given "" where
    the file, written before the column, lacks it)."""
    with open(path, newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    for row in rows:
        for column, convert in converters.items():
            row[column] = convert(row.get(column, ""))
    return rows


def optional_float(text):
    return float(text) if text else None


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


def _size_then_stage(row):
    return (row["m"], row["n"], row["k"], row["stage"])


# Selections of rows that the tables, the charts and the README block share.
def square_rows(rows):
    return [row for row in rows if row["m"] == row["n"] == row["k"]]


def square_sizes(square_rows):
    return sorted({row["m"] for row in square_rows})


def latest_by_stage(square_rows, size):
    # A CSV may hold repeated runs of one stage; the last one written wins.
    return {row["stage"]: row for row in square_rows if row["m"] == size}


def joined(rows, column):
    return " / ".join(sorted({str(row[column]) for row in rows}))
