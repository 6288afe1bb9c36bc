#!/usr/bin/env bash
# A short device call for when little device time is left: the GPU tests of what changed,
# each group in its own process (a device fault poisons the CUDA context of its process, so
# one faulting test would fail every later one), with hard time limits.
#   bash benchmarks/h200_short.sh [OUTDIR]     (from the repository root; OUTDIR default $OUT)
set -u
out="${1:-${OUT:-./h200-out}}"
mkdir -p "$out"
export PYTHONPATH=.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t() {  # t NAME SECONDS PYTEST-ARGS...
  local name=$1 secs=$2; shift 2
  timeout "$secs" python -m pytest -q -m gpu -p no:cacheprovider -o addopts= "$@" \
      > "$out/$name.txt" 2>&1
  echo "[$name rc=$?] $(grep -E '[0-9]+ (passed|failed)' "$out/$name.txt" | tail -1)"
  grep -E "^FAILED|^ERROR" "$out/$name.txt" | head -12
  grep -E "^E  " "$out/$name.txt" | head -6
}
t tma_oob 35 tests/kernels/test_tma_gpu.py -k out_of_bounds
t tma_rest 45 tests/kernels/test_tma_gpu.py -k "not out_of_bounds" \
    "tests/language/test_tensor_descriptor_ir.py::test_descriptors_on_the_gpu"
t tf32 25 tests/kernels/test_tf32.py "tests/language/test_tuple_args.py::test_tuple_arguments_on_the_gpu"
t pipeline 80 tests/fidelity/test_fidelity_gpu.py tests/backends/test_cuda_pipeline.py \
    tests/backends/test_cuda_wgmma.py tests/kernels/test_remat_kernels.py
(cd benchmarks && timeout 15 python tf32_probe.py 2>&1 | tail -8)
