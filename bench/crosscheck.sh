#!/usr/bin/env bash
# The PyTorch cross-check on the GPU machine (after bench/device-prep.sh here, `source .device/remote-setup.sh` there):
# `rlvr logprobs` (ORT f32 / f32 without adapter / f16 / q4, WebGPU the same) and `rlvr lora-grad` on the three tiny
# fixtures (qwen2, llama, qwen3: bench/torch-fixtures.ts), then bench/torch/check.py against transformers + PEFT in
# float64: its table and $OUT/check.json. Usage: OUT=DIR [CHECK_ENGINE=dawn|deno] bash bench/crosscheck.sh
set -u
: "${OUT:?set OUT}"
H=${DEVWORK:-.devwork/device}
R=${DEVICE_RUN:-/tmp/device-run}
if [ ! -d "$R" ]; then
  cp -r "$H" "$R" && find "$R" -name '*.gz' -exec gunzip -f {} +
fi
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export JS=$R/bin/a/b FX=$R/fixtures OUT CHECK_ENGINE=${CHECK_ENGINE:-dawn}
# One run: ARCH ENGINE DTYPE WITH_ADAPTER, or ARCH grad; its log in $OUT/ours/ARCH/.
ours_run() {
  local a=$1 d=$FX/$1 o=$OUT/ours/$1
  mkdir -p "$o"
  if [ "$2" = grad ]; then
    timeout 100 deno run -A "$JS/rlvr.js" lora-grad --webgpu "$CHECK_ENGINE" --model "$d/model" --adapter "$d/adapter" \
      --batch "$d/batch.json" --out "$o/grad.safetensors" > "$o/lora-grad.log" 2>&1
    return
  fi
  local key="$2-$3"; [ "$4" = 0 ] && key="$key-base"
  local ad=(); [ "$4" = 1 ] && ad=(--adapter "$d/adapter")
  timeout 100 deno run -A "$JS/rlvr.js" logprobs --webgpu "$CHECK_ENGINE" --model "$d/model" --ids "$d/ids.json" --engine "$2" \
    --dtype "$3" ${ad[@]+"${ad[@]}"} --out "$o/logprobs-$key.json" > "$o/$key.log" 2>&1
}
export -f ours_run
jobs=$(( $(nproc) / 2 )); [ "$jobs" -lt 1 ] && jobs=1
for a in qwen2 llama qwen3; do
  for r in "ort f32 1" "ort f32 0" "ort f16 1" "ort q4 1" "webgpu f32 1" "webgpu f32 0" "webgpu f16 1" "webgpu q4 1" "grad"; do echo "$a $r"; done
done | xargs -P "$jobs" -L 1 bash -c 'ours_run "$@"' _
python3 bench/torch/check.py --fixtures "$FX" --ours "$OUT/ours" --out "$OUT"
