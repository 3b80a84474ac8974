#!/usr/bin/env bash
# The next device call (about 7 minutes; written 2026-12-01 and not run: the third session's machine was not lent
# again). Issue 17: decoding and first-token latency at the recipe's shape — P prompts x G = 8 samples each, the captured
# sampler prefilling each prompt once and forking its KV cache to its G rows (src/model/sampler-gpu.ts) —
# against transformers `generate` on the same number of rows (generate expands num_return_sequences before its
# prefill, so its work equals P x G distinct prompts), plus the f32 GRPO step's per-kernel profile (issue 16:
# f32 against q4) and the demo notebook's GRPO step alone (h200.sh part grpo; the evidence runs measured it with
# six runs sharing the GPU). Issue 16: the f32 128-tile kernel's contracted step of 16 (switch tk=16, off by
# default until measured) and the q4 kernels' (q4tk=16) on the q4 and f32 0.5B steps and the demo pretraining step, beside PyTorch + PEFT.
# Before (here): bash bench/h200-prep.sh; carry [".device", ".devwork/h200"].
# Run: source .device/remote-setup.sh; bash bench/h200-next.sh        (every log and JSON in $OUT/results.tgz)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/h200-next-out}
mkdir -p "$OUT"
TOTAL=${H200_TOTAL_S:-570}   # the device allows 600 s per command; the parts' limits add up to more
# shellcheck source=bench/h200-lib.sh
. bench/h200-lib.sh
PAT="^\[captured\]|session for" t decode-g8 170 deno run -A "$J/decode.js" qwen2.5-0.5b q4 1,8 8 128 256 0 "$OUT/decode-g8.json" 160 sampler=captured
PAT="batch|tok/s" t generate 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3
HEAD=3 PAT="== grpo|GPU busy" t profile-f32 50 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768
PAT="step|mean" t grpo-demo 100 env OUT="$OUT/g" PARTS=grpo GRPO_SAMPLERS=captured GRPO_STEP_N=5 GRPO_S=90 bash bench/h200.sh
cp "$OUT/g/grpo-captured.metrics.jsonl" "$OUT/" 2>/dev/null; rm -rf "$OUT/g"
t torch 80 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
t q4 130 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step budget=120 out="$OUT/q4.json" "variants=q4tk=16;tk=16;tk=16,q4tk=16"
t f32 80 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=70 out="$OUT/f32.json" "variants=tk=16"
t pretrain 40 deno run -A "$J/profile.js" pretrain 16 1024 16
t pretrain-tk16 40 deno run -A "$J/profile.js" pretrain 16 1024 16 perf=tk=16
pack
echo "h200-next.sh: done in $(( $(date +%s) - S0 )) s"
