#!/usr/bin/env python3
"""Profile stages with Nsight Compute and write results/<gpu>/profile.csv: one row per
stage with the counters that explain its speed (registers, shared memory, occupancy,
DRAM traffic, L2 hit rate, bank conflicts, the FMA and tensor pipes, the top stall).

    python3 scripts/profile_stages.py [--stages 5 7] [--size 4096]

Each stage runs as `sgemm <stage> <size> --profile`, which launches it once between
cudaProfilerStart and cudaProfilerStop; ncu (--profile-from-start off, --clock-control
none) then measures that launch alone, with a focused metric set rather than
--set full. Rows of stages profiled again replace the old ones in profile.csv. Without
ncu, or without permission to read the GPU's counters, it says so in one line and
exits 0, so that the rest of the pipeline still runs.
"""
import argparse
import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
from results_csv import gpu_slug  # noqa: E402
from source_hashes import WorkingTree, sources_hash  # noqa: E402

STALL_REASONS = ("barrier", "long_scoreboard", "short_scoreboard", "mio_throttle", "math_pipe_throttle",
                 "wait", "not_selected", "dispatch_stall", "lg_throttle", "no_instruction",
                 "branch_resolving", "membar", "drain", "tex_throttle", "imc_miss", "sleeping")
STALL_METRIC = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"

# profile.csv column -> ncu metric
METRICS = {
    "duration_ms": "gpu__time_duration.sum",
    "registers": "launch__registers_per_thread",
    "static_shared_bytes": "launch__shared_mem_per_block_static",
    "dynamic_shared_bytes": "launch__shared_mem_per_block_dynamic",
    "occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "dram_bytes": "dram__bytes.sum",
    "dram_throughput_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l2_hit_pct": "lts__t_sector_hit_rate.pct",
    "smem_load_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "smem_store_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "fma_pipe_pct": "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "tensor_pipe_pct": "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
}
GPU_METRIC = "device__attribute_display_name"
# sources: the hash of the code profiled (scripts/source_hashes.py), from the tree the
# binary was built from (make profile builds it first).
COLUMNS = ["stage", "name", "size", "kernel", *METRICS, "top_stall", "top_stall_cycles", "gpu", "sources"]


def ncu_command(binary, stage, size):
    metrics = [*METRICS.values(), GPU_METRIC, *(STALL_METRIC.format(r) for r in STALL_REASONS)]
    return ["ncu", "--profile-from-start", "off", "--clock-control", "none", "--csv", "--page", "raw",
            "--print-units", "base", "--metrics", ",".join(metrics),
            str(binary), str(stage), str(size), "--profile"]


def number(text):
    text = text.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def parse_ncu_csv(text):
    """The kernels in ncu's raw CSV page, as dicts of metric -> text. ncu prints its own
    log lines (==PROF==) and, in raw pages, a row of units under the header; both go."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    if not lines:
        return []
    rows = list(csv.reader(lines))
    header, body = rows[0], rows[1:]
    kernels = []
    for row in body:
        record = dict(zip(header, row))
        if record.get("ID", "").strip() == "":  # the units row
            continue
        kernels.append(record)
    return kernels


def profile_row(stage, name, size, kernels):
    """One profile.csv row from a stage's kernels: the longest-running one speaks for
    it (cuBLAS may launch a helper kernel beside its GEMM)."""
    if not kernels:
        raise ValueError(f"ncu reported no kernel for stage {stage}")
    kernel = max(kernels, key=lambda k: number(k.get(METRICS["duration_ms"], "")) or 0.0)
    row = {"stage": stage, "name": name, "size": size, "kernel": kernel.get("Kernel Name", "")}
    for column, metric in METRICS.items():
        value = number(kernel.get(metric, ""))
        if column == "duration_ms" and value is not None:
            value /= 1e6  # base units: nanoseconds
        row[column] = "" if value is None else f"{value:.6g}"
    stalls = {r: number(kernel.get(STALL_METRIC.format(r), "")) for r in STALL_REASONS}
    stalls = {r: v for r, v in stalls.items() if v is not None}
    top = max(stalls, key=stalls.get) if stalls else ""
    row["top_stall"] = top
    row["top_stall_cycles"] = f"{stalls[top]:.3g}" if top else ""
    row["gpu"] = kernel.get(GPU_METRIC, "").strip()
    row["sources"] = sources_hash(str(stage), WorkingTree(REPO))
    return row


def available_stages(binary):
    """(number, name) of every stage the binary can run on this GPU, from --list."""
    return stages_in_listing(subprocess.run([str(binary), "--list"], capture_output=True, text=True, check=True).stdout)


def stages_in_listing(listing):
    """(number, name) of each stage of a `sgemm --list` that no "unavailable:" line follows.
    The tracks listed after the stages are not stages: an "unavailable:" line after one
    leaves the stages as they are."""
    stages, last_was_stage = [], False
    for line in listing.splitlines():
        match = re.match(r"\s+(\d+)\s+(\S+)", line)
        if match:
            stages.append((int(match.group(1)), match.group(2)))
        elif "unavailable:" in line and last_was_stage:
            stages.pop()
        last_was_stage = bool(match)
    return stages


def merge_rows(path, new_rows):
    """profile.csv with new_rows replacing the rows of the same stages and size."""
    keep = []
    if path.exists():
        with open(path, newline="") as file:
            replaced = {(r["stage"], r["size"]) for r in new_rows}
            keep = [r for r in csv.DictReader(file) if (int(r["stage"]), int(r["size"])) not in replaced]
    rows = sorted([*keep, *new_rows], key=lambda r: (int(r["size"]), int(r["stage"])))
    with open(path, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", type=int, nargs="+", help="stage numbers (default: every available stage)")
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--binary", default=str(REPO / "sgemm"))
    parser.add_argument("--results-dir", default=str(REPO / "results"))
    args = parser.parse_args()

    if shutil.which("ncu") is None:
        print("profile: ncu (Nsight Compute) not found on PATH; no profile taken")
        return 0
    if not Path(args.binary).exists():
        sys.exit(f"profile: {args.binary} not found: run make first")
    names = dict(available_stages(args.binary))
    stages = args.stages or sorted(names)
    rows = []
    for stage in stages:
        if stage not in names:
            sys.exit(f"profile: stage {stage} is not available on this GPU (./sgemm --list)")
        result = subprocess.run(ncu_command(args.binary, stage, args.size), capture_output=True, text=True)
        output = result.stdout + result.stderr
        if "ERR_NVGPUCTRPERM" in output:
            print("profile: no permission to read the GPU's performance counters (ERR_NVGPUCTRPERM); no profile taken")
            return 0
        if result.returncode != 0:
            sys.exit(f"profile: ncu failed on stage {stage}:\n{output[-2000:]}")
        row = profile_row(stage, names[stage], args.size, parse_ncu_csv(result.stdout))
        rows.append(row)
        print(f"stage {stage:2} {names[stage]:<22} {float(row['duration_ms'] or 0):8.3f} ms  "
              f"regs {row['registers']:>4}  occupancy {row['occupancy_pct']:>6}%  "
              f"FMA pipe {row['fma_pipe_pct']:>6}%  tensor pipe {row['tensor_pipe_pct']:>6}%  "
              f"smem conflicts ld {row['smem_load_conflicts']} st {row['smem_store_conflicts']}  "
              f"L2 hit {row['l2_hit_pct']}%  DRAM {row['dram_bytes']} B  top stall {row['top_stall']}",
              flush=True)
    out_dir = Path(args.results_dir) / gpu_slug(rows[0]["gpu"])
    out_dir.mkdir(parents=True, exist_ok=True)
    merge_rows(out_dir / "profile.csv", rows)
    print(f"wrote {out_dir / 'profile.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
