#!/usr/bin/env bash
# Issue #49 — one device call: pretrain a new demo base model from scratch (h200-retrain.sh, the project's trainer on
# Dawn) on the corpus demo-prep.sh built (Spider, Spider-Syn, synthetic questions with surface variety, the demo's
# generic questions; no concept in any form), then its greedy baseline on test-written and test-concepts in both
# prompt modes (the notebooks demo-knowledge-base.json / demo-bird-base.json of demo-prep.sh: the built-in notebook's
# baseline evaluations of those two splits, nothing trained).
# Before: bash bench/evidence/demo-prep.sh here; move public/model out of the checkout for the call (the tree must
#         travel under 64 MiB with .device), carry [".device", ".devwork/demo-ev"].
# Run:    source .device/remote-setup.sh; bash bench/evidence/h200-written.sh
# Settings: PT_TRAIN_S (seconds of training planned, default 330), PT_CALL_MIN (default 6.4), PT_BUDGET_S (420),
#   EV_BASE_S (seconds for the baseline evaluations, default 130), SKIP_PT (set: evaluate the model at PT_DIR only),
#   and h200-retrain.sh's own.
# Back in $OUT: h200-retrain.sh's files (model.part.*, meta.tgz, pretrain.log, status.txt) and base.tgz (the two
# baseline runs: summary.json, notebook.json, predictions, log), then a table of the baseline accuracies.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/written-out}
export OUT
PT=${PT_DIR:-/tmp/pt}
EV=${EV_DIR:-/tmp/demo-ev}
DENO=${DENO:-deno}
T0=$(date +%s)
if [ -z "${SKIP_PT:-}" ]; then
  PT_TRAIN_S=${PT_TRAIN_S:-330} PT_CALL_MIN=${PT_CALL_MIN:-6.4} PT_BUDGET_S=${PT_BUDGET_S:-420} bash bench/evidence/h200-retrain.sh
else
  bash bench/evidence/h200-demo.sh setup >/dev/null || exit 1
fi
echo "written: pretraining done at $(( $(date +%s) - T0 )) s"
[ -f "$PT/model.safetensors" ] || { echo "written: no model at $PT"; exit 1; }
cd "$EV"
for mode in knowledge bird; do
  ( timeout "${EV_BASE_S:-130}" "$DENO" run -A bin/a/b/rlvr.js run "demo-$mode-base.json" --out "base-$mode" --model "$PT" --seed 1 \
      --sample-batch "${EV_SAMPLE_BATCH:-64}" > "base-$mode.log" 2>&1; echo "base-$mode rc $?" ) &
done
wait
tar czf "$OUT/base.tgz" base-*.log base-*/summary.json base-*/notebook.json base-*/predictions 2>/dev/null
echo "written: baselines done at $(( $(date +%s) - T0 )) s"
python3 - <<'EOF'
import json, os
print("mode       split           greedy  questions")
for mode in ("knowledge", "bird"):
    f = f"base-{mode}/summary.json"
    if not os.path.exists(f):
        print(f"{mode:10} (not finished)"); continue
    for c in json.load(open(f))["cells"]:
        r = c.get("report") or {}
        if r.get("kind") == "evaluate":
            o = r["overall"]
            print(f"{mode:10} {r['split']:15} {100 * o['greedy']:5.1f}%  {o['questions']}")
EOF
ls -la "$OUT"
