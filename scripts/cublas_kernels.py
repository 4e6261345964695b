#!/usr/bin/env python3
"""What cuBLAS runs where the tracks fall short: Nsight Compute's kernel names, grids and
durations of the cuBLAS call each problem is timed against, beside the track's own kernels.

    python3 scripts/cublas_kernels.py --run bf16 [--problems 160x4096x4096 ...]
        [--binary ./sgemm] [--out results/<gpu>/experiments/cublas_kernels/bf16]

For each problem (by default MEDIUM_PROBLEMS: a transformer layer's GEMMs at 96-896
tokens, and squares off 128-multiples), ncu (--profile-from-start off, --clock-control
none, each kernel alone, caches flushed) profiles one launch of the run (`--profile`) and
one of the cuBLAS call it is timed against (`--profile-cublas`). cuBLAS is column-major:
it computes C^T = B^T A^T, so its first tile dimension, read from an nvjet kernel's name
(nvjet_..._<tile m>x<tile n>_<k>x<stages>_<cluster m>x<cluster n>_...), is our N (the
weights' side) and its second our M (the tokens). A tile's count is
ceil(N / first) x ceil(M / second): the waves are that count over the SMs.

Writes OUT.md (the table) and OUT.csv. Without ncu, or without permission to read the
GPU's counters, it says so in one line and exits 0.
"""
import argparse
import csv
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile_stages import number, parse_ncu_csv  # noqa: E402
from results_csv import gpu_slug  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DURATION, GRID, BLOCK, GPU = ("gpu__time_duration.sum", "launch__grid_size", "launch__block_size",
                              "device__attribute_display_name")
SMS = "device__attribute_multiprocessor_count"

# Medium token counts on layer GEMMs (N x K: Llama-style 4096 models, a 14336-wide MLP,
# DeepSeek-V3's 7168 hidden with its 2112, 24576 and 1536 projections, a 5120 x 13824 MLP)
# and squares off the tiles: where the issue measured the tracks at 65-85 % of cuBLAS.
MEDIUM_PROBLEMS = (
    (96, 4096, 4096), (128, 4096, 4096), (160, 4096, 4096), (160, 14336, 4096), (160, 4096, 14336),
    (192, 6144, 4096), (200, 7168, 5120), (256, 7168, 2048), (256, 2112, 7168), (320, 4096, 4096),
    (333, 2112, 7168), (384, 11008, 4096), (384, 4096, 11008), (448, 24576, 1536), (512, 1536, 7168),
    (512, 4096, 4096), (576, 7168, 2048), (640, 4096, 4096), (640, 14336, 4096), (640, 5120, 13824),
    (768, 2048, 7168), (896, 3584, 3584), (1000, 1000, 1000), (3000, 3000, 3000), (5000, 5000, 5000),
)
# nvjet_tst_256x160_64x4_2x1_v_bz_coopA_NNT: tile, K step x stages, cluster.
NVJET = re.compile(r"_(\d+)x(\d+)_(\d+)x(\d+)_(\d+)x(\d+)_")
COLUMNS = ("run", "m", "n", "k", "cublas_kernel", "cublas_tile", "cublas_cluster", "cublas_grid",
           "cublas_tiles", "cublas_waves", "cublas_us", "cublas_other_us", "our_kernels", "our_grid", "our_us",
           "ncu_ratio", "gpu")


def parse_problem(text):
    return tuple(int(x) for x in text.lower().split("x"))


def profile(binary, run, problem, cublas):
    """The kernels of one profiled launch (dicts of metric -> text); None where ncu may not
    read the counters; [] where the run refused the shape."""
    m, n, k = problem
    command = ["ncu", "--profile-from-start", "off", "--clock-control", "none", "--csv", "--page", "raw",
               "--print-units", "base", "--metrics", ",".join((DURATION, GRID, BLOCK, GPU, SMS)),
               str(binary), run, "-m", str(m), "-n", str(n), "-k", str(k),
               "--profile-cublas" if cublas else "--profile"]
    result = subprocess.run(command, capture_output=True, text=True)
    if "ERR_NVGPUCTRPERM" in result.stdout + result.stderr:
        return None
    if result.returncode != 0:
        print(f"cublas_kernels: {run} {m}x{n}x{k}{' (cuBLAS)' if cublas else ''} failed: "
              f"{(result.stdout + result.stderr).strip().splitlines()[-1:]}")
        return []
    return parse_ncu_csv(result.stdout)


def short_name(kernel):
    name = kernel.get("Kernel Name", "")
    return name.split("(")[0].split("<")[0].replace("void ", "").strip() or name


def row_for(binary, run, problem):
    cublas = profile(binary, run, problem, True)
    ours = profile(binary, run, problem, False)
    if cublas is None or ours is None:
        return None
    m, n, k = problem
    row = {"run": run, "m": m, "n": n, "k": k}
    if cublas:
        main = max(cublas, key=lambda kernel: number(kernel.get(DURATION, "")) or 0.0)
        name = main.get("Kernel Name", "")
        row["cublas_kernel"] = short_name(main)
        match = NVJET.search(name)
        sms = number(main.get(SMS, "")) or 0
        if match:
            tile_n, tile_m, _, _, cluster_n, cluster_m = (int(x) for x in match.groups())
            tiles = math.ceil(n / tile_n) * math.ceil(m / tile_m)
            row.update(cublas_tile=f"{tile_n}x{tile_m}", cublas_cluster=f"{cluster_n}x{cluster_m}",
                       cublas_tiles=tiles, cublas_waves=f"{tiles / sms:.2f}" if sms else "")
        row["cublas_grid"] = main.get(GRID, "")
        row["cublas_us"] = f"{number(main[DURATION]) / 1e3:.2f}"
        other = sum(number(kernel[DURATION]) for kernel in cublas if kernel is not main)
        row["cublas_other_us"] = f"{other / 1e3:.2f}" if other else ""
        row["gpu"] = main.get(GPU, "")
    if ours:
        row["our_kernels"] = " + ".join(short_name(kernel) for kernel in ours)
        row["our_grid"] = " + ".join(kernel.get(GRID, "") for kernel in ours)
        ours_ns = sum(number(kernel[DURATION]) for kernel in ours)
        row["our_us"] = f"{ours_ns / 1e3:.2f}"
        if cublas:
            row["ncu_ratio"] = f"{sum(number(kernel[DURATION]) for kernel in cublas) / ours_ns:.3f}"
    return row


def markdown(rows, command):
    run = rows[0]["run"]
    lines = [f"# What cuBLAS runs for the {run} problem at medium sizes, on {rows[0].get('gpu', '')}", "",
             f"Generated by `{command}`. One launch each, profiled by Nsight Compute (`--clock-control none`; "
             "each kernel alone, caches flushed). cuBLAS's tile is read from the nvjet kernel's name as "
             "N x M in this project's terms (cuBLAS is column-major: its first dimension is the weights' side), "
             "its cluster likewise; tiles: ceil(N / first) x ceil(M / second); waves: tiles over the SMs. "
             "Ratio: cuBLAS's summed kernel time over the run's (above 1: the run is faster).", "",
             "| M x N x K | cuBLAS kernel | tile (N x M) | cluster | grid | tiles | waves | cuBLAS (us) | "
             f"{run}'s kernels | grid | {run} (us) | ratio |",
             "|:--|:--|:--|:--|--:|--:|--:|--:|:--|--:|--:|--:|"]
    for row in rows:
        other = f" (+{row['cublas_other_us']})" if row.get("cublas_other_us") else ""
        lines.append(f"| {row['m']} x {row['n']} x {row['k']} | {row.get('cublas_kernel', '')} | "
                     f"{row.get('cublas_tile', '')} | {row.get('cublas_cluster', '')} | {row.get('cublas_grid', '')} | "
                     f"{row.get('cublas_tiles', '')} | {row.get('cublas_waves', '')} | {row.get('cublas_us', '')}{other} | "
                     f"{row.get('our_kernels', 'refused')} | {row.get('our_grid', '')} | {row.get('our_us', '')} | "
                     f"{row.get('ncu_ratio', '')} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a stage number or a track (bf16, fp8, ...)")
    parser.add_argument("--problems", nargs="+", type=parse_problem, default=MEDIUM_PROBLEMS, metavar="MxNxK")
    parser.add_argument("--binary", default=str(REPO / "sgemm"))
    parser.add_argument("--out", help="OUT.md and OUT.csv (default results/<gpu>/experiments/cublas_kernels/RUN)")
    args = parser.parse_args(argv)
    if shutil.which("ncu") is None:
        print("cublas_kernels: ncu (Nsight Compute) not found on PATH; nothing profiled")
        return 0
    rows = []
    for problem in args.problems:
        row = row_for(args.binary, args.run, problem)
        if row is None:
            print("cublas_kernels: no permission to read the GPU's performance counters (ERR_NVGPUCTRPERM)")
            return 0
        print(f"{row['m']}x{row['n']}x{row['k']}: cuBLAS {row.get('cublas_kernel', '?')} {row.get('cublas_us', '')} us, "
              f"{args.run} {row.get('our_us', 'refused')} us", flush=True)
        rows.append(row)
    out = Path(args.out) if args.out else (REPO / "results" / gpu_slug(rows[0].get("gpu", "gpu")) / "experiments" /
                                           "cublas_kernels" / args.run)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.with_suffix(".csv"), "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    command = "python3 scripts/cublas_kernels.py " + " ".join(argv if argv is not None else sys.argv[1:])
    out.with_suffix(".md").write_text(markdown(rows, command.strip()))
    print(f"wrote {out.with_suffix('.md')} and .csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
