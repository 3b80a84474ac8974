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
# Run: source .device/remote-setup.sh; bash bench/h200-next.sh        (figures in $OUT)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/h200-next-out}
mkdir -p "$OUT"
R=${H200_RUN_DIR:-/tmp/h200-run}
[ -d "$R" ] || { cp -r .devwork/h200 "$R" && find "$R" -name '*.gz' -exec gunzip -f {} +; }
J=$R/bin/a/b
export RLVR_WEBGPU=dawn
S0=$(date +%s)
echo "== decode, 1 and 8 prompts x G 8 (batch 8 and 64), 128 + 256"
timeout 170 deno run -A "$J/decode.js" qwen2.5-0.5b q4 1,8 8 128 256 0 "$OUT/decode-g8.json" 160 sampler=captured 2>&1 | grep -E "^\[captured\]|session for" | cut -c1-400
echo "== transformers generate, batch 8 and 64 ($(( $(date +%s) - S0 )) s)"
timeout 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3 2>&1 | tail -4
echo "== f32 GRPO step per kernel ($(( $(date +%s) - S0 )) s)"
timeout 50 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 > "$OUT/profile-f32.log" 2>&1; grep -E "== grpo|GPU busy" "$OUT/profile-f32.log" | head -3
echo "== the demo notebook's GRPO step, captured sampler ($(( $(date +%s) - S0 )) s)"
OUT=$OUT/g PARTS=grpo GRPO_SAMPLERS=captured GRPO_STEP_N=5 GRPO_S=90 bash bench/h200.sh 2>&1 | grep -E "step|mean" | head -12
cp "$OUT/g/grpo-captured.metrics.jsonl" "$OUT/" 2>/dev/null; rm -rf "$OUT/g"
echo "== PyTorch + PEFT step ($(( $(date +%s) - S0 )) s)"
timeout 80 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager 2>&1 | grep "B=8"
echo "== ours, q4 and f32, tk 8 and 16 ($(( $(date +%s) - S0 )) s)"
timeout 130 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step budget=120 out="$OUT/q4.json" "variants=q4tk=16;tk=16;tk=16,q4tk=16" 2>&1 | grep "GRPO step"
timeout 80 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=70 out="$OUT/f32.json" "variants=tk=16" 2>&1 | grep "GRPO step"
for p in "" "perf=tk=16"; do timeout 40 deno run -A "$J/profile.js" pretrain 16 1024 16 $p 2>&1 | grep -E "== pretrain"; done
echo "h200-next.sh: done in $(( $(date +%s) - S0 )) s"
