#!/usr/bin/env bash
# compute-sanitizer over every stage at small sizes: memcheck (out-of-bounds and
# misaligned accesses, uninitialized device reads) and racecheck (shared-memory
# hazards: a missing __syncthreads shows up here before it shows up as a wrong
# answer). Square and odd shapes, beta = 0 and beta != 0. Exits non-zero on any report.
set -euo pipefail
binary=${1:-./sgemm}
command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found (it ships with the CUDA toolkit)"; exit 1; }

shapes=("256" "-m 127 -n 129 -k 67" "-m 128 -n 384 -k 24 --beta 0.5" "-m 200 -n 264 -k 136")
failed=0
for tool in memcheck racecheck; do
  for shape in "${shapes[@]}"; do
    # shellcheck disable=SC2086  # the shape is several words on purpose
    if compute-sanitizer --tool "$tool" --error-exitcode 97 "$binary" all $shape --reps 1 --seed 1 \
        >"/tmp/sgemm-sanitize.log" 2>&1; then
      echo "clean   $tool  all $shape"
    else
      echo "REPORT  $tool  all $shape"
      cat /tmp/sgemm-sanitize.log
      failed=1
    fi
  done
done
exit $failed
