"""Running a measuring tool (build/sgemm_accuracy, build/sgemm_survey) into
results/<gpu>/: the CSV it wrote, after the rows of problems it did not measure this
time, and a Markdown table of it.
"""

import csv
import io
import subprocess
import sys
import tempfile
from pathlib import Path

from results_csv import gpu_slug


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
