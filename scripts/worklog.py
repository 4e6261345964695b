#!/usr/bin/env python3
"""Generate WORKLOG.md: one section per stage, in reading order. The prose of a section
is its stage file's opening comment, its chapter (one source, so code and worklog never
disagree); the numbers come from results/<gpu>/results.csv and, where it exists,
profile.csv, including the counters that moved most against the previous stage; last
come the stage's lab notes, docs/notes/NN_name.md where there is one: the measurements
behind the chapter and every experiment tried and dropped. Regenerate after changing a
chapter, a notes file or the results:

    python3 scripts/worklog.py [--gpu h100-80gb-hbm3] [--output WORKLOG.md]

A chapter's headline figures are generated too: its Measured paragraph opens with one
sentence, "Measured by make results on the <GPU>: <TFLOPS> TFLOPS at N = 4096 (<ratio> of
cuBLAS ...), <TFLOPS> at 8192 (<ratio>).", which this script (and regenerate_results.py
after a run) rewrites in every kernels/NN_*.cu from results.csv before the worklog is
written; the prose after it says what the figures mean, not the figures again.
"""
import argparse
import math
import os
import re
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
from results_csv import PROFILE_SIZE, input_precision, read_profile, read_rows  # noqa: E402
from results_tables import describe_ceilings, has_ceiling  # noqa: E402
from stage_runs import REFERENCES, fp8_reference_note, precision_reference, ratio_text, results_folder  # noqa: E402

SIZES = (4096, 8192)
NOTES_DIR = REPO / "docs" / "notes"
# A chapter a reader can finish: a stage file's opening comment has at most this many lines.
MAX_CHAPTER_LINES = 60
# Its "Measured" paragraph gives the headline figures, whether the prediction held and why,
# in at most this many lines; every other figure goes to docs/notes/.
MAX_MEASURED_LINES = 8
# The headline figures open the Measured paragraph in one generated sentence, which starts
# with these words and ends with the first comment line that ends in "."; wrapped to this
# many columns, "// " included.
GENERATED_OPENING = "Measured by make results on the "
GENERATED_SENTENCE = re.compile(re.escape(GENERATED_OPENING) + r"[^:]+: (?:[\d.]+ TFLOPS at N = \d+ \([^()]+\)"
                                r"(?:, [\d.]+ at \d+ \([^()]+\))*|no result at N = [\d or]+ yet)\.")
COMMENT_COLUMNS = 100
# profile.csv column -> how a reader calls it, and how to print its value
COUNTERS = {
    "fma_pipe_pct": ("FMA pipe busy", lambda v: f"{v:.1f} %"),
    "tensor_pipe_pct": ("tensor pipe busy", lambda v: f"{v:.1f} %"),
    "smem_load_conflicts": ("shared-load bank conflicts", lambda v: _count(v)),
    "smem_store_conflicts": ("shared-store bank conflicts", lambda v: _count(v)),
    "occupancy_pct": ("achieved occupancy", lambda v: f"{v:.1f} %"),
    "dram_bytes": ("DRAM traffic", lambda v: f"{v / 1e9:.2f} GB"),
    "l2_hit_pct": ("L2 hit rate", lambda v: f"{v:.1f} %"),
    "registers": ("registers per thread", lambda v: f"{v:.0f}"),
}


def _count(value):
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if value >= limit:
            return f"{value / limit:.1f}{suffix}"
    return f"{value:.0f}"


def stage_files(kernels_dir):
    """{stage number: path} of kernels/NN_name.cu."""
    files = {}
    for path in sorted(Path(kernels_dir).glob("[0-9][0-9]_*.cu")):
        files[int(path.name[:2])] = path
    return files


def _comment_block(path):
    """The lines of the comment block a stage file opens with, without their //."""
    lines = []
    for line in Path(path).read_text().splitlines():
        if not line.startswith("//"):
            break
        lines.append(line[2:].removeprefix(" "))
    return lines


def opening_comment(path):
    """(title, paragraphs) of the comment block a stage file opens with."""
    lines = _comment_block(path)
    title = re.sub(r"^Stage \d+ — ", "", lines[0]).strip().rstrip(".")
    return title, "\n".join(lines[1:]).strip()


def chapter_lines(path):
    """The number of lines of the comment block a stage file opens with."""
    return len(_comment_block(path))


def measured_lines(path):
    """The number of lines of the paragraph of a stage file's opening comment that begins
    with "Measured" (0 if there is none)."""
    lines = _comment_block(path)
    for i, line in enumerate(lines):
        if line.startswith("Measured"):
            end = next((j for j in range(i, len(lines)) if not lines[j].strip()), len(lines))
            return end - i
    return 0


def notes(path, base):
    """A stage's lab notes for its WORKLOG section: from their first section on (their
    title and introduction say where they stand, which the section already does), each
    heading one level down, under the stage's own, and each relative link re-pointed
    from `base`, where WORKLOG.md is."""
    lines = Path(path).read_text().splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))
    out, fenced = [], False
    for line in lines[first:]:
        if line.startswith("```"):
            fenced = not fenced
        elif line.startswith("#") and not fenced:
            line = "#" + line
        out.append(line)

    def repoint(match):
        target = os.path.relpath(Path(path).parent / match.group(2), base)
        return f"]({Path(target).as_posix()}{match.group(3) or ''})"

    text = "\n".join(out).strip()
    return re.sub(r"\]\((?!\w+:)(([^)#]+))(#[^)]*)?\)", repoint, text)


def kernel_names(path):
    """The __global__ functions a stage's .cuh beside it defines (where a chapter keeps its
    main kernel as a template), or the header its opening names as "Its kernel (X.cuh)"
    (a chapter that runs an earlier one's kernel), then those of the stage file."""
    names = []
    reused = re.search(r"Its kernel \((\w+\.cuh)\)", Path(path).read_text()[:4000])
    headers = [Path(path).with_suffix(".cuh")] + ([Path(path).parent / reused.group(1)] if reused else [])
    for source in headers + [Path(path)]:
        if source.exists():
            names += re.findall(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(", source.read_text())
    return names


def _value(row, column):
    try:
        return float(row[column])
    except (KeyError, TypeError, ValueError):
        return None


PIPES = ("fma_pipe_pct", "tensor_pipe_pct")


def moved_counters(previous, current):
    """What changed from `previous` to `current`, as text: first the busy pipe of the
    current stage (FMA or tensor), the direct measure of how well it feeds its
    arithmetic; then the other counter that changed most, by ratio, which says why."""
    busy = max(PIPES, key=lambda column: _value(current, column) or 0.0)
    moved = []
    old, new = _value(previous, busy), _value(current, busy)
    if old is not None and new is not None and old != new:
        label, show = COUNTERS[busy]
        moved.append(f"{label} {show(old)} → {show(new)}")
    changes = []
    for column, (label, show) in COUNTERS.items():
        if column in PIPES:
            continue
        old, new = _value(previous, column), _value(current, column)
        if old is None or new is None or old == new:
            continue
        floor = 1.0  # counts and percents near zero would make any change look infinite
        score = abs(math.log((max(new, 0.0) + floor) / (max(old, 0.0) + floor)))
        changes.append((score, f"{label} {show(old)} → {show(new)}"))
    changes.sort(reverse=True)
    return moved + [text for _, text in changes[:1]]


def own_counters(current):
    picked = []
    for column in ("fma_pipe_pct", "tensor_pipe_pct", "occupancy_pct"):
        value = _value(current, column)
        if value is not None and value >= 0.05:  # a pipe the stage does not use reads ~0
            picked.append(f"{COUNTERS[column][0]} {COUNTERS[column][1](value)}")
    if current.get("top_stall"):
        picked.append(f"top stall: {current['top_stall']}")
    return picked


def measured_sentence(number, rows_by_size, gpu):
    """The sentence a chapter's Measured paragraph opens with: its TFLOPS and ratio to
    cuBLAS at SIZES, from results.csv's rows (rows_by_size: {size: {stage: row}}) measured
    on `gpu`, or that there are none yet."""
    figures = []
    for size in SIZES:
        row = rows_by_size.get(size, {}).get(number)
        if row:
            ratio = ratio_text(number, row["ratio_to_cublas"])
            if not figures:
                ratio += f" {'of ' if ratio.endswith('%') else ''}{precision_reference(row['precision'])}"
                figures.append(f"{row['tflops']:.1f} TFLOPS at N = {size} ({ratio})")
            else:
                figures.append(f"{row['tflops']:.1f} at {size} ({ratio})")
    sizes = " or ".join(map(str, SIZES))
    return (f"{GENERATED_OPENING}{gpu.removeprefix('NVIDIA ')}: "
            + (", ".join(figures) if figures else f"no result at N = {sizes} yet") + ".")


def comment_lines(text, columns=COMMENT_COLUMNS):
    """Text as // comment lines of at most `columns` (a longer word stays whole), never
    breaking a figure from its unit, an "N = 4096" or a reference's name ("cuBLASLt FP8") apart."""
    kept = re.sub(r"(?<=\d) (?=%)|(?<=\bN) = (?=\d)", lambda match: match.group().replace(" ", "\0"), text)
    for name in REFERENCES.values():
        kept = kept.replace(name, name.replace(" ", "\0"))
    return ["// " + line.replace("\0", " ")
            for line in textwrap.wrap(kept, columns - len("// "), break_long_words=False, break_on_hyphens=False)]


def _measured_span(lines, path):
    """(first, end) of a stage file's lines: where its Measured paragraph opens, and past the
    generated sentence there (first == end where it has none). ValueError without a
    Measured paragraph in its opening comment, or where the sentence there is not in its
    form (broken by hand: rewriting it could take the prose after it)."""
    opening = len(_comment_block(path))
    first = next((i for i in range(opening) if lines[i].startswith("// Measured")), None)
    if first is None:
        raise ValueError(f"{path}: its opening comment has no Measured paragraph for the figures")
    if not lines[first].startswith("// " + GENERATED_OPENING):
        return first, first
    end = next((i for i in range(first, opening) if lines[i].endswith(".")), opening - 1) + 1
    if not GENERATED_SENTENCE.fullmatch(" ".join(line.removeprefix("// ") for line in lines[first:end])):
        raise ValueError(f"{path}:{first + 1}: the generated sentence is not in its form; put it back as "
                         "worklog.measured_sentence writes it, or take it out")
    return first, end


def generated_sentence_in(path):
    """The comment lines of the generated sentence a stage file's Measured paragraph opens
    with ([] where it opens otherwise)."""
    lines = Path(path).read_text().split("\n")
    first, end = _measured_span(lines, path)
    return lines[first:end]


def wanted_measured_sentences(kernels_dir, results_dir):
    """{stage file in kernels_dir: the comment lines of the sentence its Measured paragraph
    should open with, from results_dir/results.csv}."""
    rows_by_size, gpu = _square_rows_by_size(results_dir)
    return {path: comment_lines(measured_sentence(number, rows_by_size, gpu))
            for number, path in stage_files(kernels_dir).items()}


def refresh_measured_sentences(kernels_dir, results_dir):
    """Write each chapter's generated sentence from results_dir/results.csv into its stage
    file in kernels_dir, in place of the one there (or before the Measured paragraph's
    first line, where it has none); return the paths changed."""
    changed = []
    for path, wanted in wanted_measured_sentences(kernels_dir, results_dir).items():
        lines = path.read_text().split("\n")
        first, end = _measured_span(lines, path)
        if lines[first:end] != wanted:
            path.write_text("\n".join(lines[:first] + wanted + lines[end:]))
            changed.append(path)
    return changed


def _square_rows_by_size(results_dir):
    """({size: {stage: row}} of results_dir/results.csv's squares, the GPU they were measured on)."""
    rows = read_rows(Path(results_dir) / "results.csv")
    rows_by_size = {}
    for row in rows:
        if row["m"] == row["n"] == row["k"]:
            rows_by_size.setdefault(row["m"], {})[row["stage"]] = row
    return rows_by_size, rows[0]["gpu"]


def section(number, path, rows_by_size, profile, previous_number, base, notes_dir=NOTES_DIR):
    title, prose = opening_comment(path)
    lines = [f"## Stage {number} — {title}", "", prose, ""]
    kernels = kernel_names(path)
    link = os.path.relpath(path, base)
    lines.append(f"Code: [`{link}`]({link})"
                 + (f", kernel `{kernels[0]}`" if kernels else "") + ".")
    # TFLOPS and the ratio to cuBLAS are the chapter's own first sentence; the share of the ceiling is not.
    # A stage with no measured ceiling (FP8) has no such line.
    of_ceiling = [f"{row['fraction_of_peak'] * 100:.1f} % at N = {size}" for size in SIZES
                  if (row := rows_by_size.get(size, {}).get(number)) and has_ceiling(row)]
    if of_ceiling:
        lines.append("Of its ceiling: " + ", ".join(of_ceiling) + ".")
    current = profile.get(number)
    if current:
        previous = profile.get(previous_number) if previous_number is not None else None
        moved = moved_counters(previous, current) if previous else []
        if moved:
            lines.append(f"What moved since stage {previous_number} (Nsight Compute, N = {PROFILE_SIZE}): "
                         + "; ".join(moved) + ".")
        else:
            lines.append(f"Counters (Nsight Compute, N = {PROFILE_SIZE}): " + "; ".join(own_counters(current)) + ".")
    notes_path = Path(notes_dir) / Path(path).with_suffix(".md").name
    if notes_path.exists():
        link = os.path.relpath(notes_path, base)
        lines += ["", f"The lab notes ([`{link}`]({link})): what the chapter stands on, and what was tried "
                      "and dropped.", "", notes(notes_path, base)]
    return "\n".join(lines) + "\n"


def _no_ceiling_words(rows):
    """"; the fp8 stages have none measured" where some rows have no ceiling; "" otherwise."""
    without = sorted({input_precision(row["precision"]) for row in rows if not has_ceiling(row)})
    return f"; the {' and '.join(without)} stages have none measured" if without else ""


def worklog(kernels_dir, results_dir, base=REPO):
    """WORKLOG.md's text; paths in it are relative to `base`, the folder it is written to."""
    rows_by_size, gpu = _square_rows_by_size(results_dir)
    square = [row for rows in rows_by_size.values() for row in rows.values()]
    profile = read_profile(Path(results_dir) / "profile.csv")
    parts = [
        "# The worklog",
        "",
        "<!-- Generated by scripts/worklog.py from the stage files' opening comments, the notes in "
        f"{os.path.relpath(NOTES_DIR, base)}/ and {os.path.relpath(results_dir, base)}/; edit those and "
        "regenerate. -->",
        "",
        f"Every stage in reading order: the idea, where the code is, what it measured on the {gpu}, "
        "the profiler counters that explain the change from the stage before, and where a stage has "
        "them, its lab notes: the measurements behind its chapter and the experiments that did not "
        "pay. Ratios are "
        f"against cuBLAS at the same precision{fp8_reference_note(square, 'stages')}, timed in the same process; "
        "the ceiling is, "
        f"{describe_ceilings(square)}{_no_ceiling_words(square)}.",
        "",
    ]
    roofline = Path(results_dir) / "roofline.png"
    if roofline.exists():
        link = os.path.relpath(roofline, base)
        parts += [f"[The roofline]({link}) places every stage under the ceilings `./sgemm peak` measured on "
                  "this GPU: its arithmetic intensity from the DRAM bytes in the profile, its TFLOPS from "
                  "the results.", ""]
    files = stage_files(kernels_dir)
    previous = None
    for number in sorted(files):
        parts.append(section(number, files[number], rows_by_size, profile, previous, base))
        previous = number
    return "\n".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", help="folder under results/ (default: the only one)")
    parser.add_argument("--output", default=str(REPO / "WORKLOG.md"))
    args = parser.parse_args()
    results_dir = results_folder(REPO / "results", args.gpu, "results.csv")
    try:
        for path in refresh_measured_sentences(REPO / "kernels", results_dir):
            print(f"wrote {path.relative_to(REPO)}")
    except ValueError as error:
        sys.exit(f"worklog: {error}")
    Path(args.output).write_text(worklog(REPO / "kernels", results_dir))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
