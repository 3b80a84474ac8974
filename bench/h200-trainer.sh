#!/usr/bin/env bash
# The trainer-speed batch of issue 16 on the GPU machine, in one call: PyTorch + PEFT's step, ours on
# Dawn (the issue's step q4 stored and recomputed, f32, every speed switch old vs new), the per-kernel
# profiles, the per-shape table, the demo model's pretraining step, the T / B / model-size sweep, and
# the exact call counts. Each part under `timeout`, logged to $OUT/<part>.log and packed into
# $OUT/trainer-results.tgz at the end (the device tool returns 8 files).
#
# Before (here):  bash ../shared/device/prepare.sh (Deno, Vulkan loader, Dawn into .device/dawn) and
#                 bash bench/h200-prep.sh  -> .devwork/h200 (bundles incl. profile.js and calls.js)
# carry:          [".device", ".devwork/h200"]
# run:            source .device/remote-setup.sh; bash bench/h200-trainer.sh      (PARTS="step shapes" for a subset)
# The limits add up to 760 s, over one 10-minute command: run it as two calls,
#   PARTS="torch step f32 shapes" and PARTS="pretrain sweep lean calls" (each well under TRAINER_TOTAL_S, default 560 s);
# parts that no longer fit the total are skipped and say so.
#
# Parts (limit in s):
#   torch      (100) bench/torch/train.py: 0.5B 8 x 768 (median of 5) + T / B sweep; the same step with logits of the
#                    completion positions only (--logits-to-keep, as TRL and our headRows); demo and 1.5B shapes at 8 x 768
#   step       (150) train.js 0.5B q4 8 x 768: stored (the issue's step) and recomputed, then the stored step under
#                    every earlier behaviour at once (perf=old) and each switch back alone (headRows=0: the head on every row)
#   lean       (45)  train.js 0.5B q4 8 x 768 recomputed with the earlier full re-run of each layer (recomputeLean=0)
#   f32        (90)  train.js 0.5B f32 projections 8 x 768 stored (kernels auto, then tile128p) + profile.js grpo f32 and q4 per kernel
#   shapes     (120) profile.js shapes: every product of a 0.5B layer, f32 and q4, every kernel, GPU-timed
#   pretrain   (45)  profile.js pretrain 16 1024 16 (the demo model, full fine-tuning), new and perf=old
#   sweep      (180) train.js 0.5B q4: T 256..2048 at B 8, B 1..16 at T 512; demo shape and 1.5B shape at 8 x 768
#   calls      (40)  calls.js: the calls per step (passes, bind groups, buffers) with the H200's limits, new and old
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/h200-trainer-out}
mkdir -p "$OUT"
H=.devwork/h200
RUN=${H200_RUN_DIR:-/tmp/h200-run}
JS=$RUN/bin/a/b
TOTAL=${TRAINER_TOTAL_S:-560}
PARTS=${PARTS:-"torch step lean f32 shapes pretrain sweep calls"}
START=$(date +%s)
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
# Dawn is the product's engine; unrounded timestamp queries for the per-kernel and per-shape times.
export RLVR_WEBGPU=dawn
export RLVR_DAWN_OPTIONS=${RLVR_DAWN_OPTIONS:-"disable-dawn-features=timestamp_quantization"}
left() { echo $(( TOTAL - ($(date +%s) - START) )); }

part() {
  local name=$1 limit=$2; shift 2
  case " $PARTS " in *" $name "*) ;; *) return 0 ;; esac
  local l; l=$(left)
  local t=$(( limit < l - 5 ? limit : l - 5 ))
  if [ "$t" -lt 15 ]; then echo "== $name: skipped (${l} s left)" | tee -a "$OUT/run.log"; return 0; fi
  echo "== $name (limit ${t} s, $(date -u +%T))" | tee -a "$OUT/run.log"
  local s; s=$(date +%s)
  PART_LIMIT=$t timeout -k 10 "$t" bash -c "$*" > "$OUT/$name.log" 2>&1
  echo "   rc $? in $(( $(date +%s) - s )) s" | tee -a "$OUT/run.log"
  grep -E "^\| |tokens/s|TF/s|passes|dispatches|GPU busy|PEFT|B=.*T=.*ms" "$OUT/$name.log" | tail -n 40
}

echo "h200-trainer.sh: OUT=$OUT, parts: $PARTS, total ${TOTAL} s; $(date -u)" | tee "$OUT/run.log"
if [ ! -d "$RUN" ]; then
  cp -r "$H" "$RUN" && find "$RUN" -name '*.gz' -exec gunzip -f {} + 2>/dev/null
fi
(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; deno --version | head -1) 2>&1 | tee -a "$OUT/run.log"
export OUT JS

part torch 100 'python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --sweep-iters 2 --attn eager &&
  python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --no-sweep --logits-to-keep --name train-keep.json &&
  python3 bench/torch/train.py --out "$OUT" --iters 3 --warmup 1 --no-sweep --preset demo --name train-demo.json &&
  python3 bench/torch/train.py --out "$OUT" --iters 3 --warmup 1 --no-sweep --preset qwen2.5-1.5b --name train-1.5b.json'
part step 150 'deno run -A "$JS/train.js" qwen2.5-0.5b 8 768 16 1 2 step,recompute budget=$((PART_LIMIT - 10)) out="$OUT/step.json" \
  "variants=old;headRows=0;passes=split;bindCache=0;arena=0;submit=once;q4=tile64;splitK=transA;subgroups=0;wideSplit=1"'
part lean 45 'deno run -A "$JS/train.js" qwen2.5-0.5b 8 768 16 1 2 recompute perf=recomputeLean=0 out="$OUT/lean.json"'
part f32 90 'deno run -A "$JS/train.js" qwen2.5-0.5b 8 768 16 0 2 step kernels=auto,prefetch budget=40 out="$OUT/f32.json" &&
  deno run -A "$JS/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 &&
  deno run -A "$JS/profile.js" grpo 16 1024 4 qwen2.5-0.5b 8 768 q4=1'
part shapes 120 'deno run -A "$JS/profile.js" shapes tokens=6144 iters=20'
part pretrain 45 'deno run -A "$JS/profile.js" pretrain 16 1024 16 && deno run -A "$JS/profile.js" pretrain 16 1024 16 perf=old'
part sweep 180 'deno run -A "$JS/train.js" qwen2.5-0.5b 8 768 16 1 1 none sweep=1 sweepIters=1 budget=90 out="$OUT/sweep.json" &&
  deno run -A "$JS/train.js" demo 8 768 16 1 2 step out="$OUT/size-demo.json" &&
  deno run -A "$JS/train.js" qwen2.5-1.5b 8 768 16 1 1 step budget=50 out="$OUT/size-1.5b.json"'
part calls 40 'deno run -A "$JS/calls.js" what=grpo preset=qwen2.5-0.5b B=8 T=768 q4=1 dry=1 out="$OUT/calls-new.json" &&
  RLVR_PERF=old deno run -A "$JS/calls.js" what=grpo preset=qwen2.5-0.5b B=8 T=768 q4=1 dry=1 out="$OUT/calls-old.json" &&
  deno run -A "$JS/calls.js" what=pretrain B=16 T=1024 micro=16 dry=1'

echo "h200-trainer.sh: done in $(( $(date +%s) - START )) s" | tee -a "$OUT/run.log"
( cd "$OUT" && tar czf /tmp/trainer-results.tgz --exclude=trainer-results.tgz . && mv /tmp/trainer-results.tgz "$OUT/trainer-results.tgz" ) \
  && find "$OUT" -mindepth 1 -maxdepth 1 ! -name trainer-results.tgz ! -name run.log ! -name step.json ! -name sweep.json -exec rm -rf {} + \
  && echo "h200-trainer.sh: every log and JSON in $OUT/trainer-results.tgz"
