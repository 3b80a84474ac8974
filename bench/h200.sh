#!/usr/bin/env bash
# The GPU-machine batch: our log-probs and LoRA gradients against transformers + peft, then the decode
# and training benchmarks, ours and PyTorch's, on Qwen2.5-0.5B-shaped random weights. Ours run on Dawn
# (Chrome's engine, dawn.node; the product's figure) by default; ENGINES="dawn deno" puts Deno's wgpu
# beside it in the same call (parts decode-<engine>, train-<engine>).
#
# Before (here, the CPU machine):  bash ../shared/device/prepare.sh (Deno, Vulkan loader, Dawn's dawn.node xz'd into
#                                  .device/dawn) and bash bench/h200-prep.sh -> .devwork/h200 (bundles, gzip'd ORT wasm, fixtures; ~10 MiB)
# carry:  [".device", ".devwork/h200"]                           (~45 MiB; not all of .devwork)
# run:    source .device/remote-setup.sh; bash bench/h200.sh     (OUT defaults to $OUT, else /tmp/h200-out)
# Needs there: deno on PATH (remote-setup.sh), python3 with torch + transformers + peft + numpy, nvidia-smi (optional).
#
# Parts, in order, each under `timeout` (its limit, cut to what is left of H200_TOTAL_S, default 530 s;
# limits 70 + 50 + 100 + 75 + 130 + 150 = 575 s, more than the total: ours-check, check and torch-train end
# well inside theirs on the H200 (9, 22 and 27 s on 2026-11-29); decode and train fill theirs by design):
#   ours-check   rlvr logprobs (ort f32 / f32 no adapter / f16 / q4, webgpu f32 / f32 no adapter / f16 / q4) and rlvr lora-grad
#                on the three tiny fixtures (27 runs, nproc/2 at once: separate processes, tiny models) -> $OUT/ours/
#   check        bench/torch/check.py: transformers + peft in float64, table + check.json
#   torch-gen    bench/torch/generate.py: generate, bf16, sdpa, 8 and 64 x 256 new, prompt 128 -> generate.json
#   torch-train  bench/torch/train.py: PEFT LoRA r=16 x 7, bf16 autocast, eager, 8 x 768 + sweep -> train.json
#   decode       bench/decode.bench.ts (bundle) per engine of ENGINES (parts decode-dawn, decode-deno): q4, 8 and 64 x 256
#                new after 128, every sampler (DECODE_SAMPLERS, default cpu,gpu,captured; Deno's wgpu: WGPU_SAMPLERS,
#                default gpu,captured) in one process                                                 -> decode-<engine>.json
#   decode-small (issue #17, not in the default PARTS) the "small" 4.9M f32 preset on Dawn, then wgpu, every sampler
#                (host cost per dispatch)                                                             -> decode-small-{dawn,deno}.json
#   grpo         `rlvr run grpo-step.json` (the demo notebook's GRPO cell, batchQuestions 4, G 8) on a random
#                demo-shaped model, GRPO_STEP_N steps (default 6) once per sampler in GRPO_SAMPLERS (default
#                captured cpu), Dawn; sample / score / train per step                              -> grpo-<sampler>.metrics.jsonl
#   grpo-05b     the same at Qwen2.5-0.5B's shape, q4 (grpo-step-q4.json), GRPO_05B_SAMPLERS (default captured), 3 steps
#   train        bench/train.bench.ts (bundle): q4 projections, LoRA r=16 x 7, 8 x 768 (stored, then recomputed
#                activations; kernels auto, then tile64)
#                + sweep; tokens/s, ~model TFLOP/s, peak buffer bytes (own accounting) per shape -> train-bench.json
# Logs: $OUT/<part>.log (all packed into $OUT/h200-results.tgz at the end: the device tool returns 8 files); GPU memory: nvidia-smi memory.used sampled every 200 ms during each part
# ($OUT/<part>.mem; peak minus the reading before the part, in the summary); $OUT/summary.json at the end,
# and a short summary table printed last (parts, cross-check errors, training ours vs torch, decode).
# PARTS="check torch-gen" bash bench/h200.sh runs a subset (ours-check runs with check).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/h200-out}
mkdir -p "$OUT/ours"
H=.devwork/h200
RUN=${H200_RUN_DIR:-/tmp/h200-run}
JS=$RUN/bin/a/b
FX=$RUN/fixtures
TOTAL=${H200_TOTAL_S:-530}
PARTS=${PARTS:-"ours-check check torch-gen torch-train decode train"}
# The engines of our parts ("dawn", "deno" or both, in order); the first is the product's figure in h200.json.
ENGINES=${ENGINES:-dawn}
# The engine of the ours-check runs (log-probs and LoRA gradients against transformers).
CHECK_ENGINE=${CHECK_ENGINE:-${ENGINES%% *}}
# Limits (s) of the per-engine parts, each cut to what is left of the total.
DECODE_S=${DECODE_S:-130}
TRAIN_S=${TRAIN_S:-150}
START=$(date +%s)
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
STATUS=$OUT/parts.tsv
: > "$STATUS"

left() { echo $(( TOTAL - ($(date +%s) - START) )); }
gpu_mem() { command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | head -1 || echo ""; }

# part NAME LIMIT_S command...: runs under timeout with the GPU-memory sampler, records rc, seconds, memory.
part() {
  local name=$1 limit=$2; shift 2
  case " $PARTS " in *" $name "*) ;; *) return 0 ;; esac
  local l; l=$(left)
  local t=$(( limit < l - 5 ? limit : l - 5 ))
  if [ "$t" -lt 15 ]; then
    echo "== $name: skipped (${l} s left)" | tee -a "$OUT/run.log"
    printf '%s\tskipped\t0\t\t\n' "$name" >> "$STATUS"
    return 0
  fi
  echo "== $name (limit ${t} s, $(date -u +%T))" | tee -a "$OUT/run.log"
  local base; base=$(gpu_mem)
  local mon=""
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > "$OUT/$name.mem" 2>/dev/null &
    mon=$!
  fi
  local s; s=$(date +%s.%N)
  PART_LIMIT=$t timeout -k 10 "$t" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  local e; e=$(python3 -c "import time; print(round(time.time() - $s, 1))")
  [ -n "$mon" ] && kill "$mon" 2>/dev/null && wait "$mon" 2>/dev/null
  local peak=""
  [ -s "$OUT/$name.mem" ] && peak=$(sort -n "$OUT/$name.mem" | tail -1)
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$e" "$base" "$peak" >> "$STATUS"
  echo "   rc $rc in ${e} s; GPU memory.used before ${base:-?} MiB, peak ${peak:-?} MiB; log $OUT/$name.log" | tee -a "$OUT/run.log"
  tail -n 25 "$OUT/$name.log"
}

# Our side of the cross-check: one run (ARCH ENGINE DTYPE WITH_ADAPTER, or ARCH grad), log in $OUT/ours/ARCH/KEY.log.
ours_run() {
  local a=$1 d=$FX/$1 o=$OUT/ours/$1
  mkdir -p "$o"
  if [ "$2" = grad ]; then
    { echo "-- $a lora-grad"; timeout --foreground 100 deno run -A "$JS/rlvr.js" lora-grad --webgpu "$CHECK_ENGINE" --model "$d/model" --adapter "$d/adapter" --batch "$d/batch.json" --out "$o/grad.safetensors" 2>&1; echo "exit $?"; } > "$o/lora-grad.log" 2>&1
    return
  fi
  local key="$2-$3"; [ "$4" = 0 ] && key="$key-base"
  local ad=(); [ "$4" = 1 ] && ad=(--adapter "$d/adapter")
  { echo "-- $a logprobs $key"; timeout --foreground 100 deno run -A "$JS/rlvr.js" logprobs --webgpu "$CHECK_ENGINE" --model "$d/model" --ids "$d/ids.json" --engine "$2" --dtype "$3" ${ad[@]+"${ad[@]}"} --out "$o/logprobs-$key.json" 2>&1 | grep -v "VerifyEachNodeIsAssignedToAnEp"; echo "exit ${PIPESTATUS[0]}"; } > "$o/$key.log" 2>&1
}
# All 27 runs, half as many at once as there are cores (each is a separate process on a tiny model;
# --foreground keeps each inner timeout in the part's process group, so the part's own timeout ends them all).
ours_check() {
  local jobs=$(( $(nproc) / 2 )); [ "$jobs" -lt 1 ] && jobs=1
  for a in qwen2 llama qwen3; do
    for r in "ort f32 1" "ort f32 0" "ort f16 1" "ort q4 1" "webgpu f32 1" "webgpu f32 0" "webgpu f16 1" "webgpu q4 1" "grad"; do echo "$a $r"; done
  done | xargs -P "$jobs" -L 1 bash -c 'ours_run "$@"' _
  cat "$OUT"/ours/*/*.log
  ls -la "$OUT"/ours/*/
}

echo "h200.sh: OUT=$OUT, parts: $PARTS, total budget ${TOTAL} s; $(date -u)" | tee "$OUT/run.log"
# h200-prep.sh gzips the wasm files (the carry limit): a copy of .devwork/h200 in $RUN, unpacked there
# (the bundles find the wasm files relative to themselves), so .devwork/h200 stays as carried.
rm -rf "$RUN" && cp -r "$H" "$RUN" || { echo "h200.sh: cannot copy $H to $RUN" | tee -a "$OUT/run.log"; exit 1; }
find "$RUN" -name '*.gz' | while read -r z; do
  if command -v gunzip >/dev/null; then gunzip -f "$z"; else python3 -c "import gzip,shutil,sys,os; shutil.copyfileobj(gzip.open(sys.argv[1]), open(sys.argv[1][:-3], 'wb')); os.remove(sys.argv[1])" "$z"; fi \
    || echo "h200.sh: could not unpack $z" | tee -a "$OUT/run.log"
done
# The demo data for the GRPO parts: the recipe's "demo" source reads public/demo three folders above the bundle.
[ -f "$RUN/demo.tar.xz" ] && tar -C "$RUN" -xJf "$RUN/demo.tar.xz"
(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; deno --version | head -1; python3 --version) 2>&1 | tee -a "$OUT/run.log"

case " $PARTS " in *" check "*) PARTS="$PARTS ours-check" ;; esac
export -f ours_run ours_check
export OUT JS FX RUN CHECK_ENGINE
part ours-check "${OURS_CHECK_S:-70}" bash -c ours_check
part check 50 python3 bench/torch/check.py --fixtures "$FX" --ours "$OUT/ours" --out "$OUT"
# TORCH_GEN_REPS (default 3): the median of that many full generates after the warm-up (the first full run was 3x slower).
part torch-gen 150 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps "${TORCH_GEN_REPS:-${TORCH_REPS:-3}}"
part torch-train 75 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --sweep-iters 2 --attn eager
# decode: budget (the script's own stop) 10 s under the part's limit so it writes its partial figures itself.
# DECODE_ARGS / TRAIN_ARGS override the shapes (a local dry run uses the tiny preset).
export DECODE_ARGS=${DECODE_ARGS:-"qwen2.5-0.5b q4 8,64 1 128 256 0"}
# train modes: the step with stored activations (the issue's figure), then with recomputed ones (what fits 3 GB).
export TRAIN_ARGS=${TRAIN_ARGS:-"qwen2.5-0.5b 8 768 16 1 1 step,recompute"}
# Issue #17: the samplers side by side in each decode-<engine> part (cpu: logits read back; gpu: token choice on the
# GPU; captured: graph capture too); Deno's wgpu runs WGPU_SAMPLERS.
export DECODE_SAMPLERS=${DECODE_SAMPLERS:-cpu,gpu,captured}
part decode-small 200 bash -c 'for e in dawn deno; do deno run -A "$JS/decode.js" --webgpu $e small f32 8,64 1 128 256 0 "$OUT/decode-small-$e.json" $((PART_LIMIT / 2 - 10)) sampler=$DECODE_SAMPLERS; done'
# The GRPO step by phase: rlvr run of the demo notebook's GRPO cell on a random model written there (random weights
# rarely end a sample early: every sample runs the 160 tokens, an upper bound for sampling; their SQL fails fast).
grpo_runs() {  # MODEL_DIR SHAPE NOTEBOOK STEPS SAMPLERS TAG
  local dir=$1 shape=$2 nb=$3 steps=$4 samplers=$5 tag=$6
  [ -f "$dir/config.json" ] || deno run -A "$JS/demo-shape.js" "$dir" "$RUN/demo-tok" "$shape" | tail -1
  for s in $samplers; do
    rm -rf "/tmp/run-$tag-$s"
    echo "-- $tag sampler $s"
    ( cd "$RUN" && RLVR_SAMPLER=$s deno run -A bin/a/b/rlvr.js run "$RUN/$nb" --webgpu dawn --out "/tmp/run-$tag-$s" --model "$dir" --seed 1 --max-steps "$steps" 2>&1 | grep -v "W:onnxruntime" | tail -3 )
    cp "/tmp/run-$tag-$s/metrics.jsonl" "$OUT/$tag-$s.metrics.jsonl" 2>/dev/null
    python3 - "$OUT/$tag-$s.metrics.jsonl" "$tag $s" <<'PY'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()] if os.path.exists(sys.argv[1]) else []
rows = [r for r in rows if r.get("phase") == "grpo"]
for r in rows:
    m = r.get("ms", {}); print(f"  {sys.argv[2]} step {r['step']}: sample {m.get('sample', 0)/1000:.2f} s, score {m.get('score', 0)/1000:.2f} s, train {m.get('train', 0)/1000:.2f} s")
if len(rows) > 1:
    mean = {k: sum(r.get("ms", {}).get(k, 0) for r in rows[1:]) / (len(rows) - 1) / 1000 for k in ("sample", "score", "train")}
    print(f"  {sys.argv[2]} mean of steps 2-{len(rows)}: sample {mean['sample']:.2f} s, score {mean['score']:.2f} s, train {mean['train']:.2f} s, total {sum(mean.values()):.2f} s")
PY
  done
}
export -f grpo_runs
part grpo "${GRPO_S:-330}" bash -c 'grpo_runs /tmp/dsm demo grpo-step.json "${GRPO_STEP_N:-6}" "${GRPO_SAMPLERS:-captured cpu}" grpo'
part grpo-05b "${GRPO_05B_S:-330}" bash -c 'grpo_runs /tmp/q05 qwen2.5-0.5b grpo-step-q4.json 3 "${GRPO_05B_SAMPLERS:-captured}" grpo-05b'
# train: the main step under the default kernel choice, again with every product on tile64 (TRAIN_KERNELS), then the
# sweep (TRAIN_SWEEP=0 leaves it out). Each engine of ENGINES in turn; "decode" and "train" in PARTS select them.
export TRAIN_KERNELS=${TRAIN_KERNELS:-auto,tile64}
export TRAIN_SWEEP=${TRAIN_SWEEP:-1}
for e in $ENGINES; do
  case " $PARTS " in *" decode "*) PARTS="$PARTS decode-$e" ;; esac
  case " $PARTS " in *" train "*) PARTS="$PARTS train-$e" ;; esac
done
for e in $ENGINES; do
  export ENGINE=$e
  SAMPLERS=$DECODE_SAMPLERS; [ "$e" = deno ] && SAMPLERS=${WGPU_SAMPLERS:-gpu,captured}
  export SAMPLERS
  part "decode-$e" "$DECODE_S" bash -c 'deno run -A "$JS/decode.js" --webgpu "$ENGINE" $DECODE_ARGS "$OUT/decode-$ENGINE.json" $((PART_LIMIT - 10)) sampler=$SAMPLERS'
done
for e in $ENGINES; do
  export ENGINE=$e
  part "train-$e" "$TRAIN_S" bash -c 'deno run -A "$JS/train.js" --webgpu "$ENGINE" $TRAIN_ARGS sweep=$TRAIN_SWEEP sweepIters=1 kernels=$TRAIN_KERNELS budget=$((PART_LIMIT - 15)) out="$OUT/train-bench-$ENGINE.json"'
done

# summary.json (each part's status and memory, plus every JSON the parts wrote), h200.json (the figures of
# record: engine, commands, ours per engine, PyTorch's) and the short tables, printed last (with every
# sampler of each decode JSON beside transformers).
ENGINES="$ENGINES" DECODE_ARGS="$DECODE_ARGS" TRAIN_ARGS="$TRAIN_ARGS" python3 bench/h200-summary.py "$OUT" "$STATUS"
echo "h200.sh: done in $(( $(date +%s) - START )) s; $OUT/summary.json" | tee -a "$OUT/run.log"
# The device tool returns at most 8 files from $OUT: pack everything into one archive beside summary.json.
( cd "$OUT" && tar czf /tmp/h200-results.tgz --exclude=h200-results.tgz . && mv /tmp/h200-results.tgz "$OUT/h200-results.tgz" ) \
  && find "$OUT" -mindepth 1 -maxdepth 1 ! -name h200-results.tgz ! -name summary.json ! -name h200.json ! -name run.log -exec rm -rf {} + \
  && echo "h200.sh: every log and JSON in $OUT/h200-results.tgz (only it, summary.json, h200.json and run.log are left in $OUT)"
