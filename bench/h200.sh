#!/usr/bin/env bash
# The GPU-machine batch for issues #4 and #5: our log-probs and LoRA gradients against transformers + peft,
# then the decode and training benchmarks, ours and PyTorch's, on Qwen2.5-0.5B-shaped random weights.
#
# Before (here, the CPU machine):  bash bench/h200-prep.sh      -> .devwork/h200 (bundles, ORT wasm, fixtures; ~29 MiB)
# carry:  [".device", ".devwork/h200"]                           (~59 MiB with the xz'd Deno; not all of .devwork)
# run:    source .device/remote-setup.sh; bash bench/h200.sh     (OUT defaults to $OUT, else /tmp/h200-out)
# Needs there: deno on PATH (remote-setup.sh), python3 with torch + transformers + peft + numpy, nvidia-smi (optional).
#
# Parts, in order, each under `timeout` (its limit, cut to what is left of H200_TOTAL_S, default 530 s):
#   ours-check   rlvr logprobs (ort f32 / f32 no adapter / f16 / q4, webgpu f32 / f32 no adapter / q4) and rlvr lora-grad
#                on the three tiny fixtures (24 runs, nproc/2 at once: separate processes, tiny models) -> $OUT/ours/
#   check        bench/torch/check.py: transformers + peft in float64, table + check.json
#   torch-gen    bench/torch/generate.py: generate, bf16, sdpa, 8 and 64 x 256 new, prompt 128 -> generate.json
#   torch-train  bench/torch/train.py: PEFT LoRA r=16 x 7, bf16 autocast, eager, 8 x 768 + sweep -> train.json
#   decode       bench/decode.bench.ts (bundle): q4, 8 and 64 x 256 new, prompt 128            -> decode.json
#   train        bench/train.bench.ts (bundle): q4 projections, LoRA r=16 x 7, 8 x 768 + sweep -> train-bench.json
# Logs: $OUT/<part>.log; GPU memory: nvidia-smi memory.used sampled every 200 ms during each part
# ($OUT/<part>.mem; peak minus the reading before the part, in the summary); $OUT/summary.json at the end.
# PARTS="check torch-gen" bash bench/h200.sh runs a subset (ours-check runs with check).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/h200-out}
mkdir -p "$OUT/ours"
H=.devwork/h200
JS=$H/bin/a/b
FX=$H/fixtures
TOTAL=${H200_TOTAL_S:-530}
PARTS=${PARTS:-"ours-check check torch-gen torch-train decode train"}
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
    { echo "-- $a lora-grad"; timeout --foreground 100 deno run -A "$JS/rlvr.js" lora-grad --model "$d/model" --adapter "$d/adapter" --batch "$d/batch.json" --out "$o/grad.safetensors" 2>&1; echo "exit $?"; } > "$o/lora-grad.log" 2>&1
    return
  fi
  local key="$2-$3"; [ "$4" = 0 ] && key="$key-base"
  local ad=(); [ "$4" = 1 ] && ad=(--adapter "$d/adapter")
  { echo "-- $a logprobs $key"; timeout --foreground 100 deno run -A "$JS/rlvr.js" logprobs --model "$d/model" --ids "$d/ids.json" --engine "$2" --dtype "$3" ${ad[@]+"${ad[@]}"} --out "$o/logprobs-$key.json" 2>&1 | grep -v "VerifyEachNodeIsAssignedToAnEp"; echo "exit ${PIPESTATUS[0]}"; } > "$o/$key.log" 2>&1
}
# All 24 runs, half as many at once as there are cores (each is a separate process on a tiny model;
# --foreground keeps each inner timeout in the part's process group, so the part's own timeout ends them all).
ours_check() {
  local jobs=$(( $(nproc) / 2 )); [ "$jobs" -lt 1 ] && jobs=1
  for a in qwen2 llama qwen3; do
    for r in "ort f32 1" "ort f32 0" "ort f16 1" "ort q4 1" "webgpu f32 1" "webgpu f32 0" "webgpu q4 1" "grad"; do echo "$a $r"; done
  done | xargs -P "$jobs" -L 1 bash -c 'ours_run "$@"' _
  cat "$OUT"/ours/*/*.log
  ls -la "$OUT"/ours/*/
}

echo "h200.sh: OUT=$OUT, parts: $PARTS, total budget ${TOTAL} s; $(date -u)" | tee "$OUT/run.log"
(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; deno --version | head -1; python3 --version) 2>&1 | tee -a "$OUT/run.log"

case " $PARTS " in *" check "*) PARTS="$PARTS ours-check" ;; esac
export -f ours_run ours_check
export OUT JS FX
part ours-check "${OURS_CHECK_S:-120}" bash -c ours_check
part check 60 python3 bench/torch/check.py --fixtures "$FX" --ours "$OUT/ours" --out "$OUT"
part torch-gen 60 python3 bench/torch/generate.py --out "$OUT" --attn sdpa --batches 8,64 --new 256 --prompt 128
part torch-train 75 python3 bench/torch/train.py --out "$OUT" --iters 5 --warmup 2 --sweep-iters 2 --attn eager
# decode: budget (the script's own stop) 10 s under the part's limit so it writes its partial figures itself.
# DECODE_ARGS / TRAIN_ARGS override the shapes (a local dry run uses the tiny preset).
export DECODE_ARGS=${DECODE_ARGS:-"qwen2.5-0.5b q4 8,64 1 128 256 0"}
export TRAIN_ARGS=${TRAIN_ARGS:-"qwen2.5-0.5b 8 768 16 1 1 step"}
part decode 200 bash -c 'deno run -A "$JS/decode.js" $DECODE_ARGS "$OUT/decode.json" $((PART_LIMIT - 10))'
part train 200 bash -c 'deno run -A "$JS/train.js" $TRAIN_ARGS sweep=1 sweepIters=1 budget=$((PART_LIMIT - 15)) out="$OUT/train-bench.json"'

# summary.json: each part's status and memory, plus the JSON files the parts wrote.
python3 - "$OUT" "$STATUS" <<'PY'
import json, os, sys
out, status = sys.argv[1], sys.argv[2]
parts = {}
for line in open(status):
    f = line.rstrip("\n").split("\t")
    name, rc, secs, base, peak = (f + [""] * 5)[:5]
    parts[name] = {"rc": rc, "seconds": float(secs) if secs else None, "gpuMemUsedBeforeMiB": int(base) if base.isdigit() else None,
                   "gpuMemUsedPeakMiB": int(peak) if peak.isdigit() else None}
    if parts[name]["gpuMemUsedPeakMiB"] is not None and parts[name]["gpuMemUsedBeforeMiB"] is not None:
        parts[name]["gpuMemPeakOverBaseMiB"] = parts[name]["gpuMemUsedPeakMiB"] - parts[name]["gpuMemUsedBeforeMiB"]
    if rc == "124" or rc == "137":
        parts[name]["note"] = "stopped by its time limit"
summary = {"parts": parts}
for key, fn in [("check", "check.json"), ("torchGenerate", "generate.json"), ("torchTrain", "train.json"),
                ("oursDecode", "decode.json"), ("oursTrain", "train-bench.json")]:
    p = os.path.join(out, fn)
    try:
        summary[key] = json.load(open(p))
    except Exception as e:  # noqa: BLE001
        summary[key] = {"missing": f"{fn}: {e!r}"}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
print(json.dumps(parts, indent=1))
PY
echo "h200.sh: done in $(( $(date +%s) - START )) s; $OUT/summary.json" | tee -a "$OUT/run.log"
