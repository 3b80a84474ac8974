#!/usr/bin/env bash
# On the GPU machine (issue 51): where a captured q4 decoding step's time goes. From the bundle of
# bench/suites/peers-prep.sh (.devwork/peers: bin/a/b/decode.js, onnxruntime's wasm), no records (tables on stdout, JSON
# and logs to $OUT):
#   1. profile: decode-ours.ts profile=1 at the full shape (PRESET, batches 8 and 64): ms a step, then one more batch
#      with every dispatch timed by timestamp queries: GPU kernel time and span a step, dispatches by ORT program;
#   2. sweep: one process per setting in SETTINGS, each running every batch REPS times (min and median), the default
#      first and last: Dawn toggles through RLVR_DAWN_OPTIONS (names from Dawn's src/dawn/native/Toggles.cpp;
#      dawn.node accepts unknown names silently) and the captured graph's products (RLVR_CAPTURED_PRODUCTS).
# Carry [".device", ".devwork/peers"]; run `source .device/remote-setup.sh; bash bench/suites/peers-sweep.sh`.
# PROFILE=0 / SWEEP=0 skip a part; SETTINGS replaces the list (e.g. add
# "all3|disable-dawn-features=timestamp_quantization;enable-dawn-features=skip_validation,disable_robustness,disable_workgroup_init|");
# LAYERS (sweep; default 4: the dispatches and kernels of a layer are the same at 24),
# NEW, REPS, PROFILE_S / SWEEP_S (each process's time limit, s).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sweep-out}
mkdir -p "$OUT"
H=${DEVWORK:-.devwork/peers}
R=${DEVICE_RUN:-/tmp/device-run}
if [ ! -d "$R" ]; then
  cp -r "$H" "$R" && find "$R" -name '*.gz' -exec gunzip -f {} +
fi
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
ENGINE=${RLVR_WEBGPU:-dawn}
PRESET=${PRESET:-qwen2.5-0.5b}
BATCHES=${BATCHES:-8,64}
NEW=${NEW:-16}
REPS=${REPS:-2}
LAYERS=${LAYERS:-4}
BASE="disable-dawn-features=timestamp_quantization"
# name|RLVR_DAWN_OPTIONS|RLVR_CAPTURED_PRODUCTS
SETTINGS=${SETTINGS:-"default|$BASE|
skip_validation|$BASE;enable-dawn-features=skip_validation|
disable_robustness|$BASE;enable-dawn-features=disable_robustness|
products=fused|$BASE|fused
default-again|$BASE|"}
(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) | tee "$OUT/sweep.log"
decode() { # LIMIT JSON ARGS...
  local limit=$1 json=$2; shift 2
  timeout -k 5 "$limit" deno run -A "$R/bin/a/b/decode.js" --webgpu "$ENGINE" "$PRESET" q4 "$BATCHES" 1 128 "$NEW" 0 "$json" \
    "$((limit - 8))" "$@"
}
if [ "${PROFILE:-1}" = 1 ]; then
  s=$(date +%s)
  RLVR_DAWN_OPTIONS=$BASE decode "${PROFILE_S:-60}" "$OUT/profile.json" profile=1 > "$OUT/profile.log" 2>&1
  echo "== profile: rc $? in $(( $(date +%s) - s )) s" | tee -a "$OUT/sweep.log"
  grep -E '^\[captured|^\[profile|^qwen|^tiny|[Ee]rror' "$OUT/profile.log" | cut -c1-240 | tee -a "$OUT/sweep.log"
fi
if [ "${SWEEP:-1}" = 1 ]; then
  i=0
  while IFS='|' read -r name opts products; do
    [ -z "$name" ] && continue
    i=$((i + 1))
    s=$(date +%s)
    RLVR_DAWN_OPTIONS=$opts RLVR_CAPTURED_PRODUCTS=$products decode "${SWEEP_S:-14}" "$OUT/sweep-$i.json" \
      "reps=$REPS" "layers=$LAYERS" > "$OUT/sweep-$i.log" 2>&1
    echo "== sweep $i $name: rc $? in $(( $(date +%s) - s )) s" | tee -a "$OUT/sweep.log"
    grep -E '[Ee]rror' "$OUT/sweep-$i.log" | head -3 | cut -c1-240 | tee -a "$OUT/sweep.log"
  done <<< "$SETTINGS"
  python3 - "$OUT" "$SETTINGS" <<'PY' | tee -a "$OUT/sweep.log"
import json, os, statistics, sys
out, settings = sys.argv[1], [l.split("|") for l in sys.argv[2].splitlines() if l.strip()]
print(f"\n{'setting':20} {'batch':>5} {'runs':>4} {'min ms':>8} {'median':>8}  (ms a decoding step; each setting its own process)")
for i, (name, *_rest) in enumerate(settings, 1):
    p = f"{out}/sweep-{i}.json"
    if not os.path.exists(p):
        print(f"{name:20} no JSON"); continue
    r = json.load(open(p))
    for b in sorted({x["batch"] for x in r["runs"]}):
        ms = [x["msPerStep"] for x in r["runs"] if x["batch"] == b and not x["partial"]]
        if ms: print(f"{name:20} {b:5} {len(ms):4} {min(ms):8.2f} {statistics.median(ms):8.2f}  layers {r['layers']}, session {r.get('sessionSeconds', 0):.1f} s")
PY
fi
