#!/usr/bin/env bash
# One device call that checks and measures the CUDA backend on a GPU machine:
#   the gpu-marked tests, benchmarks/gpu.py (against Triton), the launch overhead and its
#   breakdown, the first launch in a fresh process (benchmarks/first_launch.py). Run from the repository root: bash benchmarks/h200_session.sh [OUTDIR]
# OUTDIR (default: $OUT, else ./h200-out) receives gpu_tests[123].txt, gpu_table.txt,
# launch_overhead.txt, launch_profile.txt and first_launch.txt; the last lines of each are also printed.
# Modules the GPU machine lacks (IPython, nbformat, filecheck) only stop collecting the CPU-only
# test files that need them, hence --continue-on-collection-errors.
set -u
out="${1:-${OUT:-./h200-out}}"
mkdir -p "$out"
export PYTHONPATH=.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log -1 --format='commit %h %s' 2>/dev/null || true
# The gpu-marked tests run as three processes at once (backends; kernels and fidelity; the
# rest); with SUITE=<Triton 3.6 checkout> Triton's tutorials and test_core sample run on the
# CUDA backend beside them (benchmarks/h200_triton_suite.sh, logs in $out/suite). TEST_SECS and
# SUITE_SECS (default 500, 480) bound the test processes and each suite process.
T="timeout ${TEST_SECS:-500} python -m pytest -q -m gpu -p no:cacheprovider --continue-on-collection-errors"
T="$T --timeout 150 -rf"
$T tests/backends > "$out/gpu_tests1.txt" 2>&1 &
$T tests/kernels tests/fidelity > "$out/gpu_tests2.txt" 2>&1 &
$T tests --ignore=tests/backends --ignore=tests/kernels --ignore=tests/fidelity \
    > "$out/gpu_tests3.txt" 2>&1 &
if [ -n "${SUITE:-}" ]; then
  bash benchmarks/h200_triton_suite.sh "$SUITE" "$out/suite" "${SUITE_SECS:-480}" > "$out/suite.txt" 2>&1 &
fi
wait
for f in "$out"/gpu_tests[123].txt; do
  echo "$(basename "$f"): $(grep -E '[0-9]+ (passed|failed)' "$f" | tail -1)"
  grep -E "^FAILED" "$f" | head -20
done
[ -n "${SUITE:-}" ] && cat "$out/suite.txt"
[ -n "${GPU_TESTS_ONLY:-}" ] && exit 0
python benchmarks/gpu.py ${GPU_ARGS:-} > "$out/gpu_table.txt" 2>&1; tail -14 "$out/gpu_table.txt"
python benchmarks/launch_overhead.py --n 20000 > "$out/launch_overhead.txt" 2>&1
tail -8 "$out/launch_overhead.txt"
python benchmarks/launch_profile.py --n 20000 > "$out/launch_profile.txt" 2>&1
tail -20 "$out/launch_profile.txt"
python benchmarks/first_launch.py > "$out/first_launch.txt" 2>&1
tail -6 "$out/first_launch.txt"
