"""What the shape suite (scripts/shapes.py) and the random draw (scripts/draw_shapes.py)
share: the best stage of each track, one run of the sgemm binary on one problem, and the
geomean of ratios.
"""

import math
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

# The best stage of each track, and what it is compared with.
TRACKS = (
    (20, "bf16 on Hopper tensor cores", "cuBLAS bf16"),
    (24, "FP32 on tensor cores", "cuBLAS SGEMM"),
    (10, "FP32 on CUDA cores", "cuBLAS SGEMM"),
)
# The precision each track's stage reads A and B in (src/driver/stage_registry.cpp).
PRECISIONS = {20: "bf16", 24: "fp32", 10: "fp32"}
# sgemm's exit status after a usage error: an option, or a shape the stage refuses (in one
# line on stderr, "sgemm: error: stage 20 (...) needs N a multiple of 8, ...").
USAGE_ERROR = 2


def repo_path(path):
    path = Path(path)
    return path if path.is_absolute() else REPO_ROOT / path


def geomean(values):
    return math.exp(sum(math.log(value) for value in values) / len(values))


def run_stage(binary, stage, m, n, k, time_budget, csv_path, *options):
    """Run `binary stage -m M -n N -k K --time-budget T --csv csv_path [options]`, its
    stdout and stderr passed on; return (exit status, the last line of its stderr without
    the "sgemm: error: " in front: why it refused or failed, or "")."""
    command = [str(binary), str(stage), "-m", str(m), "-n", str(n), "-k", str(k),
               "--time-budget", str(time_budget), "--csv", str(csv_path), *map(str, options)]
    result = subprocess.run(command, cwd=REPO_ROOT, stderr=subprocess.PIPE, text=True, check=False)
    sys.stderr.write(result.stderr)
    sys.stderr.flush()
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    return result.returncode, re.sub(r"^\S+: error: ", "", lines[-1]) if lines else ""
