"""The CSV files the results are kept in: the rows written by `./sgemm ... --csv FILE`
(their columns, reading, writing and merging them), the ceilings written by
`./sgemm peak --csv FILE`, the profile written by scripts/profile_stages.py, the CSVs of
the measuring tools (sgemm_tune, sgemm_survey, sgemm_accuracy), and the selections of
rows the tables and charts share.

A row's `stage` is what ran: a stage's number (an int) or a track's name (a str, e.g.
"bf16": `./sgemm bf16 ...`, which runs the kernel of the stage its dispatch chooses for
the shape). Its `kernel` says which stage's kernel that was: "20", "14", "20 padded"
(on zero-padded copies of the operands); empty in files written before the column.
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
    "timing", "reps", "seed", *CLOCK_COLUMNS, "data", "kernel", "sources",
)
# What the inputs held (sgemm --data); files written before the column read as "uniform".
DATA_KINDS = ("uniform", "wide", "exact")
COLUMNS_BEFORE_SOURCES = COLUMNS[:-1]
COLUMNS_BEFORE_KERNEL = COLUMNS_BEFORE_SOURCES[:-1]
COLUMNS_BEFORE_DATA = COLUMNS_BEFORE_KERNEL[:-1]
COLUMNS_BEFORE_CLOCKS = COLUMNS_BEFORE_DATA[:-len(CLOCK_COLUMNS)]
# Every header the binary has written, newest first: a file keeps the one it was written with.
BINARY_HEADERS = (COLUMNS, COLUMNS_BEFORE_SOURCES, COLUMNS_BEFORE_KERNEL, COLUMNS_BEFORE_DATA,
                  COLUMNS_BEFORE_CLOCKS)
# The sources column: the hash of the sources the row measured (scripts/source_hashes.py);
# empty in files written before the column, until scripts/check_results.py stamps them.
SOURCES = re.compile(r"([0-9a-f]{12})?")
# A track's name in the stage column (a stage's is a number).
TRACK_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
# The kernel column: the stage whose kernel ran, and whether on padded copies ("" before the column).
KERNEL = re.compile(r"(\d+( padded)?)?")
INT_COLUMNS = frozenset({"m", "n", "k", "reps", "seed"})
FLOAT_COLUMNS = frozenset({
    "alpha", "beta", "median_ms", "tflops", "cublas_median_ms",
    "cublas_tflops", "ratio_to_cublas", "fraction_of_peak",
    "rel_error_fp64", "worst_error_over_budget", *CLOCK_COLUMNS,
})
# The binary leaves these empty when it skips verification, cannot read the clock, or
# measured no ceiling for the stage's unit (fraction_of_peak: 0 in files written before).
OPTIONAL_COLUMNS = frozenset({"rel_error_fp64", "worst_error_over_budget", *CLOCK_COLUMNS, "fraction_of_peak"})
# unbounded: the run passed a check with no finite budget (NaN and Inf alone checked): not verified.
VERIFIED_VALUES = ("true", "false", "skipped", "unbounded")
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

    Empty optional fields (OPTIONAL_COLUMNS) become None. extra_columns: text columns that follow
    the binary's own (the shape suite's name and group). Raises ValueError naming the
    file and line when the header or a field does not match the format.
    """
    extra_columns = tuple(extra_columns)
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        header = tuple(reader.fieldnames or ())
        check_header(path, header, extra_columns)
        return [_typed_row(raw, path, reader.line_num, extra_columns) for raw in reader]


def read_rows_if_written(path, extra_columns=()):
    """read_rows, or [] where the binary wrote nothing (no file, or an empty one)."""
    path = Path(path)
    if not path.exists() or not path.stat().st_size:
        return []
    return read_rows(path, extra_columns)


def check_header(path, header, extra_columns=()):
    """Raise ValueError unless `header` is one of BINARY_HEADERS followed by extra_columns."""
    if header not in [binary + tuple(extra_columns) for binary in BINARY_HEADERS]:
        raise ValueError(
            f"{path}: header must be exactly {','.join(COLUMNS + tuple(extra_columns))} (or without the "
            f"binary's last 1, 2, 3 or {len(CLOCK_COLUMNS) + 3} columns, as older files are); "
            f"got {','.join(header) or 'nothing'}")


def _typed_row(raw, path, line, extra_columns=()):
    if None in raw or None in raw.values():
        raise ValueError(f"{path}:{line}: expected as many fields as the header has")
    row = {column: raw[column] for column in extra_columns}
    for column in COLUMNS:
        try:
            row[column] = parse_field(column, raw.get(column, ""))
        except ValueError as error:
            raise ValueError(f"{path}:{line}: {column}: {error}") from None
    return row


def parse_run(text):
    """A stage column's text as what ran: a stage's number (int) or a track's name (str)."""
    if text.isdigit():
        return int(text)
    if not TRACK_NAME.fullmatch(text):
        raise ValueError(f"expected a stage number or a track's name, got {text!r}")
    return text


def input_precision(precision):
    """The precision A and B are read in, of the precision column: its first word ("fp8" of
    an FP8 run's "fp8 1x128-128x128", which names its scaling; "bf16" of "bf16 (bf16 C)");
    "" for none (a run that wrote no row)."""
    return precision.split()[0] if precision else ""


def run_key(run):
    """A sort key for stage column values: stages by number, then tracks by name."""
    return (isinstance(run, str), run)


def parse_field(column, text):
    """One field of the binary's CSV, typed (an empty optional field is None)."""
    if column in OPTIONAL_COLUMNS and text == "":
        return None
    if column == "stage":
        return parse_run(text)
    if column == "kernel":
        if not KERNEL.fullmatch(text):
            raise ValueError(f"expected a stage number, optionally followed by ' padded', got {text!r}")
        return text
    if column == "sources":
        if not SOURCES.fullmatch(text):
            raise ValueError(f"expected a hash of 12 hex digits or nothing, got {text!r}")
        return text
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


def read_runs(path, extra_columns, int_columns=()):
    """The rows of a CSV of runs (a draw's, a comparison's): the binary's columns, typed as
    parse_field types them, then extra_columns as text (int_columns of them as ints); an
    empty field None (a run that was refused, failed or skipped has only its problem's),
    the kernel "" where the file, written before the column, lacks it."""
    def typed(column, text):
        if column in ("reason", "kernel", "sources"):
            return text
        if text == "":
            return None
        if column in int_columns:
            return int(text)
        return parse_field(column, text) if column in COLUMNS else text

    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        check_header(path, tuple(reader.fieldnames or ()), extra_columns)
        return [{column: typed(column, raw.get(column, "")) for column in COLUMNS + tuple(extra_columns)}
                for raw in reader]


def blank_row(extra_columns=(), **fields):
    """A row of the binary's columns and extra_columns, those not in `fields` empty (None):
    what a script records of a run the binary wrote no row for (refused, failed, skipped)."""
    return {**dict.fromkeys(COLUMNS + tuple(extra_columns)), **fields}


def write_rows(rows, path, extra_columns=()):
    """Write rows in the binary's CSV format (header, then one line each), with
    extra_columns after the binary's own. The kernel column is written where a row has a
    kernel, the sources column where a row has sources: rebuilding from a file written before
    a column leaves the file as it was."""
    rows = list(rows)
    binary = (COLUMNS if any(row.get("sources") for row in rows)
              else COLUMNS_BEFORE_SOURCES if any(row.get("kernel") for row in rows) else COLUMNS_BEFORE_KERNEL)
    columns = binary + tuple(extra_columns)
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


def merged(new_rows, old_rows, key):
    """The old rows whose key(row) no new row has, then the new rows: a run replaces the
    rows it measured and keeps the others."""
    replaced = {key(row) for row in new_rows}
    return [row for row in old_rows if key(row) not in replaced] + list(new_rows)


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


def single_gpu(rows):
    """The one GPU `rows` were measured on; ValueError where there are several or none."""
    gpus = sorted({row["gpu"] for row in rows if row["gpu"]})
    if len(gpus) != 1:
        raise ValueError(f"expected rows from one GPU, got {', '.join(gpus) or 'none'}")
    return gpus[0]


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
    return (row["m"], row["n"], row["k"], run_key(row["stage"]))


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


FLAGS_CSV = "flagged.csv"  # beside a GPU's results: rows measured on sources changed since, and why
FLAGS_HEADER = ["file", "run", "measured_sources", "sources", "why"]


def read_flags(gpu_dir):
    """{(file, run, measured_sources, sources): why} from gpu_dir's flagged.csv ({} without
    one): the stale rows kept, each named by its file, its run (a stage or track), the hash of
    the sources it measured and the hash of the sources it was flagged against."""
    path = Path(gpu_dir) / FLAGS_CSV
    if not path.exists():
        return {}
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        if reader.fieldnames != FLAGS_HEADER:
            raise ValueError(f"{path}: expected the columns {','.join(FLAGS_HEADER)}")
        return {(row["file"], row["run"], row["measured_sources"], row["sources"]): row["why"] for row in reader}
