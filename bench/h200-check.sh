#!/usr/bin/env bash
# Two device calls of 2026-12-02 (each under 8 minutes), after tk=16, q4tk=16 and vload became defaults
# (bench/results/2026-12-02-h200.json). `trainer` (issue 16): the PyTorch cross-check again (log-probs and LoRA
# gradients against transformers + PEFT, bench/h200.sh's check parts), PyTorch + PEFT's step, the q4 step and its
# recomputed step, the f32 step with variants that may close its 2.2% (wideSplit 2 and 4; the prefetch kernel
# policy), the q4 and f32 steps' per-grid profiles side by side. `sampling` (issue 17): the captured sampler at
# batch 8 and 64 with the first token's parts (prefill / setup / wait), at MatMulNBits accuracy level 0 and 4
# (int8 activations through ORT's DP4A kernel; agree=8: the sampled log-probs against the accuracy-0 graph),
# transformers generate in the same call, and the recipe's GRPO step at the 0.5B shape (h200.sh part grpo-05b).
# Before (here): bash bench/h200-prep.sh; carry [".device", ".devwork/h200"].
# `verify`: the third call, after kv_load, the fused bias and tk=32 (see its comment). `next`: the next session's first
# call (the LoRA tail; not run yet).
# `final`: the session's last call (the cross-check with loraTail on, the head as MatMul; see its comment).
# `probe`: the fourth session's first call (see its comment); `products`: its second; `rows`: its third; `auto`: its fourth.
# Run: source .device/remote-setup.sh; bash bench/h200-check.sh trainer|sampling|verify|next|final|probe|products|rows|auto|units|dbuf|exp|embed|attn|final5|named|attn2|now6|dq|rank|xa|regs|t256|ceiling|ceiling2|t128h|final6|wT|tk32|cmp|ladder|t96|tq|scale|tenth|kv|defaults12|defaults12min|st4|defaults13|next14|q4deq|defaults14|final14   (logs and JSON in $OUT/results.tgz)
set -u
cd "$(dirname "$0")/.."
WHAT=${1:?usage: bash bench/h200-check.sh trainer|sampling|verify|next|final|probe|products|rows|auto|units|dbuf|exp|embed|attn|final5|named|attn2|now6|dq|rank|xa|regs|t256|ceiling|ceiling2|t128h|final6|wT|tk32|cmp|ladder|t96|tq|scale|tenth|kv|defaults12|defaults12min|st4|defaults13|next14|q4deq|defaults14|final14}
OUT=${OUT:-/tmp/h200-check-out}
mkdir -p "$OUT"
TOTAL=${H200_TOTAL_S:-560}
# shellcheck source=bench/h200-lib.sh
. bench/h200-lib.sh
# The PyTorch cross-check (bench/h200.sh's check parts) as a part of this call, under the environment given
# (e.g. RLVR_PERF=...): its JSON and run log land in $OUT.
crosscheck() {
  PAT="max|worst|PASS|FAIL|ok" t check 150 env OUT="$OUT/c" PARTS=check "$@" bash bench/h200.sh
  cp "$OUT"/c/*.json "$OUT/" 2>/dev/null; cp "$OUT/c/run.log" "$OUT/check-run.log" 2>/dev/null; rm -rf "$OUT/c"
}
# The NVIDIA driver's statistics (registers, shared and local memory) of the kernels whose SPIR-V bench/h200-prep.sh wrote
# (bench/vkstats), into $OUT/vkstats.log: the binary built there, else built here from the carried headers.
vkstats() {
  local V=$R/vk
  cp "$V/labels.json" "$OUT/vk-labels.json" 2>/dev/null
  PAT="Register|rc" HEAD=24 t vkstats 60 bash -c "\"$V/vkstats\" $V/spv/*.spv || { cc -O2 -I$V/include -o /tmp/vkstats bench/vkstats/vkstats.c -ldl && /tmp/vkstats $V/spv/*.spv; }"
}
case "$WHAT" in
regs)
  # What NVIDIA's Vulkan driver makes of the big products' kernels: registers, shared and local memory per kernel
  # (bench/vkstats/vkstats.c on the SPIR-V bench/h200-prep.sh had Dawn write on SwiftShader), the same kernels' SPIR-V as
  # Dawn writes it here (vkdump.log, to compare), and the per-shape table with every kernel (tile256 among them).
  vkstats
  for f in "$R"/vk/spv/*.txt "$R"/vk/spv/*.bin; do [ -f "$f" ] && cp "$f" "$OUT/"; done
  PAT="rc" t vkdump 60 env RLVR_DAWN_OPTIONS="enable-dawn-features=dump_shaders" deno run -A "$J/vkdump.js" "$OUT/vk-labels-h200.json"
  HEAD=60 PAT="^\| " t shapes 200 deno run -A "$J/profile.js" shapes tokens=6144 iters=20
  ;;
t256)
  # The 256x128-tile kernel (switch t256; matmul_t256.wgsl; run at 298fb5f, when it prefetched): registers (vkstats), every product's
  # kernels, the f32 step at the defaults and under t256=1 beside the q4 step and PyTorch + PEFT, the f32 step's profile
  # under t256=1, and demo pretraining both ways.
  vkstats
  HEAD=60 PAT="^\| " t shapes 120 deno run -A "$J/profile.js" shapes tokens=6144 iters=20
  t torch 70 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 60 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step budget=50 out="$OUT/q4.json"
  t f32 110 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=100 out="$OUT/f32.json" "variants=t256=1"
  HEAD=40 PAT="== grpo|GPU busy|  [0-9]" t profile-f32-t256 45 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 perf=t256=1
  for p in t256=1 t256=0; do PAT="== pretrain|tokens/s" t "pretrain-${p//=/-}" 30 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"; done
  ;;
ceiling)
  # What FP32 arithmetic a WGSL kernel reaches here without a product's memory traffic (bench/fma-peak.bench.ts:
  # registers only, and the 128- and 256-tile inner loops on workgroup memory), cuBLAS's FP32 products on the same
  # shapes (TF32 off), the driver's registers for the kernels (vkstats), the per-product table, and the f32 step at the
  # defaults and under t256=1 beside the q4 step.
  vkstats
  PAT="^\||fma-peak" t fma 60 deno run -A "$J/fma-peak.js" iters=4096 reps=5 out="$OUT/fma-peak.json"
  PAT="^\||cuBLAS" t sgemm 60 python3 bench/torch/sgemm.py --out "$OUT" --iters 20
  HEAD=60 PAT="^\| " t shapes 120 deno run -A "$J/profile.js" shapes tokens=6144 iters=20
  t q4 60 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step budget=50 out="$OUT/q4.json"
  t f32 110 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=100 out="$OUT/f32.json" "variants=t256=1"
  ;;
ceiling2)
  # After `ceiling`: bench/fma-peak.bench.ts again (its tile loops read a destroyed uniform buffer there), demo
  # pretraining at the defaults and under t256=1, and the f32 step's profile under t256=1.
  PAT="^\||fma-peak" t fma 60 deno run -A "$J/fma-peak.js" iters=4096 reps=5 out="$OUT/fma-peak.json"
  for p in t256=0 t256=1 t256=0 t256=1; do PAT="== pretrain|tokens/s" t "pretrain-${p//=/-}" 30 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"; done
  HEAD=40 PAT="== grpo|GPU busy|  [0-9]" t profile-f32-t256 45 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 perf=t256=1
  ;;
t128h)
  # tile128h (switch t128h: tile128's tile with 16x8 threads, each a 16x8 block): registers (vkstats), every product's
  # kernels, the f32 step at the defaults and under t128h=1 and t256=1,t128h=1 beside the q4 step and PyTorch + PEFT,
  # the f32 step's profile under t128h=1, demo pretraining alternated.
  vkstats
  HEAD=60 PAT="^\| " t shapes 120 deno run -A "$J/profile.js" shapes tokens=6144 iters=20
  t torch 70 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 60 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step budget=50 out="$OUT/q4.json"
  t f32 140 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=130 out="$OUT/f32.json" "variants=t128h=1;t256=1,t128h=1"
  HEAD=40 PAT="== grpo|GPU busy|  [0-9]" t profile-f32-t128h 45 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 perf=t128h=1
  for p in t128h=0 t128h=1 t128h=0 t128h=1; do PAT="== pretrain|tokens/s" t "pretrain-${p//=/-}-$RANDOM" 30 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"; done
  ;;
final6)
  # The sixth session's last call, at the defaults with tile128h (461d4ec): the PyTorch cross-check, PyTorch + PEFT's
  # step, the q4 and f32 steps alternated twice (f32 against q4 within one call), the f32 step under wideSplit 2 and 4,
  # the q4 step recomputed, demo pretraining, and the per-product table.
  crosscheck
  t torch 70 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  for i in 1 2; do
    t "q4-$i" 45 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step budget=35 out="$OUT/q4-$i.json"
    t "f32-$i" 45 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=35 out="$OUT/f32-$i.json"
  done
  t f32-split 70 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 2 step budget=60 out="$OUT/f32-split.json" "variants=wideSplit=2;wideSplit=4"
  t q4-recompute 45 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 2 recompute budget=35 out="$OUT/q4-recompute.json"
  for i in 1 2; do PAT="== pretrain|tokens/s" t "pretrain-$i" 30 deno run -A "$J/profile.js" pretrain 16 1024 16; done
  HEAD=70 PAT="^\| " t shapes 120 deno run -A "$J/profile.js" shapes tokens=6144 iters=20
  ;;
wT)
  # f32 projections uploaded twice, the forward reading W^T (switch wT): the f32 step at the defaults and under wT=1
  # alternated with the q4 step (three rounds), and the f32 step's profile under wT=1.
  for i in 1 2 3; do
    t "q4-$i" 40 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step budget=30 out="$OUT/q4-$i.json"
    t "f32wT-$i" 50 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=35 out="$OUT/f32wT-$i.json" perf=wT=1
    t "f32-$i" 40 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=30 out="$OUT/f32-$i.json"
  done
  HEAD=40 PAT="== grpo|GPU busy|  [0-9]" t profile-f32-wT 45 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 perf=wT=1
  ;;
tk32)
  # tile128h at a contracted step of 32 (switch tk=32: unpadded 32 KiB tiles, half the barriers): every product's
  # kernels, the f32 step and demo pretraining at tk=16 (the default) and tk=32, alternated.
  HEAD=40 PAT="^\| (q/o|gate|down|q\+k|dx|lm)" t shapes-tk32 120 deno run -A "$J/profile.js" shapes tokens=6144 iters=20 perf=tk=32
  for i in 1 2; do
    t "f32-$i" 40 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=30 out="$OUT/f32-$i.json"
    t "f32tk32-$i" 40 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=30 out="$OUT/f32tk32-$i.json" perf=tk=32
    PAT="== pretrain|tokens/s" t "pretrain-$i" 30 deno run -A "$J/profile.js" pretrain 16 1024 16
    PAT="== pretrain|tokens/s" t "pretrain-tk32-$i" 30 deno run -A "$J/profile.js" pretrain 16 1024 16 perf=tk=32
  done
  ;;
ladder)
  # Where tile128h's time goes (bench/ladder.bench.ts): the kernel with its global loads, tile stores and barriers taken
  # away one by one, on dx of down and gate/up x W^T, five interleaved rounds; with the big products at the defaults.
  HEAD=8 PAT="^\| |ladder" t ladder 150 deno run -A "$J/ladder.js" tokens=6144 iters=20 rounds=5 out="$OUT/ladder.json"
  HEAD=20 PAT="^\| |cmp" t cmp 90 deno run -A "$J/profile.js" cmp tokens=6144 iters=20 rounds=3 "sw="
  ;;
t96)
  # Written 2026-12-05 (ninth session) after part st (st, ka, qa, ws measured, none faster; the switches st, qa, ws and
  # the part st exist only up to commit 492fb1c): switch t96, tile128h's products on
  # 96 x 128 tiles with a 12 x 8 block a thread (96 accumulators instead of 128), in case fewer registers let three
  # workgroups share a multiprocessor. Its registers (vkstats: h200-prep.sh dumps tile96h), the big products under
  # t96 (wideSplit 3, the default, and 2: a 96-row grid is 4/3 as many tiles), PyTorch + PEFT's step, the f32 and q4
  # steps and demo pretraining under t96; and ka=2 (ka only where B is (N, K) too: part st had ka faster on x W^T, slower
  # on dy W) in cmp and pretraining, whose forward reads W^T; and wideSplit=7 (the 896-wide outputs in 7 slices: 8.9 waves
  # of 264 workgroups on 128-row tiles, 7.9 of 396 on 96-row ones, where 3 slices left 3.8 / 3.4). About 7 minutes:
  # H200_TOTAL_S=450.
  vkstats
  HEAD=40 PAT="^\| |cmp" t cmp 120 deno run -A "$J/profile.js" cmp tokens=6144 iters=20 rounds=4 "sw=t96=0;t96=1;t96=1,wideSplit=2;ka=2;wideSplit=7;t96=1,wideSplit=7"
  t torch 70 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t f32 110 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=100 out="$OUT/f32.json" "variants=t96=1;t96=1,wideSplit=2;wideSplit=7;t96=1,wideSplit=7"
  t q4 70 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step budget=60 out="$OUT/q4.json" "variants=t96=1;wideSplit=7"
  for p in t96=0 t96=1 ka=2; do PAT="== pretrain|tokens/s" t "pretrain-${p//=/-}" 35 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"; done
  ;;
tq)
  # Written 2026-12-05 (ninth session) after part t96: tile96h ran the big products at 33.1-35.4 TFLOP/s under
  # wideSplit=7 (tile128h 30.6-34.7) at 158-168 registers (three workgroups a multiprocessor), but its LoRA-tail
  # kernels took 190-195 (two), and the f32 step was slower (531.0 against 503.2 ms). Switch tq loads the tail's a2 / b2
  # as quads. Registers (h200-prep.sh with VK_PERF=tq=1 dumps the _tq kernels), the f32 and q4 steps under tq with and
  # without t96 and wideSplit=7, the big products again, and the f32 step's per-kernel profile at the defaults and
  # under t96=1,tq=1,wideSplit=7, demo pretraining under t96. About 4 minutes: H200_TOTAL_S=320.
  vkstats
  HEAD=30 PAT="^\| |cmp" t cmp 60 deno run -A "$J/profile.js" cmp tokens=6144 iters=20 rounds=4 "sw=t96=0;t96=1,wideSplit=7"
  t f32 100 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=90 out="$OUT/f32.json" "variants=tq=1;t96=1,tq=1;t96=1,tq=1,wideSplit=7;tq=1,wideSplit=7"
  t q4 50 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step budget=40 out="$OUT/q4.json" "variants=tq=1;t96=1,tq=1,wideSplit=7"
  for p in t96=0 t96=1,tq=1,wideSplit=7; do HEAD=40 PAT="== grpo|GPU busy|  [0-9]" t "profile-f32-${p//[=,]/-}" 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 "perf=$p"; done
  # Demo pretraining: tile96h's wideSplit now counts its grid in 128x128 tiles' area (call t96 left its 16384 x 384
  # products unsplit: 513 tiles), interleaved twice.
  i=0; for p in t96=0 t96=1 t96=0 t96=1; do i=$((i + 1)); PAT="== pretrain|tokens/s" t "pretrain-$i-${p//=/-}" 20 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"; done
  ;;
tenth)
  # Written 2026-12-05 (tenth session); run in the twelfth on an H100 (docs/benchmarks.md). Its switch q4t96 exists
  # only at 888ff98 (removed after this part measured it). Experiments for issue 16:
  # - switch q4t96: the q4 products on 96 x 128 tiles with the 12 x 8 block (q4matmul_t96h.wgsl, q4matmul_t_t96h.wgsl:
  #   t96's tile for q4, bitwise tile128's sums), in case the q4 kernels too get three workgroups a multiprocessor (the
  #   16 x 8 q4 form, q4h, took 206-239 registers and lost). Registers (vkstats: h200-prep.sh dumps them), the big products
  #   with and without wideSplit=7 (t96 beside it for the f32 rows), the q4 step under it.
  # - switches narrowWg / narrowMinK: the LoRA rank products (matmul_narrow, 35.5 ms of the f32 step's GPU time at 0.85-1
  #   TB/s) split into more, shorter slices. Their per-shape times (profile.js shapes only=rank) and the q4 step under them.
  # - switch lm128: the vocabulary head's partials and dz on 128x128 tiles with an 8x8 block (lmhead_t128.wgsl,
  #   lmhead_grad_t128.wgsl; 34.5 + 29.6 ms of the f32 step at 24 and 28 TFLOP/s on 64x64 tiles): the q4 step and its
  #   profile under it, and demo pretraining (its head is 16,384 x 8,192 x 384) both ways, interleaved.
  # PyTorch + PEFT's step in the same call, the q4 step's per-kernel profile at the defaults and under each. About 8
  # minutes: H200_TOTAL_S=480.
  vkstats
  HEAD=30 PAT="^\| |cmp" t cmp 70 deno run -A "$J/profile.js" cmp tokens=6144 iters=20 rounds=4 "sw=q4t96=0;q4t96=1;q4t96=1,wideSplit=7;t96=1,wideSplit=7"
  for p in narrowWg=256 narrowWg=1024 narrowWg=2048,narrowMinK=64; do HEAD=20 PAT="^\| " t "rank-${p//[=,]/-}" 30 deno run -A "$J/profile.js" shapes tokens=6144 iters=20 only=rank "perf=$p"; done
  t torch 70 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 100 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step budget=90 out="$OUT/q4.json" "variants=q4t96=1;q4t96=1,wideSplit=7;narrowWg=1024;narrowWg=2048,narrowMinK=64;narrowWg=1024,narrowMinK=128;lm128=1"
  for p in q4t96=0 q4t96=1 narrowWg=2048,narrowMinK=64 lm128=1; do HEAD=40 PAT="== grpo|GPU busy|  [0-9]" t "profile-q4-${p//[=,]/-}" 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1 "perf=$p"; done
  i=0; for p in lm128=0 lm128=1 lm128=0 lm128=1; do i=$((i + 1)); PAT="== pretrain|tokens/s" t "pretrain-$i-${p//=/-}" 20 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"; done
  ;;
defaults12min)
  # defaults12's first two questions in the least device time (twelfth session, with ~300 s of the budget left): the 0.5B
  # q4 step stored and recomputed at the new defaults against the old ones in one process, then the PyTorch cross-check
  # at the new defaults. H200_TOTAL_S=100.
  t q4 60 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 2 step,recompute budget=55 out="$OUT/q4.json" "variants=attnSplit=0,narrowWg=256,narrowMinK=256"
  crosscheck
  ;;
final14)
  # Written 2026-12-05 (fourteenth session) once q4deq=1, wideSplit=7, t96=1, tq=1 were the defaults (calls q4deq,
  # defaults14 and scale measured them as switch sets): the per-shape table at the defaults (profile.js shapes, its q4
  # weights now quantised before the timing and the GPU warmed again before the q4 rows), the big products against the
  # thirteenth session's defaults, the q4 step stored and recomputed, the f32 step, demo pretraining, PyTorch + PEFT.
  # About 4 minutes: H200_TOTAL_S=300.
  OLD13=q4deq=0,wideSplit=3,t96=0,tq=0
  HEAD=70 PAT="^\| " t shapes 150 deno run -A "$J/profile.js" shapes tokens=6144 iters=20
  HEAD=30 PAT="^\| |cmp" t cmp 80 deno run -A "$J/profile.js" cmp tokens=6144 iters=20 rounds=4 "sw=;$OLD13"
  t q4 90 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step,recompute budget=80 out="$OUT/q4.json" "variants=$OLD13"
  t f32 50 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=40 out="$OUT/f32.json"
  i=0; for p in new $OLD13 new; do i=$((i + 1)); HEAD=12 PAT="== pretrain|tokens/s|GPU busy" t "pretrain-$i-${p//[=,]/-}" 20 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"; done
  t torch 70 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  ;;
defaults14)
  # Written 2026-12-05 (fourteenth session) after part q4deq ran on an H100 (q4 step 486.9 -> 464.0 ms under q4deq=1;
  # every big q4 product >= 35 TFLOP/s under q4deq=1,t96=1,tq=1,wideSplit=7, but wideSplit=7 added 147 MiB of split
  # scratch): the new defaults q4deq=1,wideSplit=7, a wide split's partials now in the call scratch where it holds them.
  # Against the old defaults (q4deq=0,wideSplit=3) and the tile96h set (t96=1,tq=1) in the same processes: the big
  # products, the q4 step stored and recomputed (peak buffers, <= 3 GB), the f32 step, demo pretraining alternated,
  # PyTorch + PEFT, the cross-check at the defaults and under t96=1,tq=1. About 5 minutes: H200_TOTAL_S=330.
  OLD14=q4deq=0,wideSplit=3; T96=t96=1,tq=1
  HEAD=30 PAT="^\| |cmp" t cmp 100 deno run -A "$J/profile.js" cmp tokens=6144 iters=20 rounds=4 "sw=;$T96;$OLD14"
  t q4 100 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step,recompute budget=90 out="$OUT/q4.json" "variants=$OLD14;$T96"
  t q4-t96 50 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step,recompute budget=40 out="$OUT/q4-t96.json" "perf=$T96"
  t f32 70 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=60 out="$OUT/f32.json" "variants=$OLD14;$T96"
  i=0; for p in new $OLD14 new $OLD14 $T96; do i=$((i + 1)); HEAD=12 PAT="== pretrain|tokens/s|GPU busy" t "pretrain-$i-${p//[=,]/-}" 20 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"; done
  t torch 70 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  crosscheck
  mkdir -p "$OUT/t96" && OUT=$OUT/t96 crosscheck RLVR_PERF=$T96
  ;;
q4deq)
  # Written 2026-12-05 (fourteenth session): the switch q4deq=1 (q4 products of >= 2048 rows dequantise W into the call
  # scratch and run the f32 kernels: W^T for the forward, as the f32 step's stored W^T, W for dx) against the defaults,
  # alone and with the tile96h sets (t96=1,tq=1, and with wideSplit=7, which took every big f32 product over 35 TFLOP/s
  # on an H100). The big products (the q4 rows include their dequant dispatch); the q4 step stored under each set; the
  # q4 step stored and recomputed (peak buffers, <= 3 GB) under q4deq=1 and q4deq=1,t96=1,tq=1; the f32 step; demo
  # pretraining alternated with t96=1,tq=1; the q4 step's profile under q4deq=1; PyTorch + PEFT; the cross-check under
  # t96=1,tq=1. About 8 minutes: H200_TOTAL_S=520.
  D1=q4deq=1; D2=q4deq=1,t96=1,tq=1; D3=q4deq=1,t96=1,tq=1,wideSplit=7
  HEAD=30 PAT="^\| |cmp" t cmp 100 deno run -A "$J/profile.js" cmp tokens=6144 iters=20 rounds=4 "sw=;$D1;$D2;$D3"
  t q4 90 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step budget=80 out="$OUT/q4.json" "variants=$D1;$D2;$D3"
  t q4-deq 70 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step,recompute budget=60 out="$OUT/q4-deq.json" "perf=$D1"
  t q4-deq-t96 70 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step,recompute budget=60 out="$OUT/q4-deq-t96.json" "perf=$D2"
  t f32 60 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=50 out="$OUT/f32.json" "variants=t96=1,tq=1"
  i=0; for p in new t96=1,tq=1 new t96=1,tq=1; do i=$((i + 1)); HEAD=12 PAT="== pretrain|tokens/s|GPU busy" t "pretrain-$i-${p//[=,]/-}" 20 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"; done
  HEAD=40 PAT="== grpo|GPU busy|  [0-9]" t profile-q4-deq 50 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1 "perf=$D1"
  t torch 70 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  crosscheck RLVR_PERF=$D2
  ;;
next14)
  # Written 2026-12-05 (thirteenth session) for the next: at the defaults st4=1,lm128=2, the tile96h set that took every
  # big f32 product over 35 TFLOP/s on an H100 (t96=1,tq=1,wideSplit=7: 35.1-36.7; the f32 step -1.0 to -1.3% in both
  # orders) against the defaults where it was never measured since st4: the q4 step (wideSplit=7 also splits the q4
  # products 7 ways; t96=1,tq=1 alone leaves them at 3), demo pretraining alternated, the big products, PyTorch + PEFT.
  # About 3 minutes: H200_TOTAL_S=200.
  T96=t96=1,tq=1,wideSplit=7
  t q4 80 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step budget=70 out="$OUT/q4.json" "variants=$T96;t96=1,tq=1"
  t f32 70 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=60 out="$OUT/f32.json" "variants=$T96;t96=1,tq=1"
  i=0; for p in new $T96 new $T96; do i=$((i + 1)); HEAD=12 PAT="== pretrain|tokens/s|GPU busy" t "pretrain-$i-${p//[=,]/-}" 20 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"; done
  HEAD=30 PAT="^\| |cmp" t cmp 70 deno run -A "$J/profile.js" cmp tokens=6144 iters=20 rounds=4 "sw=;$T96;t96=1,tq=1"
  t torch 70 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  ;;
defaults13)
  # Written 2026-12-05 (thirteenth session) after part st4 ran on an H100: st4=1 (the f32 128-tile kernels' epilogue as
  # vec4 stores; the q4 kernels' only under st4=2, which slowed the q4 products without a tail 25%) and lm128=2 became
  # the defaults. The new defaults against the old ones (st4=0,lm128=0) in the same processes: the q4 step stored and
  # recomputed (peak buffers), the f32 step (and under t96=1,tq=1,wideSplit=7, which with st4 took every big f32
  # product over 35 TFLOP/s), PyTorch + PEFT, demo pretraining interleaved, the big products, the PyTorch cross-check
  # at the new defaults. About 4 minutes: H200_TOTAL_S=280.
  OLD13=st4=0,lm128=0
  t q4 100 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step,recompute budget=90 out="$OUT/q4.json" "variants=$OLD13"
  t f32 80 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=70 out="$OUT/f32.json" "variants=$OLD13;t96=1,tq=1,wideSplit=7"
  HEAD=30 PAT="^\| |cmp" t cmp 80 deno run -A "$J/profile.js" cmp tokens=6144 iters=20 rounds=4 "sw=;$OLD13;t96=1,tq=1,wideSplit=7;st4=2"
  t torch 70 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  i=0; for p in new $OLD13 new $OLD13; do i=$((i + 1)); HEAD=12 PAT="== pretrain|tokens/s|GPU busy" t "pretrain-$i-${p//[=,]/-}" 20 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"; done
  crosscheck
  ;;
st4)
  # Written 2026-12-05 (thirteenth session) after defaults12's ladder: on the H200 the inner rung (tile128h without
  # loads, tile stores or barriers) ran at 42.7 TFLOP/s and at 50.1 with one store a thread instead of the epilogue's 128
  # scalar stores (rung sum; the 16x8 inner loop alone, fma-peak lds256, 50.9). The switch st4 stores the row quads as
  # vec4 in the f32 and q4 128-tile kernels (bitwise the scalar stores). Measured here: the big products under st4 (and
  # with t96=1,tq=1,wideSplit=7), the 0.5B q4 step with st4=1 / lm128=2 / both as variants and the f32 step, PyTorch +
  # PEFT, demo pretraining interleaved, the q4 step's profile under st4, registers (prep with VK_PERF=st4=1), the
  # PyTorch cross-check under st4. About 4 minutes: H200_TOTAL_S=300.
  HEAD=30 PAT="^\| |cmp" t cmp 80 deno run -A "$J/profile.js" cmp tokens=6144 iters=20 rounds=4 "sw=;st4=1;st4=1,t96=1,tq=1,wideSplit=7"
  t q4 100 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step,recompute budget=90 out="$OUT/q4.json" "variants=st4=1;lm128=2;st4=1,lm128=2"
  t f32 70 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=60 out="$OUT/f32.json" "variants=st4=1"
  t torch 70 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  i=0; for p in new st4=1 new st4=1; do i=$((i + 1)); HEAD=12 PAT="== pretrain|tokens/s|GPU busy" t "pretrain-$i-${p//[=,]/-}" 20 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"; done
  HEAD=40 PAT="== grpo|GPU busy|  [0-9]" t profile-q4-st4 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1 perf=st4=1
  vkstats
  crosscheck RLVR_PERF=st4=1
  ;;
defaults12)
  # Written 2026-12-05 (twelfth session) after the kv and tenth parts ran on an H100: attnSplit=1 (the 0.5B q4 step 510.1
  # -> 498.0 ms; its partials now in the split-K scratch, no buffer of their own) and narrowWg=1024,narrowMinK=128 (510.8
  # -> 501.0) became the defaults; attnKv (slower: 516.9) is gone; lm128=2 (dz alone on 128-tiles: 29.4 -> 26.7 ms, the
  # partials slower on 128-tiles) is new. The new defaults against the old ones (attnSplit=0,narrowWg=256,narrowMinK=256)
  # in the same processes: PyTorch + PEFT, the q4 step stored and recomputed (peak buffers: the <= 3 GB
  # goal), the f32 step (f32 >= q4), demo pretraining interleaved, the PyTorch cross-check at the new defaults, the big
  # products, the q4 step's profile, then issue 16's T / B sweep and the registers if time is left. About 6 minutes:
  # H200_TOTAL_S=380 (what a call with little device time left can take; the sweep is cut first).
  # The parts in the order they matter (a short device budget cuts the last ones); the registers (vkstats) last.
  OLD12=attnSplit=0,narrowWg=256,narrowMinK=256
  t torch 70 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 100 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step,recompute budget=90 out="$OUT/q4.json" "variants=$OLD12;lm128=2"
  t f32 80 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=70 out="$OUT/f32.json" "variants=$OLD12"
  i=0; for p in new $OLD12 new $OLD12; do i=$((i + 1)); HEAD=12 PAT="== pretrain|tokens/s|GPU busy|attention" t "pretrain-$i-${p//[=,]/-}" 20 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"; done
  crosscheck
  HEAD=30 PAT="^\| |cmp" t cmp 70 deno run -A "$J/profile.js" cmp tokens=6144 iters=20 rounds=4 "sw="
  # (thirteenth session) the ladder's new rungs long and sum beside the inner loop alone (fma-peak lds256).
  HEAD=8 PAT="^\| |ladder" t ladder 60 deno run -A "$J/ladder.js" tokens=6144 iters=20 rounds=3 out="$OUT/ladder.json"
  PAT="^\||fma-peak" t fma 30 deno run -A "$J/fma-peak.js" iters=4096 reps=5 out="$OUT/fma-peak.json"
  HEAD=40 PAT="== grpo|GPU busy|  [0-9]" t profile-q4 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1
  t q4-sweep 120 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 2 step sweep=1 budget=110 out="$OUT/q4-sweep.json"
  vkstats
  ;;
kv)
  # Written 2026-12-05 (eleventh session); run in the twelfth on an H100. Its switch attnKv exists only at 888ff98
  # (removed after this part measured it; attnSplit became the default). Two experiments on the dk/dv kernel (55.3 ms of the 0.5B step at
  # about 9 TFLOP/s, pretraining's about 11): the switch attnKv (its score phase as a 2 keys x 4 queries block on half
  # the threads, the fused dq partial two rows a thread: 24% fewer workgroup-memory reads per query tile, bitwise the
  # default's dk, dv, dq) and the switch attnSplit (a workgroup per query head instead of the kv group's 7 heads one
  # after another, a reduce over the group: 2,688 workgroups of at most 48 query tiles instead of 384 of up to 7 x 48 at
  # the 0.5B shape). The driver's registers for the attention, vocabulary-head and rank kernels (bench/vkstats/dump.ts
  # dumps them now, these switches' dk/dv kernels among them), PyTorch + PEFT, the 0.5B q4 step with each as a variant,
  # demo pretraining under the four settings in two interleaved rounds, the PyTorch cross-check under both (what a
  # default needs; KV_CHECK=0 skips it) and the q4 step's profile under both. About 9 minutes: H200_TOTAL_S=560.
  vkstats
  t torch 70 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 90 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step budget=80 out="$OUT/q4.json" "variants=attnKv=1;attnSplit=1;attnKv=1,attnSplit=1"
  i=0; for p in attnKv=0 attnKv=1 attnSplit=1 attnKv=1,attnSplit=1 attnKv=0 attnKv=1 attnSplit=1 attnKv=1,attnSplit=1; do
    i=$((i + 1)); HEAD=12 PAT="== pretrain|tokens/s|GPU busy|attention" t "pretrain-$i-${p//[=,]/-}" 20 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"
  done
  [ "${KV_CHECK:-1}" = 1 ] && crosscheck RLVR_PERF=attnKv=1,attnSplit=1
  HEAD=40 PAT="== grpo|GPU busy|  [0-9]" t profile-q4-kv-split 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1 perf=attnKv=1,attnSplit=1
  ;;
scale)
  # Written 2026-12-05 (ninth session): issue 16's scaling at the current defaults, in one call (the last was final5,
  # 2026-12-02, before tile128h, wT and the rest): PyTorch + PEFT at 8 x 768 and its T / B sweep, the 0.5B q4 step stored
  # and recomputed with the same sweep, the demo and 1.5B shapes against PyTorch + PEFT. About 8 minutes: H200_TOTAL_S=480.
  t torch 80 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --sweep-iters 2 --attn eager
  t q4 120 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step,recompute sweep=1 budget=110 out="$OUT/q4.json"
  t torch-demo 40 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager --preset demo --name train-demo.json
  t demo 30 deno run -A "$J/train.js" demo 8 768 16 1 4 step budget=20 out="$OUT/demo.json"
  t torch-15b 60 python3 bench/torch/train.py --out "$OUT" --iters 3 --warmup 1 --no-sweep --attn eager --preset qwen2.5-1.5b --name train-15b.json
  t q4-15b 110 deno run -A "$J/train.js" qwen2.5-1.5b 8 768 16 1 2 step budget=100 out="$OUT/q4-15b.json"
  ;;
cmp)
  # The big products at the defaults (issue 16's >= 35 TFLOP/s), in one short call: profile.js cmp, five interleaved
  # rounds, best kept. Give CMP_SW (switch sets separated by ';') to compare others in the same rounds.
  HEAD=20 PAT="^\| |cmp" t cmp 120 deno run -A "$J/profile.js" cmp tokens=6144 iters=20 rounds=5 "sw=${CMP_SW:-}"
  ;;
trainer)
  crosscheck
  t torch 60 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 70 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step,recompute budget=60 out="$OUT/q4.json"
  t f32 90 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=80 out="$OUT/f32.json" kernels=auto,prefetch "variants=wideSplit=2;wideSplit=4"
  HEAD=40 PAT="== grpo|GPU busy|  [0-9]" t profile-q4 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1
  HEAD=40 PAT="== grpo|GPU busy|  [0-9]" t profile-f32 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768
  ;;
sampling)
  for acc in 0 4; do
    PAT="^\[captured\]|first token, the median|agreement|accuracy" t decode-acc$acc 90 deno run -A "$J/decode.js" qwen2.5-0.5b q4 1,8 8 128 256 0 "$OUT/decode-acc$acc.json" 75 sampler=captured acc=$acc agree=8
  done
  PAT="batch|tok/s" t generate 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3
  PAT="step|mean" t grpo-05b 120 env OUT="$OUT/g" PARTS=grpo-05b GRPO_05B_SAMPLERS=captured GRPO_05B_S=110 bash bench/h200.sh
  cp "$OUT"/g/*.metrics.jsonl "$OUT/" 2>/dev/null; cp "$OUT/g/run.log" "$OUT/grpo-05b-run.log" 2>/dev/null; rm -rf "$OUT/g"
  ;;
verify)
  # The third call: the kv_load cache move (first token), the fused q/k/v bias of f32 projections, and the f32
  # kernel at a contracted step of 32, beside PyTorch + PEFT and transformers again.
  PAT="^\\[captured\\]|first token, the median|graph \\+ session" t decode 60 deno run -A "$J/decode.js" qwen2.5-0.5b q4 1,8 8 128 256 0 "$OUT/decode.json" 50 sampler=captured
  PAT="batch|tok/s" t generate 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3
  t torch 45 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 45 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step budget=35 out="$OUT/q4.json"
  t f32 70 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=60 out="$OUT/f32.json" "variants=tk=32;tk=32,wideSplit=4"
  HEAD=30 PAT="== grpo|GPU busy|  [0-9]" t profile-f32 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768
  HEAD=30 PAT="== grpo|GPU busy|  [0-9]" t profile-f32-tk32 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 perf=tk=32
  for tk in 16 32; do PAT="== pretrain|tokens/s" t pretrain-tk$tk 40 deno run -A "$J/profile.js" pretrain 16 1024 16 perf=tk=$tk; done
  ;;
next)
  # Written 2026-12-02, not run yet: the LoRA tail (switch loraTail) on f32 and q4 beside PyTorch + PEFT, its profile,
  # the recomputed step with it, and sampling against transformers again (the first token's ratio moved with
  # transformers' own figure between calls E and F), with the prefill under capture and without.
  t torch 45 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 70 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step,recompute budget=60 out="$OUT/q4.json" "variants=loraTail=1"
  t f32 80 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step,recompute budget=70 out="$OUT/f32.json" "variants=loraTail=1"
  HEAD=30 PAT="== grpo|GPU busy|  [0-9]" t profile-f32-tail 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 perf=loraTail=1
  PAT="== pretrain|tokens/s" t pretrain 30 deno run -A "$J/profile.js" pretrain 16 1024 16
  # The captured prefill (CapturedPrefill) against the policy's own prefill, both before captured decoding.
  PAT="^\\[captured|first token, the median|graph \\+ session|prefill session|captured prefill" t decode 90 deno run -A "$J/decode.js" qwen2.5-0.5b q4 1,8 8 128 256 0 "$OUT/decode.json" 80 sampler=captured prefill=captured,policy
  PAT="batch|tok/s" t generate 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3
  ;;
final)
  # After next (2026-12-02, third session): loraTail=1 is the default, so the PyTorch cross-check (log-probs and LoRA
  # gradients against transformers + PEFT) again, the q4 and f32 steps at the defaults, and captured decoding with the
  # f32 head as Gemm (transB) against MatMul over a transposed copy (RLVR_CAPTURED_HEAD=matmul), beside transformers.
  crosscheck
  t torch 45 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 45 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step budget=35 out="$OUT/q4.json"
  t f32 50 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=40 out="$OUT/f32.json"
  for head in gemm matmul; do
    PAT="^\\[captured|first token, the median|graph \\+ session|captured prefill" t decode-$head 60 env RLVR_CAPTURED_HEAD=$head deno run -A "$J/decode.js" qwen2.5-0.5b q4 1,8 8 128 256 0 "$OUT/decode-$head.json" 50 sampler=captured
  done
  PAT="batch|tok/s" t generate 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3
  ;;
probe)
  # The fourth session's first call (2026-12-02): where a captured decoding step's GPU time goes (ORT's own profile of
  # the captured graph at batch 8 and 64, bench/decode-profile.bench.ts), every f32 and q4 kernel on the 0.5B step's
  # product shapes (profile.bench.ts shapes), the f32 and q4 steps' profiles with forward and backward f32 products
  # told apart (labels _tB), and captured decoding against transformers twice (the batch-64 ratio moved 2x between calls).
  for cfg in "8 gemm" "64 gemm" "64 matmul"; do
    set -- $cfg
    t dprof-b$1-$2 60 sh -c "deno run -A $J/decode-profile.js batch=$1 past=256 maxT=384 runs=4 head=$2 > $OUT/dprof-b$1-$2.out"
    python3 bench/step-profile.py "$OUT/dprof-b$1-$2.out" MatMulNBits,Gemm,MatMul,GroupQueryAttention 14 | tee "$OUT/dprof-b$1-$2.txt" | head -40
    gzip -f "$OUT/dprof-b$1-$2.out"
  done
  HEAD=40 PAT="^\\| |adapter" t shapes 90 deno run -A "$J/profile.js" shapes iters=20
  PAT="batch|tok/s" t generate1 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3
  mv "$OUT/generate.json" "$OUT/generate1.json" 2>/dev/null
  PAT="^\\[captured|first token, the median|graph \\+ session|captured prefill" t decode 60 deno run -A "$J/decode.js" qwen2.5-0.5b q4 1,8 8 128 256 0 "$OUT/decode.json" 50 sampler=captured
  PAT="batch|tok/s" t generate2 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3
  HEAD=30 PAT="== grpo|GPU busy|  [0-9]" t profile-f32 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768
  HEAD=30 PAT="== grpo|GPU busy|  [0-9]" t profile-q4 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1
  ;;
products)
  # After probe (2026-12-02, fourth session): the captured graphs' q4 products stacked (q/k/v, gate/up) and split along K
  # (decoder.ts decodeProducts; its first rule, splits of up to 8 slices) against the earlier graphs (plain) and stacking alone (fused), beside
  # transformers before and after; ORT's profile of the split graph; the f32 kernels' shapes at tk=32 (issue 16: the
  # transposed-B forward products are where f32 loses to q4).
  for b in 8 64; do
    t dprof-b$b-split 60 sh -c "deno run -A $J/decode-profile.js batch=$b past=256 maxT=384 runs=4 products=split > $OUT/dprof-b$b-split.out"
    python3 bench/step-profile.py "$OUT/dprof-b$b-split.out" MatMulNBits,Gemm,ReduceSum,Mul,Split 14 | tee "$OUT/dprof-b$b-split.txt" | head -24
    gzip -f "$OUT/dprof-b$b-split.out"
  done
  PAT="batch|tok/s" t generate1 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3
  mv "$OUT/generate.json" "$OUT/generate1.json" 2>/dev/null
  for p in split plain fused; do
    PAT="^\\[captured|first token, the median|graph \\+ session|captured prefill" t decode-$p 60 env RLVR_CAPTURED_PRODUCTS=$p deno run -A "$J/decode.js" qwen2.5-0.5b q4 1,8 8 128 256 0 "$OUT/decode-$p.json" 50 sampler=captured
  done
  PAT="batch|tok/s" t generate2 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3
  HEAD=40 PAT="^\\| .*x W\\^T|adapter" t shapes-tk32 90 deno run -A "$J/profile.js" shapes iters=20 perf=tk=32
  ;;
rows)
  # The fourth session's last call: the new default (split: stacked everywhere, two K slices from 32 rows) with the
  # sampled log-probabilities teacher-forced by an accuracy-0 session (agree=8), the row-group variant (rows: ORT's
  # decoding kernel at 8 rows) and the earlier graphs (plain), between two transformers runs.
  PAT="batch|tok/s" t generate1 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3
  mv "$OUT/generate.json" "$OUT/generate1.json" 2>/dev/null
  PAT="^\\[captured|first token, the median|graph \\+ session|captured prefill|agreement" t decode-split 70 deno run -A "$J/decode.js" qwen2.5-0.5b q4 1,8 8 128 256 0 "$OUT/decode-split.json" 60 sampler=captured agree=8
  for p in rows plain; do
    PAT="^\\[captured|first token, the median|graph \\+ session|captured prefill" t decode-$p 60 env RLVR_CAPTURED_PRODUCTS=$p deno run -A "$J/decode.js" qwen2.5-0.5b q4 1,8 8 128 256 0 "$OUT/decode-$p.json" 50 sampler=captured
  done
  PAT="batch|tok/s" t generate2 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3
  ;;
auto)
  # After rows: the default that takes rows at 8 rows and split at 64 (decodeProducts auto), beside transformers.
  PAT="^\\[captured|first token, the median|graph \\+ session|captured prefill" t decode-auto 60 deno run -A "$J/decode.js" qwen2.5-0.5b q4 1,8 8 128 256 0 "$OUT/decode-auto.json" 50 sampler=captured
  PAT="batch|tok/s" t generate 100 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3
  ;;
units)
  # The fifth session's first call (2026-12-02, issue 16): the f32 128-tile kernel's unit loads (switch vload=2: whole
  # 4 x 4 blocks per thread, transposed in registers, stored as vec4) against vload=1 in the f32 step, beside the q4 step
  # and PyTorch + PEFT; the PyTorch cross-check under vload=2 (so that it can become the default); the f32 step's
  # per-grid profile under both; pretraining under both.
  crosscheck RLVR_PERF=vload=2
  t torch 45 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 45 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step budget=35 out="$OUT/q4.json"
  t f32 75 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=65 out="$OUT/f32.json" "variants=vload=2;vload=2,tk=32;vload=1"
  for v in 1 2; do
    HEAD=30 PAT="== grpo|GPU busy|  [0-9]" t profile-f32-v$v 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 perf=vload=$v
    PAT="== pretrain|tokens/s" t pretrain-v$v 30 deno run -A "$J/profile.js" pretrain 16 1024 16 perf=vload=$v
  done
  ;;
dbuf)
  # After units (fifth session, call N): the f32 128-tile kernel double-buffered (switch dbuf=1: two tiles per operand,
  # the next step's vec4 loads in flight during the arithmetic, one barrier per step) against dbuf=0 in the f32 step,
  # with the split of the 896-wide products again (wideSplit 1 and 2 beside the default 3), beside the q4 step and
  # PyTorch + PEFT; the PyTorch cross-check under dbuf=1; the f32 step's per-grid profile and pretraining under both.
  crosscheck RLVR_PERF=dbuf=1
  t torch 45 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 45 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step budget=35 out="$OUT/q4.json"
  t f32 90 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=80 out="$OUT/f32.json" "variants=dbuf=1;dbuf=1,wideSplit=1;dbuf=1,wideSplit=2;dbuf=0"
  for v in 0 1; do
    HEAD=30 PAT="== grpo|GPU busy|  [0-9]" t profile-f32-db$v 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 perf=dbuf=$v
    PAT="== pretrain|tokens/s" t pretrain-db$v 30 deno run -A "$J/profile.js" pretrain 16 1024 16 perf=dbuf=$v
  done
  ;;
exp)
  # After dbuf (fifth session, call O): the f32 step under the loader and grid-order experiments (switches vops, kload,
  # group: vec4 loads of one operand only, the q4 kernel's two-threads-a-row mapping for k-fastest operands, tile rows
  # in groups), beside the q4 step and PyTorch + PEFT, and the per-grid profile of the q4 kernel's mapping.
  t torch 45 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 45 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step budget=35 out="$OUT/q4.json"
  t f32 150 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=140 out="$OUT/f32.json" "variants=vops=a;vops=b;kload=row;vops=b,kload=row;group=4;group=8;group=16;vops=ab"
  for v in "kload=row" "group=8"; do
    HEAD=30 PAT="== grpo|GPU busy|  [0-9]" t "profile-f32-$v" 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 "perf=$v"
  done
  t q4-again 45 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step budget=35 out="$OUT/q4-again.json"
  ;;
embed)
  # After exp (fifth session, call P): pretraining with the embedding gradient through links (embedBack=links, the new
  # default) against the earlier scan, with its per-kernel profile; the f32 and q4 steps alternated twice on one machine
  # (calls M-O put f32 2.3% behind q4 twice and 0.4% ahead once), beside PyTorch + PEFT and its full fine-tuning of the
  # demo shape.
  for e in links scan; do
    HEAD=16 PAT="== pretrain|tokens/s|GPU busy|  [0-9]" t pretrain-$e 40 deno run -A "$J/profile.js" pretrain 16 1024 16 perf=embedBack=$e
  done
  t torch 45 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  for i in 1 2; do
    t q4-$i 45 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step budget=35 out="$OUT/q4-$i.json"
    t f32-$i 45 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=35 out="$OUT/f32-$i.json"
  done
  PAT="tokens/s" t torch-pretrain 60 python3 bench/torch/pretrain.py --out "$OUT"
  ;;
attn)
  # After embed (fifth session, call Q): the attention kernels computing several scores per thread from one key (query)
  # vec4 read (bitwise the earlier results), the forward at 64 query rows a workgroup (attnRows=4) against 32; the
  # pretraining step's and the GRPO steps' per-kernel profiles, beside PyTorch + PEFT.
  # Run twice: call Q ran a first version (not committed) that kept the scores in dynamically indexed arrays (slower:
  # local memory, attnRows=4 the default); call R
  # with named accumulators, attnRows=2 the default.
  crosscheck
  for r in 2 4; do
    HEAD=12 PAT="== pretrain|tokens/s|GPU busy|  [0-9]" t pretrain-r$r 40 deno run -A "$J/profile.js" pretrain 16 1024 16 perf=attnRows=$r
  done
  t torch 45 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 45 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step,recompute budget=35 out="$OUT/q4.json"
  t f32 45 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=35 out="$OUT/f32.json" "variants=attnRows=4"
  HEAD=14 PAT="== grpo|GPU busy|  [0-9]" t profile-q4 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1
  PAT="tokens/s" t torch-pretrain 60 python3 bench/torch/pretrain.py --out "$OUT"
  ;;
final5)
  # The fifth session's last call (2026-12-02): everything of issue 16 at 62b8ff9 (attention's probabilities once and
  # delta by 16 threads, the links embedding gradient): the PyTorch cross-check, pretraining against PyTorch full
  # fine-tuning, the 0.5B q4 step (stored, recomputed, the T and B sweep) and the f32 step against PyTorch + PEFT, their
  # per-kernel profiles, the demo and 1.5B shapes against PyTorch + PEFT.
  crosscheck
  HEAD=14 PAT="== pretrain|tokens/s|GPU busy|  [0-9]" t pretrain 40 deno run -A "$J/profile.js" pretrain 16 1024 16
  PAT="tokens/s" t torch-pretrain 60 python3 bench/torch/pretrain.py --out "$OUT"
  t torch 60 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --sweep-iters 2 --attn eager
  t q4 110 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step,recompute sweep=1 budget=100 out="$OUT/q4.json"
  t f32 40 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=30 out="$OUT/f32.json"
  for q in 1 0; do
    HEAD=14 PAT="== grpo|GPU busy|  [0-9]" t profile-q$q 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=$q
  done
  t torch-demo 40 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager --preset demo --name train-demo.json
  t demo 40 deno run -A "$J/train.js" demo 8 768 16 1 4 step budget=30 out="$OUT/demo.json"
  t torch-15b 60 python3 bench/torch/train.py --out "$OUT" --iters 3 --warmup 1 --no-sweep --attn eager --preset qwen2.5-1.5b --name train-15b.json
  t q4-15b 110 deno run -A "$J/train.js" qwen2.5-1.5b 8 768 16 1 2 step budget=100 out="$OUT/q4-15b.json"
  ;;
named)
  # Prepared after final5 (not run: the session's device time ran out): the attention kernels' per-thread state in
  # named registers (switch attnNamed=1) against the arrays, in pretraining's profile and the 0.5B q4 step.
  for n in 1 0; do
    HEAD=6 PAT="== pretrain|tokens/s|GPU busy|attention" t pretrain-n$n 30 deno run -A "$J/profile.js" pretrain 16 1024 16 perf=attnNamed=$n
  done
  t q4 40 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step budget=30 out="$OUT/q4.json" "variants=attnNamed=1"
  ;;
attn2)
  # Prepared 2026-12 (issue 16, not run yet): the register-blocked attention backward (switch attnBwd=blocked:
  # attention_bwd_dq_rb.wgsl, attention_bwd_dkv_rb.wgsl) and forward (attnFwd=blocked: attention_rb.wgsl) against
  # today's kernels (lanes/lanes), the backward alone, with the forward, and with attnNamed=1, in pretraining's
  # per-kernel profile (the 150k tok/s goal) and the 0.5B q4 step. About 4 minutes.
  for p in attnBwd=lanes,attnFwd=lanes attnBwd=blocked attnBwd=blocked,attnFwd=blocked attnBwd=blocked,attnNamed=1; do
    HEAD=8 PAT="== pretrain|tokens/s|GPU busy|attention" t "pretrain-${p//[=,]/-}" 30 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"
  done
  t q4 60 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step budget=50 out="$OUT/q4.json" "variants=attnBwd=blocked;attnBwd=blocked,attnFwd=blocked;attnBwd=blocked,attnNamed=1"
  # The PyTorch cross-check with both blocked kernels on (what making them the default needs); ATTN2_CHECK=0 skips it.
  [ "${ATTN2_CHECK:-1}" = 1 ] && crosscheck RLVR_PERF=attnBwd=blocked,attnFwd=blocked
  ;;
now6)
  # The sixth session's call (2026-12-04): issue 16's figures at HEAD (both register-blocked attention kernels the
  # default) in one call, no kernel change: pretraining's whole per-kernel profile beside PyTorch's full fine-tuning,
  # the per-shape product table of the 0.5B step (TFLOP/s of every kernel on each product), the 0.5B q4 step (stored,
  # recomputed) and the f32 step beside PyTorch + PEFT, and the q4 step's per-kernel profile. About 6 minutes.
  HEAD=60 PAT="== pretrain|tokens/s|GPU busy|  [0-9]" t pretrain 40 deno run -A "$J/profile.js" pretrain 16 1024 16
  HEAD=60 PAT="^\\| " t shapes 90 deno run -A "$J/profile.js" shapes tokens=6144 iters=20
  t torch 60 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 70 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step,recompute budget=60 out="$OUT/q4.json"
  t f32 40 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 4 step budget=30 out="$OUT/f32.json"
  PAT="tokens/s" t torch-pretrain 60 python3 bench/torch/pretrain.py --out "$OUT"
  HEAD=40 PAT="== grpo|GPU busy|  [0-9]" t profile-q4 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1
  ;;
dq)
  # Prepared 2026-12-04 (issue 16; ran as call E the same day, 122 s, docs/benchmarks.md): dq fused into the dk/dv kernel (switch attnDq=fused: the dk/dv kernel
  # writes each key block's dS K to a scratch, a reduce sums them; delta by its own pass) against the dq kernel, in
  # pretraining's per-kernel profile (the 150k tok/s goal: the dq kernel was 14.0 ms of 112.3) and the 0.5B q4 step
  # (stored and recomputed: the scratch adds ~275 MiB at 8 x 768), with the PyTorch cross-check under the switch. About
  # 3 minutes. Measured 2026-12-04 in two shorter calls (docs/benchmarks.md, C and D: all but the recomputed step and the
  # profile), after which attnDq=fused became the default; `rank` measures the recomputed step at the defaults.
  for p in attnDq=kernel attnDq=fused; do
    HEAD=12 PAT="== pretrain|tokens/s|GPU busy|attention" t "pretrain-${p//[=,]/-}" 30 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"
  done
  t q4 70 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step,recompute budget=60 out="$OUT/q4.json" "variants=attnDq=fused"
  t q4-fused-rc 40 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 recompute budget=30 out="$OUT/q4-fused-rc.json" perf=attnDq=fused
  HEAD=16 PAT="== grpo|GPU busy|  [0-9]" t profile-q4-fused 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1 perf=attnDq=fused
  [ "${DQ_CHECK:-1}" = 1 ] && crosscheck RLVR_PERF=attnDq=fused
  ;;
rank)
  # Prepared 2026-12-04 (issue 16, not run yet): the LoRA rank products on the streaming kernel (switch rank=stream:
  # matmul_rank.wgsl) against the narrow kernel and its split-K reduces (672 + ~672 dispatches, 33.8 + ~14 ms of the q4
  # step on 2026-12-04). The per-shape table at the defaults (rank=narrow; its forced "rank" column is what rank=stream
  # runs, and it shows the K <= 128 choice of tile64 on the k/v dx, with and without its LoRA tail), the rank rows
  # again under rank=stream, the 0.5B q4 step with the switch beside PyTorch + PEFT, the step's per-kernel profile under
  # the switch (the narrow and reduce lines against matmul_rank_*), and the PyTorch cross-check under the switch (what
  # making it the default needs; RANK_CHECK=0 skips it). About 5 minutes: run with H200_TOTAL_S=330.
  HEAD=60 PAT="^\\| " t shapes 80 deno run -A "$J/profile.js" shapes tokens=6144 iters=20
  HEAD=20 PAT="^\\| " t shapes-stream 30 deno run -A "$J/profile.js" shapes tokens=6144 iters=20 only=rank perf=rank=stream
  # The stored and recomputed q4 steps at the defaults (dq fused since 953e448: the recomputed step's time and memory with
  # its scratch are not measured yet) and the stored one under rank=stream; the f32 step; pretraining at the defaults
  # (dq fused and the K <= 128 choice, 28f9b59, which moves its k/v dx to tile64) and under rank=stream.
  t q4 80 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 3 step,recompute budget=70 out="$OUT/q4.json" "variants=rank=stream"
  t f32 30 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 0 3 step budget=25 out="$OUT/f32.json"
  for p in rank=narrow rank=stream; do
    HEAD=4 PAT="== pretrain|tokens/s|GPU busy" t "pretrain-${p//[=,]/-}" 20 deno run -A "$J/profile.js" pretrain 16 1024 16 "perf=$p"
  done
  HEAD=30 PAT="== grpo|GPU busy|  [0-9]" t profile-q4-stream 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1 perf=rank=stream
  t torch 60 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  [ "${RANK_CHECK:-1}" = 1 ] && crosscheck RLVR_PERF=rank=stream
  ;;
xa)
  # Prepared 2026-12-04 (issue 16, not run yet): the switch rank=xa (the rank kernel for x A^T alone, where call E
  # measured it twice as fast; narrow for dy B, dA, dB) in the 0.5B q4 step beside the default and PyTorch + PEFT, and its
  # profile. About 2 minutes: H200_TOTAL_S=150.
  t torch 45 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --attn eager
  t q4 60 deno run -A "$J/train.js" qwen2.5-0.5b 8 768 16 1 4 step budget=50 out="$OUT/q4.json" "variants=rank=xa"
  HEAD=30 PAT="== grpo|GPU busy|  [0-9]" t profile-q4-xa 40 deno run -A "$J/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1 perf=rank=xa
  ;;
*) echo "h200-check.sh: one of trainer, sampling, verify, next, final, probe, products, rows, auto, units, dbuf, exp, embed, attn, final5, named, attn2, now6, dq, rank, xa, regs, t256, ceiling, ceiling2, t128h, final6, wT, tk32, cmp, ladder, t96, tq, scale, tenth, kv, defaults12, defaults12min, st4, defaults13, next14, got $WHAT"; exit 2 ;;
esac
pack
echo "h200-check.sh $WHAT: done in $(( $(date +%s) - S0 )) s"
