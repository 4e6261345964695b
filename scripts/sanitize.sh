#!/usr/bin/env bash
# compute-sanitizer over every stage at small sizes: memcheck (out-of-bounds and
# misaligned accesses, uninitialized device reads) and racecheck (shared-memory
# hazards: a missing __syncthreads shows up here before it shows up as a wrong
# answer). Square and odd shapes, beta = 0 and beta != 0. Then stage 14 alone on problems
# big enough for its larger tiles (on small ones it takes smaller tiles): its 128x128
# blocks, its tuned tiles with rows 16-byte aligned and not, and a tail of tiles split
# along K. Exits non-zero on any report.
#
# Some problems only memcheck sees: where cuBLAS, timed beside the stage, picks a wgmma
# kernel that racecheck reports races in (1280 x 2560 x 136, and every problem tried whose
# tuned tiles split with rows aligned: 2176 x 2048 x 512 and 520, 3072 x 3072 x 512,
# 3000 x 3000 x 520, 4352 x 1024 x 512); racecheck told to skip that kernel fails itself.
# (Those were split by a first rule; the problems below are split by the current one.)
#
# The Hopper stages (15-24) under memcheck and synccheck, at an odd and an aligned shape,
# stage 20 over two rounds of whole stacks (2304 x 2048 x 1024), and where it shares the
# leftover tiles out by K (stream-K), with the last sharer finishing a tile (1100 x 1024 x
# 3000 after a whole round; stage 21, scaled, in 64-row tiles at 50 x 2056 x 3000) and with
# every sharer writing a share of it (stage 21 too), and where it takes its 64-row and
# 128x128 tiles (the others take 128x64), stages 21 and 22 with K padded, and
# stage 23 where runs of K tiles share column blocks and where it hands over to stage 22,
# stage 24 where it takes a narrow C itself (partial blocks of rows, columns and K);
# only their GEMM kernels are instrumented (the ones that take a CUtensorMap), the split
# pre-passes of 21-24 in the memcheck runs below. Not under
# racecheck: on the H100 (CUDA 13.0, driver 580) it stops at the first launch of a wgmma
# or TMA kernel in the process with "Internal Sanitizer Error: The Sanitizer failed to
# handle a hardware exception", at 256 x 512 x 128 as well, with or without
# --racecheck-memcpy-async, and even when told to instrument other kernels only
# (--kernel-name, --kernel-name-exclude). So racecheck's runs take the stages before
# them (0-14), which leaves the pre-passes of 21-24 without racecheck.
#
# Stage 21 on the input kinds that break numerical code (sgemm --data graded, outliers,
# subnormal, extremes, special), and stages 22-24 on every kind, under memcheck with every
# kernel instrumented: the pre-passes, the GEMM and the FP32 fallback, which these kinds
# send rows and columns to (K = 520 has outlier columns; beta = 0.5 puts special values in
# C), each at a shape where the stage runs its own kernel (stage 24 on a C 40 wide).
# `scripts/sanitize.sh ./sgemm hopper` runs only the Hopper runs, `... hostile` only these.
set -euo pipefail
binary=${1:-./sgemm}
only=${2:-}
command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found (it ships with the CUDA toolkit)"; exit 1; }

runs=("all 256" "all -m 127 -n 129 -k 67" "all -m 128 -n 384 -k 24 --beta 0.5" "all -m 200 -n 264 -k 136"
      "14 -m 1200 -n 1400 -k 200 --beta 0.5" "14 -m 2048 -n 2048 -k 72 --beta 0.5"
      "14 -m 2048 -n 2048 -k 67 --beta 0.5" "14 -m 2099 -n 2041 -k 2039 --beta 0.5")
memcheck_only_runs=("14 -m 2176 -n 2048 -k 2048 --beta 0.5" "14 -m 2100 -n 2040 -k 2040 --beta 0.5")
hopper_runs=()
for stage in 15 16 17 18 19 20 21 22 23 24; do
  hopper_runs+=("$stage -m 200 -n 264 -k 136 --beta 0.5" "$stage -m 256 -n 512 -k 128")
done
hopper_runs+=("20 -m 2304 -n 2048 -k 1024 --beta 0.5" "20 -m 1100 -n 1024 -k 3000 --beta 0.5"
              "21 -m 50 -n 2056 -k 3000 --beta 0.5" "20 -m 256 -n 256 -k 16384 --beta 0.5"
              "21 -m 256 -n 264 -k 16384 --beta 0.5" "20 -m 50 -n 4104 -k 520 --beta 0.5"
              "20 -m 200 -n 6144 -k 520 --beta 0.5" "21 -m 129 -n 264 -k 77 --beta 0.5"
              "22 -m 129 -n 264 -k 77 --beta 0.5" "22 -m 200 -n 264 -k 136 --data wide"
              "23 -m 64 -n 1024 -k 4160 --beta 0.5" "23 -m 2304 -n 2048 -k 136 --beta 0.5"
              "24 -m 2100 -n 72 -k 1028 --beta 0.5" "24 -m 1500 -n 40 -k 516")
hostile_runs=()
for data in graded outliers subnormal extremes special; do
  hostile_runs+=("21 -m 200 -n 264 -k 520 --beta 0.5 --data $data")
done
# Stages 22-24 on every kind, each where its own kernel runs (and where the FP32 fallback
# meets its lists and, for stage 23, a split K).
for data in uniform wide exact graded outliers subnormal extremes special cancelling; do
  hostile_runs+=("22 -m 600 -n 520 -k 200 --beta 0.5 --data $data" "23 -m 200 -n 264 -k 520 --beta 0.5 --data $data"
                 "24 -m 1500 -n 40 -k 520 --beta 0.5 --data $data")
done
failed=0
# sanitize TOOL RUN [compute-sanitizer options]: one run, "clean" or "REPORT" and its log.
sanitize() {
  local tool=$1 run=$2
  shift 2
  # shellcheck disable=SC2086  # the stages and shape are several words on purpose
  if compute-sanitizer --tool "$tool" "$@" --error-exitcode 97 "$binary" $run --reps 1 --seed 1 \
      >"/tmp/sgemm-sanitize.log" 2>&1; then
    echo "clean   $tool  $run"
  else
    echo "REPORT  $tool  $run"
    cat /tmp/sgemm-sanitize.log
    failed=1
  fi
}
if [[ $only != hostile ]]; then
  for tool in memcheck synccheck; do
    for run in "${hopper_runs[@]}"; do sanitize "$tool" "$run" --kernel-name kns=CUtensorMap; done
  done
fi
[[ $only == hopper ]] && exit $failed
for run in "${hostile_runs[@]}"; do sanitize memcheck "$run"; done
[[ $only == hostile ]] && exit $failed
for run in "${runs[@]}" "${memcheck_only_runs[@]}"; do sanitize memcheck "$run"; done
for run in "${runs[@]}"; do sanitize racecheck "${run/#all /0-14 }"; done
exit $failed
