#!/usr/bin/env bash
# The evidence runs of issues #6 and #8 on the GPU machine: `rlvr run` of bench/evidence/demo.json and
# spider-heldout.json with the shipped demo model, fixed seed, decoding 64 prompts per call.
# Before: bash bench/evidence/h200-prep.sh here; carry [".device", ".devwork/evidence"].
# Run:    source .device/remote-setup.sh; bash bench/evidence/h200.sh [setup|demo|spider|probe ...]   (default: demo spider)
#         `probe`: bench/evidence/synthetic-probe.ts's 12 easy questions over the demo's training databases,
#         greedy (does the model read the schema and the question, or recite its train queries?).
#         `synth`, `synth-grpo`: bench/evidence/synthetic-heldout.ts's notebooks (synthetic-pattern questions
#         on the held-out Spider databases; the recipe, and GRPO without the warm-up).
#         `prm-demo`, `prm-demo-outcome`, `prm-synth`, `prm-synth-outcome`: bench/evidence/prm-notebooks.ts's PRM
#         notebooks (PRM data, PRM and ORM, best-of-N at N = 1..16, GRPO with PRM + outcome / outcome alone);
#         `prm-demo-stepnorm`, `prm-synth-stepnorm` load the PRM of the prm-demo / prm-synth run (under EV_SEED=S,
#         that of run-prm-<set>-sS: a copy of the notebook names it); listed in the same call they wait for it;
#         `prm-demo-cold-e<E>-lr<L>`, `prm-synth-cold-...`: the cold start alone at one setting (prm-notebooks.ts
#         coldsweep, EV_PRM_SIZE=coldsweep in h200-prep.sh). All of them
#         start with the CoCTE cold start (warm-up sft on the golds as chains of CTEs, converted in the run, then a
#         greedy evaluation that counts the answers that are chains of two or more steps).
#         `grpo-step`: the demo notebook's GRPO cell alone (grpo-step.json; GRPO_NB=grpo-step-q4.json for q4),
#         GRPO_STEP_N steps (default 6) once per sampler in GRPO_SAMPLERS (default "captured cpu", RLVR_SAMPLER),
#         one after the other on EV_WEBGPU (default dawn); prints sample / score / train per step from metrics.jsonl.
#         `q05`: writes a random model of Qwen2.5-0.5B's shape with the demo tokenizer to $EV/q05 (EV_MODEL=$EV/q05
#         then runs grpo-step at that shape).
#         `diag`: prm-demo-diag.json (the cold start and its evaluation), then bench/evidence/sample-check.ts on its adapter.
#         `setup` unpacks and runs nothing; EV_MODEL=DIR runs with that model folder instead of the packed
#         public/model (e.g. the output of bench/evidence/h200-pretrain.sh on the same machine).
#         The notebooks run side by side (a decoding step is host-bound: two processes use two cores'
#         worth of CPU and barely share the GPU), each until EV_TOTAL_S.
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
  cp -r "$SRC/bin" "$SRC/demo.json" "$SRC/spider-heldout.json" "$EV/"
  cp "$SRC"/grpo-step*.json "$EV/" 2>/dev/null
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
  tar -C "$EV" -xJf "$SRC/spider-heldout.tar.xz"
  # The demo dataset source reads public/demo next to the bundle's ../../.. (public/demo travels packed).
  tar -C "$EV" -xJf "$SRC/demo.tar.xz"
  tar -C "$EV" -xJf "$SRC/probe.tar.xz"
  tar -C "$EV" -xJf "$SRC/synthetic-heldout.tar.xz"
  touch "$EV/ready"
  echo "setup $(( $(date +%s) - START )) s"
fi
cp "$SRC"/prm-*.json "$SRC"/diag-prompts.json "$EV/" 2>/dev/null; cp "$SRC"/bin/a/b/sample-check.js "$EV/bin/a/b/" 2>/dev/null
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
# The GRPO step by phase, one sampler after another (never side by side: the split is the measurement).
grpo_step() {
  local nb=${GRPO_NB:-grpo-step.json} steps=${GRPO_STEP_N:-6} eng=${EV_WEBGPU:-dawn}
  for s in ${GRPO_SAMPLERS:-captured cpu}; do
    local left=$(( TOTAL - ($(date +%s) - START) )) tag=grpo-step-$s-$eng-${nb%.json}
    [ "$left" -lt 30 ] && { echo "$tag: not started (${left} s left)"; continue; }
    rm -rf "run-$tag"
    echo "== $tag ($left s, model $MODEL)"
    RLVR_SAMPLER=$s timeout "$left" deno run -A bin/a/b/rlvr.js run "$nb" --webgpu "$eng" --out "run-$tag" --model "$MODEL" --seed 1 --max-steps "$steps" > "$tag.log" 2>&1
    echo "$tag rc $?"
    python3 - "run-$tag/metrics.jsonl" "$tag" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()] if __import__("os").path.exists(sys.argv[1]) else []
rows = [r for r in rows if r.get("phase") == "grpo"]
for r in rows:
    m = r.get("ms", {}); print(f"  {sys.argv[2]} step {r['step']}: sample {m.get('sample', 0)/1000:.2f} s, score {m.get('score', 0)/1000:.2f} s, train {m.get('train', 0)/1000:.2f} s")
later = rows[1:]
if later:
    mean = {k: sum(r.get("ms", {}).get(k, 0) for r in later) / len(later) / 1000 for k in ("sample", "score", "train")}
    print(f"  {sys.argv[2]} mean of steps 2-{len(rows)}: sample {mean['sample']:.2f} s, score {mean['score']:.2f} s, train {mean['train']:.2f} s, total {sum(mean.values()):.2f} s")
PY
    tar czf "$OUT/$tag.tgz" "$tag.log" "run-$tag/metrics.jsonl" 2>/dev/null
  done
}
# The cold start and its greedy evaluation (prm-demo-diag.json; the 2026-12-04 run had the cold start alone), then
# bench/evidence/sample-check.ts on the adapter it wrote: greedy and temperature-1 samples of diag-prompts.json's four
# test-concepts prompts with each sampler, against the WGSL trainer's teacher-forced log-probabilities and entropy per
# position (docs/prm.md, 2026-12-04: the broken second token of WITH).
diag() {
  one prm-demo-diag prm-demo-diag.json
  [ -d run-prm-demo-diag/adapter ] || { echo "diag: no adapter (the cold start did not finish)"; return; }
  local left=$(( TOTAL - ($(date +%s) - START) ))
  timeout "$left" deno run -A bin/a/b/sample-check.js --model "$MODEL" --adapter run-prm-demo-diag/adapter --prompts diag-prompts.json \
    --out "$OUT/sample-check.json" --n 8 --new 24 --show 8 > sample-check.log 2> sample-check.err
  echo "sample-check rc $?"; grep -v "W:onnxruntime" sample-check.log | cut -c1-400
  tar czf "$OUT/diag.tgz" sample-check.log sample-check.err prm-demo-diag.log run-prm-demo-diag/summary.json run-prm-demo-diag/metrics.jsonl 2>/dev/null
}
for nb in ${@:-demo spider}; do
  case $nb in setup) ;; grpo-step) grpo_step ;; diag) diag ;; q05) deno run -A bin/a/b/demo-shape.js "$EV/q05" "$EV/model" qwen2.5-0.5b | tail -1 ;;
    demo) one demo demo.json & ;; spider) one spider spider-heldout.json & ;; probe) one probe probe/probe.json & ;;
    synth) one synth synthetic-heldout.json & ;; synth-grpo) one synth-grpo synthetic-heldout-grpo.json & ;;
    prm-demo-stepnorm|prm-synth-stepnorm) { after_prm "$nb" && one "$nb" "$nb.json"; } & ;;
    prm-demo|prm-demo-outcome|prm-synth|prm-synth-outcome|prm-demo-cold-*|prm-synth-cold-*) one "$nb" "$nb.json" & ;;
    *) echo "unknown notebook $nb" ;; esac
done
wait
ls -la "$OUT"
