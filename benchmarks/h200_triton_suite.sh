#!/usr/bin/env bash
# Triton 3.6's own tutorials and a sample of test_core.py on the workbench's CUDA backend, on a
# GPU machine, in parallel processes (one per tutorial, SHARDS shards of the core sample).
#   bash benchmarks/h200_triton_suite.sh TRITON_SRC [OUTDIR] [SECONDS]
# TRITON_SRC: a Triton 3.6 checkout (python/tutorials, python/test). OUTDIR (default $OUT, else
# ./h200-out) receives tut<NN>.txt/.json and core<offset>.txt/.json; SECONDS (default 300) bounds
# every process. The core sample is every 10th case from offset 3 (the CPU tables' sample),
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
wait
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
