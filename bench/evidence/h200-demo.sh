#!/usr/bin/env bash
# Issue #19, step 2 — the evidence runs on the GPU machine: the built-in demo notebook in knowledge mode and in
# BIRD mode (bench/evidence/demo-notebooks.ts), three seeds each, all side by side (a decoding step is host-bound:
# each process uses about a core and little of the GPU), then `rlvr demo-evidence` over the six run folders.
# Before: bash bench/evidence/demo-prep.sh here; carry [".device", ".devwork/demo-ev"].
# Run:    source .device/remote-setup.sh; bash bench/evidence/h200-demo.sh [setup]
#         again within the machine's idle time until it prints "demo-evidence: done": each call stops its runs at
#         EV_TOTAL_S (default 560 s) and the next resumes them from their checkpoints (run folders live in $EV_DIR,
#         outside the checkout, so they survive between calls on a warm machine).
# Settings: EV_MODEL (a model folder; default $PT_DIR=/tmp/pt when h200-retrain.sh left a model there, else the
#   packed model/ of demo-prep.sh with MODEL=...), EV_SEEDS ("1 2 3"), EV_MODES ("knowledge bird"),
#   EV_SAMPLE_BATCH (prompts per sampling call, 64), EV_EXTRA (variant runs beside the main ones, "NAME:SEED ...",
#   each of the notebook demo-NAME.json that demo-notebooks.ts wrote with name=...: run and returned, left out of
#   demo-evidence.json and of the "done" check), DENO (deno).
# Back in $OUT: demo-evidence.json (the figures; copy to bench/evidence/summaries/<date>-demo-evidence.json), .md, .svg,
# and runs.tar holding one tgz per run (summary.json, metrics.jsonl, predictions, the log, the last 4 MB of samples.jsonl).
set -u
cd "$(dirname "$0")/../.."
SRC=${EV_SRC:-$(pwd)/.devwork/demo-ev}   # what demo-prep.sh wrote (its E)
EV=${EV_DIR:-/tmp/demo-ev}
OUT=${OUT:-/tmp/demo-ev-out}
PT=${PT_DIR:-/tmp/pt}
DENO=${DENO:-deno}
TOTAL=${EV_TOTAL_S:-560}
START=$(date +%s)
mkdir -p "$EV" "$OUT"
if [ ! -f "$EV/ready" ]; then
  cp -r "$SRC/bin" "$SRC"/demo-*.json "$EV/"
  mkdir -p "$EV/node_modules/onnxruntime-web/dist" "$EV/node_modules/sql.js/dist" "$EV/bin/node_modules/sql.js/dist"
  cp "$SRC/ort.mjs" "$EV/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs"
  xz -d -c "$SRC/ort.wasm.xz" > "$EV/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm"
  xz -d -c "$SRC/sql-wasm.wasm.xz" > "$EV/node_modules/sql.js/dist/sql-wasm.wasm"
  cp "$EV/node_modules/sql.js/dist/sql-wasm.wasm" "$EV/bin/node_modules/sql.js/dist/"
  # The demo dataset source reads public/demo next to the bundle's ../../.. (it travels packed).
  tar -C "$EV" -xJf "$SRC/demo.tar.xz"
  if [ -d "$SRC/pt" ]; then cp -r "$SRC/pt" "$EV/pt"; [ -f "$EV/pt/corpus.bin.xz" ] && xz -d "$EV/pt/corpus.bin.xz"; fi
  # Without a packed corpus, the sources travel (ds.tar.xz: Spider's databases and questions, Spider-Syn) and the
  # pretraining run builds the corpus there, where the paths demo-prep.sh wrote (../shared/datasets/...) point.
  if [ -f "$SRC/ds.tar.xz" ]; then mkdir -p "$EV/../shared/datasets" && tar -C "$EV/../shared/datasets" -xJf "$SRC/ds.tar.xz"; fi
  if [ -d "$SRC/model" ]; then
    mkdir -p "$EV/model" && cp "$SRC"/model/*.json "$EV/model/"
    xz -d -c "$SRC/model/model.planes.xz" > "$EV/model.planes" && python3 "$SRC/f16planes.py" unpack "$EV/model.planes" "$EV/model/model.safetensors" && rm "$EV/model.planes"
  fi
  touch "$EV/ready"
  echo "setup $(( $(date +%s) - START )) s"
fi
[ "${1:-run}" = setup ] && exit 0
cd "$EV"
if [ -n "${EV_MODEL:-}" ]; then MODEL=$EV_MODEL; elif [ -f "$PT/model.safetensors" ]; then MODEL=$PT; else MODEL=$EV/model; fi
[ -f "$MODEL/model.safetensors" ] || { echo "no model at $MODEL (run h200-retrain.sh first, or prep with MODEL=DIR)"; exit 1; }
one() {  # one notebook and seed, until the time is up; resumes from its checkpoints when run again
  local mode=$1 seed=$2 nb=run-$1-s$2; local left=$(( TOTAL - ($(date +%s) - START) ))
  if [ -f "$nb/summary.json" ]; then echo "$nb: finished"; return; fi
  [ "$left" -lt 30 ] && { echo "$nb: not started (${left} s left)"; return; }
  echo "== $nb ($left s, model $MODEL)"
  timeout "$left" "$DENO" run -A bin/a/b/rlvr.js run "demo-$mode.json" --out "$nb" --model "$MODEL" --seed "$seed" --sample-batch "${EV_SAMPLE_BATCH:-64}" >> "$nb.log" 2>&1
  echo "$nb rc $? at $(( $(date +%s) - START )) s"
  grep -v "W:onnxruntime" "$nb.log" | tail -3 | cut -c1-300
}
for mode in ${EV_MODES:-knowledge bird}; do for seed in ${EV_SEEDS:-1 2 3}; do one "$mode" "$seed" & done; done
for x in ${EV_EXTRA:-}; do one "${x%%:*}" "${x##*:}" & done
wait
# tail_lines IN OUT: IN's last 4,000,000 bytes without the line they cut into (all of IN when it is smaller).
tail_lines() {
  [ -f "$1" ] || return 0
  if [ "$(stat -c %s "$1")" -gt 4000000 ]; then tail -c 4000000 "$1" | tail -n +2 > "$2"; else cp "$1" "$2"; fi
}
pack() {  # one run folder's files into $OUT/<run>.tgz
  # The last ~4 MB of samples.jsonl in whole lines (a cut first line would read as a bad record).
  tail_lines "$1/samples.jsonl" "$1/samples.tail.jsonl"
  tar czf "$OUT/$1.tgz" "$1.log" "$1/summary.json" "$1/notebook.json" "$1/metrics.jsonl" "$1/predictions" "$1/samples.tail.jsonl" 2>/dev/null
}
for x in ${EV_EXTRA:-}; do
  nb=run-${x%%:*}-s${x##*:}
  pack "$nb"
  [ -f "$nb/summary.json" ] && echo "$nb: finished (extra)" || echo "$nb: not finished (extra)"
done
runs=(); missing=0
for mode in ${EV_MODES:-knowledge bird}; do for seed in ${EV_SEEDS:-1 2 3}; do
  nb=run-$mode-s$seed
  pack "$nb"
  if [ -f "$nb/summary.json" ]; then runs+=("$nb"); else missing=$((missing + 1)); fi
done; done
# The device returns at most 8 files per call: the six run tars travel as one (on 2026-12-01 two were left behind).
( cd "$OUT" && tar cf runs.tar run-*.tgz && rm -f run-*.tgz )
if [ "$missing" -gt 0 ]; then echo "demo-evidence: $missing run(s) not finished; call again to continue"; exit 0; fi
"$DENO" run -A bin/a/b/rlvr.js demo-evidence "${runs[@]}" --out "$OUT/demo-evidence.json" --markdown "$OUT/demo-evidence.md" --svg "$OUT/demo-evidence.svg" \
  --title "Demo (model $(basename "$MODEL")): execution accuracy per split and stage, seeds ${EV_SEEDS:-1 2 3}" > "$OUT/demo-evidence.log" 2>&1
tail -30 "$OUT/demo-evidence.log"
echo "demo-evidence: done at $(( $(date +%s) - START )) s"
ls -la "$OUT"
