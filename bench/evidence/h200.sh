#!/usr/bin/env bash
# The PRM evidence runs of issue #18 on the GPU machine (docs/prm.md): `rlvr run` of bench/evidence/prm-notebooks.ts's
# notebooks with the shipped demo model, fixed seed, decoding 64 prompts per call.
# Before: bash bench/evidence/h200-prep.sh here; carry [".device", ".devwork/evidence"].
# Run:    source .device/remote-setup.sh; bash bench/evidence/h200.sh [setup|PART ...]
#         `prm-demo`, `prm-demo-outcome`, `prm-synth`, `prm-synth-outcome`: the PRM notebooks (PRM data, PRM and ORM,
#         best-of-N at N = 1..16, GRPO with PRM + outcome / outcome alone); `prm-demo-stepnorm`, `prm-synth-stepnorm`
#         load the PRM of the prm-demo / prm-synth run (under EV_SEED=S, that of run-prm-<set>-sS: a copy of the
#         notebook names it); listed in the same call they wait for it. All of them start with the CoCTE cold start
#         (warm-up sft on the golds as chains of CTEs, converted in the run, then a greedy evaluation that counts the
#         answers that are chains of two or more steps).
#         `setup` unpacks and runs nothing; EV_MODEL=DIR runs with that model folder instead of the packed
#         public/model (bench/evidence/model-apart.sh). The notebooks run side by side (a decoding step is
#         host-bound: two processes use two cores' worth of CPU and barely share the GPU), each until EV_TOTAL_S.
# The parts of the earlier evidence runs (issues #6 and #8: demo, spider, probe, synth; the GRPO step by phase, now
# bench/run.ts grpo-step; the diag and the cold-start sweep of 2026-12-04) are in this file at 7615547.
# A run's folder lives OUTSIDE the checkout ($EV_DIR, default /tmp/ev), so a later call on the same (warm)
# machine resumes it from its checkpoints: carried folders are replaced at every call, and ignored
# folders inside the checkout do not survive one. Each notebook gets what is left of EV_TOTAL_S
# (default 560 s) and stops itself at the limit; run the script again within 30 s to continue.
# Back in $OUT: one tar per notebook (summary.json when finished, metrics.jsonl, predictions, the log,
# the last 4 MB of samples.jsonl) — the tool returns at most 8 files.
set -u
cd "$(dirname "$0")/../.."
SRC=$(pwd)/.devwork/evidence
EV=${EV_DIR:-/tmp/ev}
OUT=${OUT:-/tmp/ev-out}
TOTAL=${EV_TOTAL_S:-560}
STEPS=${GRPO_STEPS:-20}
SEED=${EV_SEED:-1}   # run seed; a seed other than 1 names the runs <part>-s<seed>
START=$(date +%s)
mkdir -p "$EV" "$OUT"
if [ ! -f "$EV/ready" ]; then
  cp -r "$SRC/bin" "$EV/"
  mkdir -p "$EV/node_modules/onnxruntime-web/dist" "$EV/node_modules/sql.js/dist" "$EV/bin/node_modules/sql.js/dist" "$EV/model"
  cp "$SRC/ort.mjs" "$EV/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs"
  xz -d -c "$SRC/ort.wasm.xz" > "$EV/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm"
  xz -d -c "$SRC/sql-wasm.wasm.xz" > "$EV/node_modules/sql.js/dist/sql-wasm.wasm"
  cp "$EV/node_modules/sql.js/dist/sql-wasm.wasm" "$EV/bin/node_modules/sql.js/dist/"
  cp "$SRC"/model/*.json "$EV/model/"; xz -d -c "$SRC/model/tokenizer.json.xz" > "$EV/model/tokenizer.json"
  # Prepped with NO_MODEL=1 the weights came apart (model-apart.sh): EV_MODEL names them.
  if [ -f "$SRC/model/model.planes.xz" ]; then
    xz -d -c "$SRC/model/model.planes.xz" > "$EV/model.planes" && python3 "$SRC/f16planes.py" unpack "$EV/model.planes" "$EV/model/model.safetensors" && rm "$EV/model.planes"
  fi
  # The demo dataset source reads public/demo next to the bundle's ../../.. (public/demo travels packed).
  tar -C "$EV" -xJf "$SRC/demo.tar.xz"
  tar -C "$EV" -xJf "$SRC/synthetic-heldout.tar.xz"
  touch "$EV/ready"
  echo "setup $(( $(date +%s) - START )) s"
fi
cp "$SRC"/prm-*.json "$EV/"
cd "$EV"
MODEL=${EV_MODEL:-$EV/model}
# tail_lines IN OUT: IN's last 4,000,000 bytes without the line they cut into (all of IN when it is smaller).
tail_lines() {
  [ -f "$1" ] || return 0
  if [ "$(stat -c %s "$1")" -gt 4000000 ]; then tail -c 4000000 "$1" | tail -n +2 > "$2"; else cp "$1" "$2"; fi
}
one() {  # one notebook, until the time is up; resumes from its checkpoints when run again
  local nb=$1 file=$2; [ "$SEED" = 1 ] || nb=$nb-s$SEED; local left=$(( TOTAL - ($(date +%s) - START) ))
  # -stepnorm loads the PRM of its set's run: under another seed, that seed's run (run-prm-<set>-s<seed>).
  if [ "$SEED" != 1 ] && [[ $file == *-stepnorm.json ]]; then
    sed "s#run-prm-\([a-z]*\)/prm/prm#run-prm-\1-s$SEED/prm/prm#" "$file" > "$nb.json" && file=$nb.json
  fi
  [ "$left" -lt 30 ] && { echo "$nb: not started (${left} s left)"; return; }
  # Finished in an earlier call: a rerun would evaluate and sample again (its training cells only resume).
  [ -f "run-$nb/summary.json" ] && { echo "$nb: finished in an earlier call (run-$nb/summary.json), not run again"; return; }
  echo "== $nb ($left s, model $MODEL)"
  timeout "$left" deno run -A bin/a/b/rlvr.js run "$file" --out "run-$nb" --model "$MODEL" --seed "$SEED" --max-steps "$STEPS" --sample-batch 64 >> "$nb.log" 2>&1
  echo "$nb rc $? at $(( $(date +%s) - START )) s"
  grep -v "W:onnxruntime" "$nb.log" | tail -4 | cut -c1-400
  # The last ~4 MB of samples.jsonl in whole lines (a cut first line would read as a bad record).
  tail_lines "run-$nb/samples.jsonl" "run-$nb/samples.tail.jsonl"
  tar czf "$OUT/$nb.tgz" "$nb.log" run-$nb/summary.json run-$nb/metrics.jsonl run-$nb/predictions run-$nb/samples.tail.jsonl run-$nb/prm-data/*/stats.json 2>/dev/null
}
# A -stepnorm notebook loads the PRM its set's run trains: listed in the same call, it waits until that folder is
# complete (prm_config.json is the last of its three files written), polling, while time is left.
after_prm() {
  local set=${1%-stepnorm}; local dir=run-$set; [ "$SEED" = 1 ] || dir=$dir-s$SEED
  while [ ! -f "$dir/prm/prm/prm_config.json" ]; do
    [ $(( TOTAL - ($(date +%s) - START) )) -lt 60 ] && { echo "$1: not started ($dir/prm/prm not written yet)"; return 1; }
    sleep 5
  done
  sleep 2; echo "$1: $dir/prm/prm written at $(( $(date +%s) - START )) s"
}
for nb in "$@"; do
  case $nb in setup) ;;
    prm-demo-stepnorm|prm-synth-stepnorm) { after_prm "$nb" && one "$nb" "$nb.json"; } & ;;
    prm-demo|prm-demo-outcome|prm-synth|prm-synth-outcome) one "$nb" "$nb.json" & ;;
    *) echo "unknown notebook $nb" ;; esac
done
wait
ls -la "$OUT"
