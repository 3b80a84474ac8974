#!/usr/bin/env bash
# The second device call of 2026-12-02 (about 5.5 minutes), after h200-next.sh's figures of the first:
# issue 17 — captured decoding with the read-back ring (src/model/sampler-gpu.ts READ_RING: the host blocks to
# reuse a staging buffer every 4 steps instead of waiting for each step's tokens) at the recipe's shape, P prompts x
# G = 8, beside transformers `generate` on the same rows; the same under Dawn's MessageChannel polling
# (RLVR_DAWN_POLL=channel:1, src/gpu/engine.deno.ts; on SwiftShader it starved other work), and the bare GPU round
# trip under each polling mode (bench/poll.bench.ts); the demo notebook's GRPO step alone.
# Issue 16 — the f32 128-tile kernel's vec4 loads (switch vload, off by default until measured) on the f32 and q4
# 0.5B steps (the q4 step's non-weight products run that kernel too), the f32 step's per-kernel profile with them,
# and the demo pretraining step, beside PyTorch + PEFT.
# Before (here): bash bench/h200-prep.sh; carry [".device", ".devwork/h200"].
# Run: source .device/remote-setup.sh; bash bench/h200-ring.sh        (every log and JSON in $OUT/results.tgz)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/h200-ring-out}
mkdir -p "$OUT"
TOTAL=${H200_TOTAL_S:-420}
# shellcheck source=bench/h200-lib.sh
. bench/h200-lib.sh
PAT="round trip|median" t poll-timeout 25 env RLVR_DAWN_POLL=timeout deno run -A "$J/poll.js" n=300 out="$OUT/poll-timeout.json"
PAT="median" t poll-channel1 25 env RLVR_DAWN_POLL=channel:1 deno run -A "$J/poll.js" n=300 out="$OUT/poll-channel1.json"
PAT="^\[captured\]|session for" t decode-ring 80 deno run -A "$J/decode.js" qwen2.5-0.5b q4 1,8 8 128 256 0 "$OUT/decode-ring.json" 160 sampler=captured
PAT="^\[captured\]" t decode-ring-channel1 80 env RLVR_DAWN_POLL=channel:1 deno run -A "$J/decode.js" qwen2.5-0.5b q4 1,8 8 128 256 0 "$OUT/decode-ring-channel1.json" 160 sampler=captured
PAT="batch|tok/s" t generate 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3
t torch 60 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
t q4 80 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step budget=70 out="$OUT/q4.json" "variants=vload=1"
t f32 60 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=50 out="$OUT/f32.json" "variants=vload=1"
HEAD=40 PAT="== grpo|GPU busy|matmul_t128|q4matmul" t profile-f32-vload 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 perf=vload=1
PAT="step|mean" t grpo-demo 60 env OUT="$OUT/g" PARTS=grpo GRPO_SAMPLERS=captured GRPO_STEP_N=5 GRPO_S=50 bash bench/h200.sh
cp "$OUT/g/grpo-captured.metrics.jsonl" "$OUT/" 2>/dev/null; rm -rf "$OUT/g"
t pretrain-vload 30 deno run -A "$J/profile.js" pretrain 16 1024 16 perf=vload=1
t q4-channel1 50 env RLVR_DAWN_POLL=channel:1 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step budget=40 out="$OUT/q4-channel1.json"
pack
echo "h200-ring.sh: done in $(( $(date +%s) - S0 )) s"
