#!/usr/bin/env bash
# The whole of Triton 3.6's test_core.py on the workbench's CUDA backend, in shards run at once
# (one pytest process per shard, each keeping every EVERY-th collected case from its offset),
# on a GPU machine, from the repository root:
#   bash benchmarks/h200_core_full.sh TRITON_SRC EVERY SECONDS OFFSET...
# TRITON_SRC: a Triton 3.6 checkout (python/test); SECONDS bounds each shard. With EVERY=32,
# offsets 0..15 and 16..31 in two calls of about 140-160 s cover all 9,309 cases on a 16-core
# H200 host. Records (one JSON line per case: id, outcome, seconds, reason) go to
# $OUT/core/core_<offset>.jsonl (else ./h200-out/core); the totals and every failure are printed.
# DEV=cpu runs the same shards on the CPU backend.
set -u
src=$(cd "$1" && pwd); every=$2; secs=$3; shift 3
P=$PWD; o="${OUT:-./h200-out}/core"; mkdir -p "$o"; o=$(cd "$o" && pwd)
for off in "$@"; do
  (cd /tmp && PYTHONPATH=$P/tools/triton_suite:$P TRITON_INTERPRET=0 WORKBENCH_INTERPRET=0 \
   SUITE_OUT=$o/core_$off.jsonl SUITE_EVERY=$every SUITE_OFFSET=$off \
   timeout "$secs" python -m pytest "$src/python/test/unit/language/test_core.py" -p suite_plugin \
     -q -p no:cacheprovider --device "${DEV:-cuda}" --rootdir "$src/python/test" -o addopts= \
     --timeout 90 > "$o/core_$off.log" 2>&1) &
done
wait
python - "$o" <<'PY'
import collections, glob, json, sys
rows = []
for f in sorted(glob.glob(sys.argv[1] + "/core_*.jsonl")):
    rs = [json.loads(line) for line in open(f)]
    rows += rs
    print(f.split("/")[-1], len(rs), dict(collections.Counter(r["outcome"] for r in rs)),
          round(sum(r.get("seconds", 0) for r in rs)), "s")
print("TOTAL", len(rows), dict(collections.Counter(r["outcome"] for r in rows)))
for r in rows:
    if r["outcome"] in ("failed", "error"):
        print("FAIL", r["id"].split("::")[-1][:90], "|", r["msg"][:150])
PY
