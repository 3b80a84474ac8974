#!/usr/bin/env bash
# Issue 16, one device call: the split-K switch (wideSplit) on the 0.5B step, side by side with PyTorch + PEFT.
# Before (here): bash bench/h200-prep.sh; carry [".device", ".devwork/h200"].
# Run: source .device/remote-setup.sh; bash bench/h200-split.sh      ($OUT gets every JSON and log)
# Times, on Dawn: PyTorch's step (median of 5); ours q4 stored + recomputed under the defaults, then the stored step
# with wideSplit=1 (the earlier behaviour), 2 and 4; f32 stored (defaults, then wideSplit=1); the demo model's
# pretraining step (defaults, then wideSplit=1); the per-kernel profile of the q4 step; the 1.5B shape (ours and
# PyTorch's); then the correctness checks of bench/h200.sh (log-probs and LoRA gradients against transformers).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/h200-split-out}
mkdir -p "$OUT"
# shellcheck source=bench/h200-lib.sh
. bench/h200-lib.sh
t torch 80 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
t q4 130 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step,recompute budget=120 out="$OUT/q4.json" "variants=wideSplit=1;wideSplit=2;wideSplit=4"
t f32 80 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=70 out="$OUT/f32.json" "variants=wideSplit=1"
t pretrain 40 deno run -A "$J/profile.js" pretrain 16 1024 16
t pretrain-nosplit 40 deno run -A "$J/profile.js" pretrain 16 1024 16 perf=wideSplit=1
HEAD=40 t profile-q4 60 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1
t torch-1.5b 50 python3 bench/torch/train.py --out "$OUT" --iters 3 --warmup 1 --no-sweep --preset qwen2.5-1.5b --name train-1.5b.json
t ours-1.5b 60 deno run -A "$J/train.js" qwen2.5-1.5b 8 768 16 1 2 step budget=50 out="$OUT/size-1.5b.json"
OUT=$OUT/check ENGINES=dawn PARTS=check bash bench/h200.sh 2>&1 | tail -8
echo "h200-split.sh: done in $(( $(date +%s) - S0 )) s"
