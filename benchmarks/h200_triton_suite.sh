#!/usr/bin/env bash
# Triton 3.6's own tutorials, a sample of test_core.py and the other language test files on the
# workbench's CUDA backend, on a GPU machine, in parallel processes (one per tutorial and per
# file, 6 shards of the core sample).
#   bash benchmarks/h200_triton_suite.sh TRITON_SRC [OUTDIR] [SECONDS]
# TRITON_SRC: a Triton 3.6 checkout (python/tutorials, python/test). OUTDIR (default $OUT, else
# ./h200-out) receives tut<NN>.txt/.json, core<offset>.txt/.json and file_<name>.txt/.json;
# SECONDS (default 300) bounds every process. The core sample is every 10th case from offset 3 (the CPU tables' sample),
# split into 6 shards.
set -u
src=$(cd "$1" && pwd)
out="${2:-${OUT:-./h200-out}}"
secs="${3:-300}"
mkdir -p "$out"
export PYTHONPATH=.
r=tools/triton_suite/run.py
for t in 01 02 03 04 05 06 07 08 09 10 11; do
  timeout "$secs" python "$r" --triton-src "$src" --what tutorials -k "$t-" --backend cuda \
      --timeout "$((secs - 10))" --json "$out/tut$t.json" > "$out/tut$t.txt" 2>&1 &
done
for o in 3 13 23 33 43 53; do
  timeout "$secs" python "$r" --triton-src "$src" --what core --every 60 --offset "$o" \
      --backend cuda --timeout 60 --json "$out/core$o.json" > "$out/core$o.txt" 2>&1 &
done
# the other language test files the CPU tables cover (test_tensor_descriptor: every 4th case)
for w in test_standard test_random test_libdevice test_block_pointer test_tuple \
         test_annotations test_conversions test_decorator test_compile_errors; do
  timeout "$secs" python "$r" --triton-src "$src" --what "$w" --backend cuda --timeout 60 \
      --json "$out/file_$w.json" > "$out/file_$w.txt" 2>&1 &
done
timeout "$secs" python "$r" --triton-src "$src" --what test_tensor_descriptor --every 4 \
    --backend cuda --timeout 60 --json "$out/file_test_tensor_descriptor.json" \
    > "$out/file_test_tensor_descriptor.txt" 2>&1 &
wait
for f in "$out"/file_*.txt; do
  echo "$(basename "$f" .txt | cut -c6-): $(grep "^TOTAL" "$f")"
done
for f in "$out"/tut*.txt; do
  echo "$(basename "$f"): $(grep -E '^ *[0-9]+  ' "$f" | head -1 | cut -c1-160)"
  grep "^TOTAL" "$f"
done
python - "$out" <<'PY'
import collections, glob, json, sys
rows = [r for f in glob.glob(sys.argv[1] + "/core*.json") for r in json.load(open(f))]
print("core sample on cuda:", dict(collections.Counter(r["outcome"] for r in rows)))
for msg, n in collections.Counter(r["msg"][:110] for r in rows
                                  if r["outcome"] in ("failed", "error")).most_common(12):
    print(f"{n:5d}  {msg}")
PY
