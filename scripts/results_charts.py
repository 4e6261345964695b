"""The charts of results/<gpu>/: each stage's % of cuBLAS at one size, TFLOPS against
size, and the roofline under the ceilings measured by `./sgemm peak`.

Importing this module has no side effects: figures are drawn through
matplotlib's object-oriented API on an explicit Agg canvas, so no global
backend is selected and no pyplot state is touched.
"""

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator

from results_csv import PROFILE_SIZE, input_precision, joined, latest_by_stage, run_key, square_rows, square_sizes
from results_tables import ceiling_value
from stage_runs import precision_reference

# The roofline's roofs: compute ceilings flat, memory ceilings sloped, and their labels.
COMPUTE_ROOFS = {"fp32_ffma": "FFMA", "mma_sync_tf32": "mma.sync tf32", "mma_sync_bf16": "mma.sync bf16",
                 "wgmma_bf16": "wgmma bf16", "wgmma_fp8": "wgmma fp8"}
MEMORY_ROOFS = {"dram": "DRAM", "l2": "L2"}

CUBLAS_STAGE = 0
DPI = 120
# Paired with the 10 tab10 colours, 7 markers keep up to 70 stages distinct.
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
# Keyed by the precision A and B are read in (an FP8 row's precision also names its scaling).
PRECISION_COLORS = {"fp32": "tab:blue", "bf16": "tab:orange", "fp8": "tab:green"}
PRECISION_LEGEND = {
    "fp32": "fp32 stages, vs cuBLAS SGEMM",
    "bf16": "bf16 stages (FP32 accumulate), vs cuBLAS bf16 GemmEx",
    "fp8": "fp8 stages (e4m3, scaled), vs cuBLASLt FP8",
}
# The line style of a stage's TFLOPS against size, so the precisions read apart.
PRECISION_LINES = {"bf16": ":", "fp8": "-."}
# The height a legend entry in small type takes, and the legend's title and margins: 27
# entries fit the chart's 5.5 inches.
LEGEND_ENTRY_INCHES, LEGEND_MARGIN_INCHES = 0.185, 0.5


def plot_progression(rows, size, path):
    """Bar chart of each stage's % of cuBLAS at one square size, saved as PNG."""
    at_size = latest_by_stage(square_rows(rows), size)
    if not at_size:
        raise ValueError(f"no square rows at N={size} to plot")
    # cuBLAS goes last so the bars read left to right towards the target.
    stages = sorted(at_size, key=_cublas_last)
    percents = [at_size[stage]["ratio_to_cublas"] * 100 for stage in stages]
    # Each stage is compared with cuBLAS at its own precision; the colour says which.
    colors = ["0.25" if stage == CUBLAS_STAGE else _precision_color(at_size[stage]) for stage in stages]

    figure, axes = _new_figure(width=max(8.0, 1.1 * len(stages) + 2), height=5.5)
    positions = range(len(stages))
    bars = axes.bar(positions, percents, color=colors)
    axes.bar_label(bars, labels=[_percent_label(p) for p in percents], padding=3)
    axes.axhline(100, color="black", linestyle="--", linewidth=1)
    axes.set_xticks(positions, [_stage_label(at_size[s]) for s in stages],
                    rotation=30, ha="right", rotation_mode="anchor")
    axes.set_ylim(0, max(110.0, max(percents) * 1.15))
    axes.set_ylabel("% of cuBLAS throughput at the same precision")
    axes.set_title(f"GEMM progression on {joined(at_size.values(), 'gpu')}, "
                   f"M = N = K = {size}")
    present = {input_precision(at_size[stage]["precision"]) for stage in stages if stage != CUBLAS_STAGE}
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
    square = square_rows(rows)
    if not square:
        raise ValueError("no square (m == n == k) rows to plot")
    sizes = square_sizes(square)
    by_size = {size: latest_by_stage(square, size) for size in sizes}
    stages = sorted({row["stage"] for row in square}, key=_cublas_last)
    references = _reference_precisions(square)

    # The legend beside the axes names every line: the figure grows to hold it.
    entries = len(stages) + len(references)
    figure, axes = _new_figure(width=9.5, height=max(5.5, LEGEND_ENTRY_INCHES * entries + LEGEND_MARGIN_INCHES))
    for index, stage in enumerate(stages):
        series = [by_size[size][stage] for size in sizes if stage in by_size[size]]
        xs = [row["m"] for row in series]
        ys = [row["tflops"] for row in series]
        if stage == CUBLAS_STAGE:
            axes.plot(xs, ys, color="black", linestyle="--", marker="o",
                      linewidth=2, label="cuBLAS (fp32)")
        else:
            # bf16 stages dotted, fp8 dash-dotted, so the tracks read apart.
            axes.plot(xs, ys, color=f"C{index % 10}",
                      linestyle=PRECISION_LINES.get(input_precision(series[-1]["precision"]), "-"),
                      marker=MARKERS[index % len(MARKERS)],
                      label=_stage_label(series[-1]))
    # cuBLAS at bf16 and cuBLASLt at FP8 have no stage of their own: their stages' rows carry their timing.
    for index, precision in enumerate(references):
        reference = _reference_series(by_size, precision)
        if reference:
            axes.plot([size for size, _ in reference], [tflops for _, tflops in reference],
                      color=str(min(0.45 + 0.12 * index, 0.8)), linestyle="--", marker="o", linewidth=2,
                      label=_reference_label(precision))
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
    axes.set_title(f"GEMM throughput vs size on {joined(square, 'gpu')}")
    axes.grid(which="both", alpha=0.3)
    axes.legend(title="Stage", loc="upper left", bbox_to_anchor=(1.02, 1),
                fontsize="small")
    figure.savefig(path, dpi=DPI)


def _reference_precisions(rows):
    """The precisions (the CSV's column) whose reference has no stage of its own: cuBLAS at
    bf16, and cuBLASLt's FP8 GEMM in each scaling (the scalings' references differ); bf16
    first, then the rest by name."""
    return sorted({row["precision"] for row in rows if input_precision(row["precision"]) != "fp32"},
                  key=lambda precision: (precision != "bf16", precision))


def _reference_series(by_size, precision):
    """[(size, the median of the reference's TFLOPS over the rows of `precision`)] where there are any."""
    medians = [(size, _median([row["cublas_tflops"] for row in rows.values() if row["precision"] == precision]))
               for size, rows in sorted(by_size.items())]
    return [(size, tflops) for size, tflops in medians if tflops is not None]


def _reference_label(precision):
    """"cuBLAS (bf16)"; "cuBLASLt FP8 (tensor)", an FP8 reference by its scaling."""
    kind, _, scaling = precision.partition(" ")
    if kind == "fp8":
        return f"{precision_reference(precision)} ({scaling or 'fp8'})"
    return f"cuBLAS ({precision})"


def roofline_points(rows, profile):
    """Each stage with a result and a profile at PROFILE_SIZE: its arithmetic intensity
    (the GEMM's 2*N^3 FLOPs over the DRAM bytes Nsight Compute counted) and TFLOPS."""
    at_size = latest_by_stage(square_rows(rows), PROFILE_SIZE)
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
            roofs.append({"label": f"{label} {ceiling_value(value, 'TFLOPS')} TFLOPS",
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
        color = "0.25" if cublas else _precision_color(point)
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
    axes.set_title(f"Roofline of the stages on {joined(ceilings.values(), 'gpu')}, "
                   "roofs measured by sgemm peak")
    present = {input_precision(point["precision"]) for point in points if point["stage"] != CUBLAS_STAGE}
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


def _cublas_last(stage):
    return (stage == CUBLAS_STAGE, run_key(stage))


def _precision_color(row):
    return PRECISION_COLORS.get(input_precision(row["precision"]), "tab:gray")


def _stage_label(row):
    return "cuBLAS" if row["stage"] == CUBLAS_STAGE else f"{row['stage']} {row['name']}"
