#!/usr/bin/env bash
# compute-sanitizer over the stages at small sizes; exits non-zero on any report.
#
#   scripts/sanitize.sh [BINARY] [hopper | hostile]      (make sanitize: ./sgemm, everything)
#
# Everything: the Hopper stages (15-25) under memcheck and synccheck, stages 21-24 on the
# input kinds that break numerical code under memcheck, then every stage under memcheck and
# stages 0-14 under racecheck. `hopper` runs only the first, `hostile` only the second.
# What each run is for, and why racecheck leaves out the Hopper stages and some problems:
# docs/sanitizing.md.
set -euo pipefail
binary=${1:-./sgemm}
only=${2:-}
command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found (it ships with the CUDA toolkit)"; exit 1; }

runs=("all 256" "all -m 127 -n 129 -k 67" "all -m 128 -n 384 -k 24 --beta 0.5" "all -m 200 -n 264 -k 136"
      "14 -m 1200 -n 1400 -k 200 --beta 0.5" "14 -m 2048 -n 2048 -k 72 --beta 0.5"
      "14 -m 2048 -n 2048 -k 67 --beta 0.5" "14 -m 2099 -n 2041 -k 2039 --beta 0.5")
memcheck_only_runs=("14 -m 2176 -n 2048 -k 2048 --beta 0.5" "14 -m 2100 -n 2040 -k 2040 --beta 0.5")
hopper_runs=()
for stage in 15 16 17 18 19 20 21 22 23 24 25 30; do
  hopper_runs+=("$stage -m 200 -n 264 -k 136 --beta 0.5" "$stage -m 256 -n 512 -k 128")
done
hopper_runs+=("20 -m 2304 -n 2048 -k 1024 --beta 0.5" "20 -m 1100 -n 1024 -k 3000 --beta 0.5"
              "21 -m 50 -n 2056 -k 3000 --beta 0.5" "20 -m 256 -n 256 -k 16384 --beta 0.5"
              "21 -m 256 -n 264 -k 16384 --beta 0.5" "20 -m 50 -n 4104 -k 520 --beta 0.5"
              "20 -m 200 -n 6144 -k 520 --beta 0.5" "21 -m 129 -n 264 -k 77 --beta 0.5"
              "22 -m 129 -n 264 -k 77 --beta 0.5" "22 -m 200 -n 264 -k 136 --data wide"
              "23 -m 64 -n 1024 -k 4160 --beta 0.5" "23 -m 2304 -n 2048 -k 136 --beta 0.5"
              "24 -m 2100 -n 72 -k 1028 --beta 0.5" "24 -m 1500 -n 40 -k 516"
              "15 -m 127 -n 129 -k 67 --beta 0.5" "20 -m 127 -n 129 -k 2000 --beta 0.5"
              "23 -m 300 -n 41 -k 1100 --beta 0.5" "24 -m 2000 -n 41 -k 1500 --beta 0.5"
              "22 -m 7 -n 264 -k 520 --beta 0.5" "24 -m 1024 -n 1024 -k 520 --beta 0.5"
              "bf16 -m 127 -n 129 -k 67 --beta 0.5" "bf16 -m 1000 -n 1001 -k 999 --beta 0.5"
              "fp32-tc -m 300 -n 41 -k 300 --beta 0.5" "fp32-tc -m 20000 -n 128 -k 1001 --beta 0.5"
              "fp32-tc -m 20000 -n 41 -k 2048 --beta 0.5"
              "25 -m 1 -n 1032 -k 4096 --beta 0.5" "25 -m 9 -n 200 -k 3000 --beta 0.5"
              "25 -m 300 -n 520 -k 200 --beta 0.5" "25 -m 2048 -n 2048 -k 64"
              "25 -m 5 -n 1001 -k 999 --beta 0.5 --data special" "25 -m 33 -n 1000 -k 999"
              "25 -m 300 -n 1003 -k 200 --beta 0.5"
              "bf16 -m 6 -n 1920 -k 1920 --beta 0.5" "bf16 -m 7 -n 1001 -k 999 --beta 0.5"
              "30 -m 1 -n 264 -k 40 --beta 0.5" "30 -m 1100 -n 1024 -k 3000 --beta 0.5"
              "30 -m 333 -n 2112 -k 7168 --beta 0.5" "30 -m 3000 -n 3000 -k 3000"
              "30 -m 15 -n 2048 -k 2048 --beta 0.5" "30 -m 125 -n 160 -k 1528 --beta 0.5"
              "31 -m 77 -n 1000 -k 2000 --beta 0.5" "31 -m 15 -n 2048 -k 2048 --beta 0.5"
              "26 -m 200 -n 264 -k 144 --beta 0.5" "27 -m 200 -n 264 -k 144 --beta 0.5"
              "31 -m 40 -n 2112 -k 1024 --beta 0.5" "fp8 -m 100 -n 203 -k 1000 --beta 0.5"
              "31 -m 77 -n 1001 -k 2000 --beta 0.5" "fp8 -m 129 -n 203 -k 1001 --beta 0.5"
              "fp8 -m 33 -n 77 -k 77 --beta 0.5 --scaling 1x128-1x128" "fp8 -m 3000 -n 2054 -k 109 --beta 0.5")
# The FP8 stages where their consumers read the ring's stages as they promote (A's and B's
# 1 x 128 scales): a stage freed before every warp had read its scales failed here under
# memcheck (docs/notes/31_fp8_any_tile.md, session 7).
for stage in 28 29 31; do
  hopper_runs+=("$stage -m 4096 -n 2112 -k 1024 --scaling 1x128-1x128")
done
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
