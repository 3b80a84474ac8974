#!/usr/bin/env bash
# Continues pretraining the shipped demo model on the GPU machine: `rlvr pretrain --init` from public/model
# (as packed by bench/evidence/h200-prep.sh with CORPUS=<folder holding corpus.bin + corpus.json>), new
# AdamW moments and a new cosine schedule, on the same chained corpus. Output OUTSIDE the checkout in
# $PT_DIR (default /tmp/pt) so that bench/evidence/h200.sh can run the evidence with it next
# (EV_MODEL=/tmp/pt) on the same warm machine.
# Run: source .device/remote-setup.sh; bash bench/evidence/h200-pretrain.sh      (carry [".device", ".devwork/evidence"])
# Settings: PT_STEPS (default 450), PT_LR (5e-4), PT_MIN (max minutes, 8.3), PT_MICRO (micro-batch, 16),
# PT_SYNTHETIC (--synthetic N; default 0, the corpus of the first two runs).
# Back in $OUT: pretrain.log, train_log.jsonl, corpus.json, model.safetensors in 15 MB parts (model.part.*).
set -u
cd "$(dirname "$0")/../.."
SRC=$(pwd)/.devwork/evidence
EV=${EV_DIR:-/tmp/ev}
PT=${PT_DIR:-/tmp/pt}
OUT=${OUT:-/tmp/pt-out}
T0=$(date +%s)
bash bench/evidence/h200.sh setup
mkdir -p "$PT" "$OUT"
[ -f "$PT/corpus.bin" ] || { xz -d -c "$SRC/corpus.bin.xz" > "$PT/corpus.bin" && cp "$SRC/corpus.json" "$PT/"; }
echo "setup $(( $(date +%s) - T0 )) s"; nvidia-smi --query-gpu=name,memory.used --format=csv,noheader
HOLD=train_station,perpetrator,candidate_poll,news_report,railway,coffee_shop,station_weather,protein_institute
# Run from the unpacked evidence folder: the corpus cache's key holds the --spider and demo paths as
# written (../shared/datasets/spider-train, public/demo), and corpus.bin is reused when the key matches.
cd "$EV"
timeout 590 deno run -A bin/a/b/rlvr.js pretrain --init "$EV/model" --out "$PT" \
  --spider ../shared/datasets/spider-train --spider-holdout $HOLD --seq-len 1024 --batch 16 --micro-batch "${PT_MICRO:-16}" \
  --steps "${PT_STEPS:-450}" --lr "${PT_LR:-5e-4}" --warmup 10 --seed 2 --checkpoint-every 0 \
  --chat-turns 8 --chat-passes 2 --synthetic "${PT_SYNTHETIC:-0}" --max-minutes "${PT_MIN:-8.3}" > "$OUT/pretrain.log" 2>&1
echo "pretrain rc $? at $(( $(date +%s) - T0 )) s"
grep -vE "^step [0-9]*[1-9]/" "$OUT/pretrain.log" | grep -v '^{' | tail -30; tail -c 800 "$OUT/pretrain.log"
cp "$PT/train_log.jsonl" "$PT/corpus.json" "$OUT/"
split -b 15M "$PT/model.safetensors" "$OUT/model.part."
ls -la "$PT" "$OUT"
