#!/usr/bin/env bash
# A model folder in a device call of its own: the packed demo model (26 MiB) plus .device (36 MiB) plus an evidence
# folder is over the device tool's 64 MiB, so the model travels first and stays in /tmp on the warm machine.
#   Here:  bash bench/evidence/model-apart.sh pack [MODEL_DIR]   (default public/model) -> .devwork/demo-model
#   There: bash bench/evidence/model-apart.sh unpack             (carry [".devwork/demo-model"] only; 2 s)
#          -> /tmp/evm/model, then, within the machine's 30 s of idle time, the evidence call with
#          EV_MODEL=/tmp/evm/model (bench/evidence/h200.sh, h200-demo.sh; their prep with NO_MODEL=1 / without MODEL=).
# Used on 2026-12-02 for the demo evidence (docs/evidence.md, third measurement).
set -euo pipefail
cd "$(dirname "$0")/../.."
D=.devwork/demo-model
case "${1:-}" in
pack)
  M=${2:-public/model}
  rm -rf "$D" && mkdir -p "$D"
  cp "$M"/*.json "$D/" && cp bench/evidence/f16planes.py "$D/"
  python3 bench/evidence/f16planes.py pack "$M/model.safetensors" "$D/model.planes"
  xz -T0 -9 -c "$D/model.planes" > "$D/model.planes.xz" && rm "$D/model.planes"
  du -sh "$D"; echo "carry: [\"$D\"]; there: bash bench/evidence/model-apart.sh unpack"
  ;;
unpack)
  O=${EV_MODEL_OUT:-/tmp/evm/model}
  mkdir -p "$O" && cp "$D"/*.json "$O/"
  xz -d -c "$D/model.planes.xz" > "$O.planes" && python3 "$D/f16planes.py" unpack "$O.planes" "$O/model.safetensors" && rm "$O.planes"
  ls -la "$O"
  ;;
*) echo "usage: model-apart.sh pack [MODEL_DIR] | unpack"; exit 2 ;;
esac
