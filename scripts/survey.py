#!/usr/bin/env python3
"""Survey cuBLASLt's own bf16 kernels on this GPU beside stages: run sgemm_survey and
write results/<gpu>/cublaslt_survey.csv and .md (cublaslt_survey_in_turns.* with
--timing blocks).

    python3 scripts/survey.py [--stage 14 20] [--sizes 4096 8192] [--timing blocks]

The library's kernels written before Hopper use mma.sync, as stages 11-14 do: the fastest
of them is what NVIDIA's own code reaches on this path, the mark that stage 14 is set
beside; its wgmma kernels are what cublasGemmEx runs, and what stage 20 is set beside (a
stage the GPU or build cannot run is left out).
"""
import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
from results_csv import TIMINGS, optional_float, read_typed, single_timing  # noqa: E402
from results_tables import MISSING  # noqa: E402
from run_tools import run_tool_into_results  # noqa: E402

FAMILIES = {
    "stage": "this project",
    "before_hopper": "cuBLASLt, before Hopper",
    "hopper_or_later": "cuBLASLt, Hopper",
}

SCREEN_ROWS = 8  # kernels of each family in the screen's table


def read_rows(path):
    return read_typed(path, {"size": int, **dict.fromkeys(("tflops", "cublas_tflops", "ratio_to_cublas",
                                                          "fraction_of_ceiling"), optional_float)})


def short_kernel_name(name):
    """A mangled C++ name's longest identifier (the kernel's template argument, for
    CUTLASS's); other names as they are. Each kernel of a " + "-joined launch alike."""
    if " + " in name:
        return " + ".join(short_kernel_name(part) for part in name.split(" + "))
    if not name.startswith("_Z"):
        return name
    identifiers, i = [], 2
    while i < len(name):
        if not name[i].isdigit():
            i += 1
            continue
        j = i
        while j < len(name) and name[j].isdigit():
            j += 1
        length = int(name[i:j])
        identifiers.append(name[j:j + length])
        i = j + length
    return max(identifiers, key=len, default=name)


def cublas_version(code):
    """cublasLtGetVersion()'s 130100 -> "13.1.0"."""
    code = int(code)
    return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"


def survey_markdown(rows):
    timing = single_timing([r for r in rows if r["kind"] == "judged"])
    sizes = sorted({r["size"] for r in rows})
    screened = [r for r in rows if r["kind"] == "screen"]
    judged = [r for r in rows if r["kind"] == "judged"]
    stage_names = list(dict.fromkeys(r["kernel"] for r in judged if r["family"] == "stage"))
    stage = " and ".join(stage_names)
    counts = ", ".join(f"{sum(r['size'] == s for r in screened)} at N = {s}" for s in sizes)
    lines = [
        f"cuBLASLt's own kernels for bf16 A and B with FP32 compute and C on **{rows[0]['gpu']}** "
        f"(cuBLASLt {cublas_version(rows[0]['cublas_version'])}), beside {stage} "
        f"(`scripts/survey.py --timing {timing}`). Every configuration the library offers ({counts}) "
        "was launched, named by the kernel it runs, and screened by its mean launch over 0.1 s after "
        "0.1 s back to back. "
        "The fastest few kernels of each family, each at its fastest configuration and told apart by their names (sm90 and nvjet for Hopper; "
        "the others are CUTLASS's sm80 kernels, whose `s16816` is mma.sync's m16n8k16, the "
        "instruction of stages 11-14), were then verified against the float64 reference and "
        f"timed against cublasGemmEx as sgemm times a stage, {TIMINGS[timing]}. "
        "% of the mma.sync ceiling: of the ceiling measured at start-up.",
        "",
        "| N | kernel | family | TFLOPS | % of cuBLAS | % of mma.sync ceiling | verified |",
        "| ---: | :--- | :--- | ---: | ---: | ---: | :--- |",
    ]
    order = list(FAMILIES)
    for size in sizes:
        at_size = [r for r in judged if r["size"] == size]
        at_size.sort(key=lambda r: (order.index(r["family"]), -r["tflops"]))
        for r in at_size:
            verified = "yes" if r["verified"] == "true" else "**no**"
            fraction = r["fraction_of_ceiling"]
            of_ceiling = MISSING if fraction is None else f"{100 * fraction:.1f}%"
            lines.append(f"| {size} | `{short_kernel_name(r['kernel'])}` | {FAMILIES[r['family']]} | "
                         f"{r['tflops']:.1f} | {100 * r['ratio_to_cublas']:.1f}% | {of_ceiling} | {verified} |")

    lines += [
        "",
        f"The screen: the {SCREEN_ROWS} fastest kernels of each family, each at its fastest "
        "configuration, alone (not interleaved with cuBLAS) and not verified.",
        "",
        "| family | kernel | " + " | ".join(f"N={s} TFLOPS" for s in sizes) + " |",
        "| :--- | :--- | " + " | ".join("---:" for _ in sizes) + " |",
    ]
    best = {}
    for r in screened:
        key = (r["family"], short_kernel_name(r["kernel"]))
        best.setdefault(key, {})
        best[key][r["size"]] = max(best[key].get(r["size"], 0.0), r["tflops"])
    ranked = sorted(best.items(), key=lambda item: (order.index(item[0][0]), -max(item[1].values())))
    shown = {family: 0 for family in FAMILIES}
    for (family, kernel), by_size in ranked:
        shown[family] += 1
        if shown[family] > SCREEN_ROWS:
            continue
        cells = [f"{by_size[s]:.1f}" if s in by_size else "–" for s in sizes]
        lines.append(f"| {FAMILIES[family]} | `{kernel}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def output_stem(timing):
    return "cublaslt_survey" + ("_in_turns" if timing == "blocks" else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=str(REPO / "build" / "sgemm_survey"))
    parser.add_argument("--stage", type=int, nargs="+", default=[14, 20],
                        help="the stages set beside the library's kernels (the first one's ceiling is the table's)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    parser.add_argument("--results-dir", default=str(REPO / "results"))
    parser.add_argument("--timing", choices=sorted(TIMINGS), default="launches",
                        help="how each kernel and cuBLAS take turns (sgemm --timing)")
    args = parser.parse_args()
    return run_tool_into_results(
        args.binary, ["--stage", *map(str, args.stage), "--sizes", *map(str, args.sizes), "--timing", args.timing],
        args.results_dir, output_stem(args.timing), read_rows,
        lambda rows: any(r["kind"] == "judged" for r in rows), survey_markdown)


if __name__ == "__main__":
    sys.exit(main())
