#!/usr/bin/env bash
# Run HERE (the CPU machine, with node_modules and ../shared) before bench/evidence/h200.sh: writes
# .devwork/evidence/ with what the PRM evidence runs need on the GPU machine, where Deno fetches nothing:
#   bin/a/b/rlvr.js, bin/workers/sql.worker.ts   Deno bundles of the CLI and the SQL worker (bin/a/b: see bench/device-prep.sh)
#   ort.mjs, ort.wasm.xz, sql-wasm.wasm.xz       what onnxruntime-web/webgpu and sql.js load at run time
#   model/                                        public/model: json files as they are, model.safetensors byte-plane
#                                                 shuffled (f16planes.py) and xz'd (31.5 MB -> ~26.7 MB); NO_MODEL=1 leaves the
#                                                 weights out (they then travel apart: bench/evidence/model-apart.sh, EV_MODEL=/tmp/evm/model)
#   demo.tar.xz                                    public/demo (questions and SQLite files; ~0.5 MB instead of 2.3)
#   prm-*.json                                     bench/evidence/prm-notebooks.ts's PRM notebooks (issue #18; EV_PRM_SIZE=session: cut to a call each),
#                                                 their CoCTE cold start converts the golds inside the run (warm-up sftTargets
#                                                 "cocte"): no dataset file travels for it
#   synthetic-heldout.tar.xz                       bench/evidence/synthetic-heldout.ts's questions and databases (prm-synth*)
# The working tree travels too: with public/model (31.5 MB) and public/demo (2.3 MB) in it, tree + .device + this
# are over the device tool's 64 MiB. Move both out of the checkout for the call (and back after), and keep
# .device/deno.xz compressed with `xz -9e` (30.7 -> 29.7 MB). The script prints the total.
set -euo pipefail
cd "$(dirname "$0")/../.."
E=.devwork/evidence
rm -rf "$E"
mkdir -p "$E/bin/a/b" "$E/bin/workers" "$E/model"
npx deno bundle --platform deno src/cli/main.ts -o "$E/bin/a/b/rlvr.js"
npx deno bundle --platform deno workers/sql.worker.ts -o "$E/bin/workers/sql.worker.ts"
for f in "$E/bin/a/b/rlvr.js" "$E/bin/workers/sql.worker.ts"; do
  { echo 'globalThis.__dirname ??= "/"; globalThis.__filename ??= "/index.js";'; cat "$f"; } > "$f.tmp" && mv "$f.tmp" "$f"
done
cp node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs "$E/ort.mjs"
xz -T0 -9 -c node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm > "$E/ort.wasm.xz"
xz -T0 -9 -c node_modules/sql.js/dist/sql-wasm.wasm > "$E/sql-wasm.wasm.xz"
cp public/model/*.json "$E/model/"
xz -9 "$E/model/tokenizer.json"
tar -cJf "$E/demo.tar.xz" public/demo
# NO_MODEL=1: the model travels apart (bench/evidence/model-apart.sh), so the rest fits the 64 MiB with .device.
if [ "${NO_MODEL:-0}" != 1 ]; then
  python3 bench/evidence/f16planes.py pack public/model/model.safetensors "$E/model.planes"
  xz -T0 -9 -c "$E/model.planes" > "$E/model/model.planes.xz" && rm "$E/model.planes"
fi
npx deno run -A bench/evidence/synthetic-heldout.ts "$E/tmp" > /dev/null
tar -C "$E/tmp" -cJf "$E/synthetic-heldout.tar.xz" . && rm -rf "$E/tmp"
cp bench/evidence/f16planes.py bench/evidence/prm-*.json "$E/"
# EV_PRM_SIZE=session: the PRM notebooks cut to one device call each (prm-notebooks.ts), instead of the committed full ones.
if [ "${EV_PRM_SIZE:-full}" = session ]; then npx deno run -A bench/evidence/prm-notebooks.ts "$E" session; fi
tree=$(git ls-files -z | grep -zv '^public/model/\|^public/demo/' | xargs -0 du -cb | tail -1 | cut -f1)
ev=$(du -sb "$E" | cut -f1); dev=$(du -sb .device | cut -f1)
echo "travels: tree without public/model and public/demo $tree + .device $dev + $E $ev = $(( (tree + dev + ev) / 1048576 )) MiB of 64"
echo "carry: [\".device\", \"$E\"]   (move public/model and public/demo out of the checkout for the call)"
