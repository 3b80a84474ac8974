#!/usr/bin/env bash
# On the GPU machine (issue 51's one call): the grpo-step suite, then the decode suite, from the bundles of
# bench/suites/peers-prep.sh; records to $OUT/records.jsonl (append them to bench/results/records.jsonl here), logs and
# the runs' JSON to $OUT (8 files at most come back), a short table last.
# Carry [".device", ".devwork/peers"]; run `source .device/remote-setup.sh; bash bench/suites/peers.sh`.
# GRPO_ARGS / DECODE_ARGS replace each suite's options; GRPO_S / DECODE_S are their time limits (s).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/peers-out}
mkdir -p "$OUT"
export DEVWORK=${DEVWORK:-.devwork/peers}
(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) | tee "$OUT/run.log"
suite() { # NAME LIMIT ARGS...
  local name=$1 limit=$2 s; shift 2
  s=$(date +%s)
  timeout -k 10 "$limit" bash bench/device.sh "$name" record="$OUT/records.jsonl" out="/tmp/peers-$name" "$@" > "$OUT/$name.log" 2>&1
  echo "== $name: rc $? in $(( $(date +%s) - s )) s" | tee -a "$OUT/run.log"
  grep -v 'W:onnxruntime' "$OUT/$name.log" | grep -E '^(hub|demo|torch) step|^torch GRPO|^\[captured|^transformers.js|^B=|not recorded|[Ee]rror' | cut -c1-330 | tee -a "$OUT/run.log"
}
# shellcheck disable=SC2086
suite grpo-step "${GRPO_S:-230}" ${GRPO_ARGS:-steps=3 demoSteps=3}
# shellcheck disable=SC2086
suite decode "${DECODE_S:-160}" ${DECODE_ARGS:-new=64 reps=2 pending=16,1024 budget=95 tjsReps=1 tjsBudget=35}
tar czf "$OUT/runs.tgz" -C /tmp --exclude='*.safetensors' --exclude='model-*' peers-grpo-step peers-decode 2>/dev/null
python3 - "$OUT/records.jsonl" <<'PY' | tee -a "$OUT/run.log"
import json, os, sys
p = sys.argv[1]
for r in ([json.loads(l) for l in open(p) if l.strip()] if os.path.exists(p) else []):
    print(f"\n{r['suite']} on {r['device']} ({r['engine']}), commit {r['commit']}")
    for k, v in r["figures"].items(): print(f"  ours {k:34} {v}")
    for k, v in r["reference"].items(): print(f"  ref  {k:34} {v}")
PY
