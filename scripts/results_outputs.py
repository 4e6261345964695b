"""What a run leaves in results/<gpu>/ and the README: results.csv, results.md and the
charts, written from the rows and the ceilings.csv, profile.csv and
results_in_turns.csv beside them, and the README's results block between its markers, and
its sentence on the random draws beside them (draw_<seed>.csv) between its own.
"""

import os
from pathlib import Path

import draw_report
from results_charts import plot_progression, plot_roofline, plot_tflops_vs_size
from results_csv import (PROFILE_SIZE, joined, read_ceilings, read_profile, read_rows, square_rows,
                         square_sizes, write_rows_sorted)
from results_tables import markdown_table, results_markdown

# Rows of `sgemm all N --timing blocks`, beside results.csv; regenerate_results.py
# writes it, write_outputs() tabulates it.
TURNS_CSV = "results_in_turns.csv"
PREFERRED_PROGRESSION_SIZE = 4096
# The README's one table shows these sizes (where the results have them); results.md, all.
README_SIZES = (4096, 8192)
# The charts in results/<gpu>/, and their captions; the README shows the first.
CHARTS = (("progression.png", "GEMM progression at N={size}"), ("tflops_vs_size.png", "GEMM TFLOPS vs size"),
          ("roofline.png", f"Roofline at N={PROFILE_SIZE}"))
README_BEGIN = "<!-- results:begin -->"
README_END = "<!-- results:end -->"
# The README's sentence on the random draws it quotes: the draw_<seed>.csv files beside
# results.csv (draw_report.readme_sentence).
DRAWS_BEGIN = "<!-- draws:begin -->"
DRAWS_END = "<!-- draws:end -->"


def readme_sizes(rows):
    """The sizes of the README's table: README_SIZES where the rows have them, else
    their two largest."""
    sizes = square_sizes(square_rows(rows))
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


def refresh_readme(readme_path, markdown_block, begin=README_BEGIN, end_marker=README_END):
    """Replace the text between the marker lines (the results block's by default), keeping the markers."""
    path = Path(readme_path)
    text = path.read_text(encoding="utf-8")
    for marker in (begin, end_marker):
        count = text.count(marker)
        if count != 1:
            raise ValueError(
                f"{path}: expected exactly one '{marker}' line, found {count}; "
                f"put a '{begin}' line and a '{end_marker}' line "
                "where the results belong")
    start = text.index(begin) + len(begin)
    end = text.index(end_marker)
    if end < start:
        raise ValueError(f"{path}: '{end_marker}' comes before '{begin}'")
    block = markdown_block.strip("\n")
    path.write_text(f"{text[:start]}\n{block}\n{text[end:]}", encoding="utf-8")


def quoted_draws(out_dir):
    """[(path, seed)] of the draws beside results.csv in out_dir, by seed: the ones the README quotes."""
    draws = [(path, int(path.stem.removeprefix("draw_"))) for path in Path(out_dir).glob("draw_*.csv")
             if path.stem.removeprefix("draw_").isdigit()]
    return sorted(draws, key=lambda draw: draw[1])


def readme_draws_markdown(out_dir, readme_dir):
    """The README's sentence on the draws in out_dir (draw_report.readme_sentence)."""
    return draw_report.readme_sentence(quoted_draws(out_dir), readme_dir)


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
            raise ValueError(f"{path} was measured on {joined(measured, 'gpu')}, "
                             f"the results on {joined(rows, 'gpu')}")
    return ceilings, turns_rows


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
        if DRAWS_BEGIN in Path(readme_path).read_text(encoding="utf-8"):
            refresh_readme(readme_path, readme_draws_markdown(out_dir, Path(readme_path).parent), DRAWS_BEGIN,
                           DRAWS_END)
        written.append(Path(readme_path))
    return written


def _progression_size(rows):
    sizes = square_sizes(square_rows(rows))
    return PREFERRED_PROGRESSION_SIZE if PREFERRED_PROGRESSION_SIZE in sizes else sizes[-1]


def _relative_link(path, start):
    return Path(os.path.relpath(path, start)).as_posix()
