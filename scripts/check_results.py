#!/usr/bin/env python3
"""Name the committed results rows whose sources changed since they were measured.

A row of a results CSV records the hash of the sources it measured (the `sources`
column: scripts/source_hashes.py, written by the binary). This compares each with the hash
of the same stage's or track's sources in the tree, and fails, naming the rows, where they
differ, or where a row records none. No GPU: it reads the CSVs and the sources.

    python3 scripts/check_results.py [--root DIR]   (make check-results)

Checked: every CSV at the top of results/<gpu>/ whose rows name what ran, a stage or a
track: the binary's rows (results.csv, results_in_turns.csv, the draws, the shape suite,
the FP8 tables), Nsight Compute's (profile.csv, by stage) and the accuracy tables' (by
method: "stage 22 split_fp16", "track fp32-tc"; cuBLAS's methods and the quantization's
error measure no source of the project's). The experiments under results/<gpu>/experiments/
are records of a commit, not current figures, and are not checked.

`make results STALE=1` re-measures the stale rows of results.csv and results_in_turns.csv
(stale_squares); the check names the command that re-measures each other file.

A stale row that cannot be measured again yet (its GPU is not at hand) may be flagged instead:
results/<gpu>/flagged.csv names its file, its stage or track, the hash it measured and the hash
of the sources it is flagged against, and why. The check prints the flagged rows and passes
them; once the sources change again, or the rows are measured again, the flag no longer
matches and the check fails until it is updated or removed. The README's sentence on the draws
says where a quoted run is flagged.
"""

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import results_csv  # noqa: E402
import source_hashes  # noqa: E402

REPO_ROOT = source_hashes.REPO_ROOT
SQUARE_FILES = ("results.csv", "results_in_turns.csv")  # the squares make results measures
# How a file is re-measured, by its name's start (the draws: by their seed and tracks).
REMEASURE = {
    "results.csv": "make results STALE=1",
    "results_in_turns.csv": "make results STALE=1",
    "profile.csv": "make profile STAGE=<stage>",
    "accuracy.csv": "make accuracy",
    "accuracy_fp8.csv": "make accuracy",
    "shapes.csv": "make shapes STAGES=\"<stages>\"",
    "draw_": "make draw SEED=<seed> COUNT=<count> STAGES=\"<tracks>\"",
}


def label_of(row):
    """The stage or track a row measured ("20", "bf16"), "0" for cuBLAS or the quantization
    (nothing of the project's), or None where the row names none (a draw's skipped problem)."""
    if "method" in row:
        words = row["method"].split()
        return words[1] if words[0] in ("stage", "track") else "0"
    return row["stage"] or None


def checked_files(results_dir):
    """The CSVs the check reads: at the top of each results/<gpu>/, with a stage or method column."""
    files = []
    for path in sorted(Path(results_dir).glob("*/*.csv")):
        with open(path, newline="", encoding="utf-8") as file:
            header = next(csv.reader(file), [])
        if header and header[0] == "stage" or "method" in header:
            files.append(path)
    return files


def stale_rows(path, hash_of):
    """[(row, why)] of path's rows whose sources differ from hash_of(label), or record none."""
    found = []
    with open(path, newline="", encoding="utf-8") as file:
        for row in csv.DictReader(file):
            label = label_of(row)
            if label is None or row.get("median_ms") == "":  # a problem skipped or refused: nothing measured
                continue
            recorded, now = row.get("sources", ""), hash_of(label)
            if not recorded:
                found.append((row, "records no sources"))
            elif recorded != now:
                found.append((row, f"measured on {recorded}, sources now {now}"))
    return found


def size_of(row):
    """How a row's problem reads: "4096" for a square, "MxNxK" otherwise, "N" of an accuracy row."""
    if "size" in row:
        return row["size"]
    m, n, k = row["m"], row["n"], row["k"]
    return m if m == n == k else f"{m}x{n}x{k}"


def remedy(path):
    name = Path(path).name
    for start, command in REMEASURE.items():
        if name == start or name.startswith(start) and start.endswith("_"):
            return command
    return "re-run what wrote it"


def flagged_lines(results_dir, hash_of):
    """(lines naming the flagged stale rows, lines naming the flags that match none) over every
    results/<gpu>/flagged.csv under results_dir."""
    results_dir = Path(results_dir)
    flagged, dangling = [], []
    for gpu_dir in sorted(path for path in results_dir.iterdir() if path.is_dir()):
        flags = results_csv.read_flags(gpu_dir)
        matched = set()
        for path in checked_files(results_dir):
            if path.parent != gpu_dir:
                continue
            counts = defaultdict(int)
            for row, _ in stale_rows(path, hash_of):
                key = (path.name, label_of(row), row.get("sources", ""), hash_of(label_of(row)))
                if key in flags:
                    counts[key] += 1
            for key, count in counts.items():
                matched.add(key)
                flagged.append(f"{path.relative_to(results_dir.parent)}: {run_name(key[1])}: {count} rows flagged "
                               f"(measured on {key[2]}, sources now {key[3]}): {flags[key]}")
        for key in flags.keys() - matched:
            dangling.append(f"{(gpu_dir / results_csv.FLAGS_CSV).relative_to(results_dir.parent)}: the flag of "
                            f"{key[0]}'s {run_name(key[1])} ({key[2]} -> {key[3]}) matches no stale row: the rows "
                            "were measured again or the sources changed again; remove or update it")
    return flagged, dangling


def run_name(label):
    return f"stage {label}" if label.isdigit() else f"track {label}"


def report(results_dir, hash_of):
    """(lines, stale squares [(file, stage, size)]) over every checked file under results_dir;
    the rows flagged in their GPU's flagged.csv are left out."""
    results_dir = Path(results_dir)
    lines, squares = [], []
    for path in checked_files(results_dir):
        flags = results_csv.read_flags(path.parent)
        found = [(row, why) for row, why in stale_rows(path, hash_of)
                 if (path.name, label_of(row), row.get("sources", ""), hash_of(label_of(row))) not in flags]
        if not found:
            continue
        by_label = defaultdict(list)
        for row, why in found:
            by_label[(label_of(row), why)].append(row)
        shown = path.relative_to(results_dir.parent)
        lines.append(f"{shown}: {len(found)} stale rows ({remedy(path)})")
        for (label, why), rows in sorted(by_label.items(), key=lambda item: label_order(item[0][0])):
            what = run_name(label)
            problems = list(dict.fromkeys(size_of(row) for row in rows))
            shown_problems = ", ".join(problems[:6]) + (f" and {len(problems) - 6} more" if len(problems) > 6 else "")
            lines.append(f"  {what}: {len(rows)} row{'s' if len(rows) > 1 else ''} ({shown_problems}): {why}")
            if path.name in SQUARE_FILES:
                squares += [(path.name, label, size_of(row)) for row in rows]
    return lines, list(dict.fromkeys(squares))


def hasher(root):
    """label -> the hash of its sources in the tree at root, each hashed once."""
    tree, hashes = source_hashes.WorkingTree(root), {}

    def hash_of(label):
        if label not in hashes:
            hashes[label] = source_hashes.sources_hash(label, tree)
        return hashes[label]
    return hash_of


def stale_squares(root=REPO_ROOT):
    """[(file, stage, size)] of the stale rows of results.csv and results_in_turns.csv."""
    return report(Path(root) / "results", hasher(Path(root)))[1]


def label_order(label):
    return (not label.isdigit(), int(label) if label.isdigit() else label)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=str(REPO_ROOT),
                        help="the tree whose sources and results/ are compared (default: this repository)")
    args = parser.parse_args(argv)
    root = Path(args.root)
    hash_of = hasher(root)
    lines = report(root / "results", hash_of)[0]
    flagged, dangling = flagged_lines(root / "results", hash_of)
    if flagged:
        print("Rows flagged: measured on sources that have changed since, kept with why:")
        print("\n".join(flagged))
    if lines or dangling:
        if lines:
            print("Rows measured on sources that have changed since (or that record none):")
            print("\n".join(lines))
        if dangling:
            print("\n".join(dangling))
        return 1
    print(f"every row of {len(checked_files(root / 'results'))} results files measured the sources in the tree"
          + (", or is flagged" if flagged else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
