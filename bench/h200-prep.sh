#!/usr/bin/env bash
# Run HERE (the CPU machine, with node_modules) before bench/h200.sh: writes .devwork/h200/ (~10 MiB; must stay under 28):
#   bin/a/b/{rlvr,decode,train,profile,calls}.js   self-contained Deno bundles (src/cli/main.ts, bench/decode.bench.ts,
#                                     bench/train.bench.ts, bench/profile.bench.ts, bench/calls.bench.ts)
#   node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.{mjs,wasm.gz}   what onnxruntime-web/webgpu loads at run time
#   bin/node_modules/sql.js/dist/sql-wasm.wasm.gz   sql.js (not used by the benchmarks; there so every rlvr command runs)
# The two wasm files travel gzip'd (26.8 MB -> 6.6 MB for ORT's); bench/h200.sh unpacks every *.gz under
# .devwork/h200 before its first part (gunzip, or python3's gzip where gunzip is missing).
#   fixtures/   tiny qwen2/llama/qwen3 models + PEFT adapters + ids/batch files (bench/torch-fixtures.ts)
# Why bin/a/b: a bundle resolves the Deno-side wasm paths of src/model/onnx/ort.ts ("../../../node_modules/...")
# and src/runtime/sql-wasm.ts ("../../node_modules/...") against the bundle's own file URL, so the bundles sit
# three folders below .devwork/h200 and the wasm files where those relative paths land.
# (A bundle at .devwork/rlvr.js would look for /node_modules or the folder above the checkout.)
set -euo pipefail
cd "$(dirname "$0")/.."
H=.devwork/h200
rm -rf "$H"
mkdir -p "$H/bin/a/b" "$H/node_modules/onnxruntime-web/dist" "$H/bin/node_modules/sql.js/dist"
npx deno bundle --platform deno src/cli/main.ts -o "$H/bin/a/b/rlvr.js"
npx deno bundle --platform deno bench/decode.bench.ts -o "$H/bin/a/b/decode.js"
npx deno bundle --platform deno bench/train.bench.ts -o "$H/bin/a/b/train.js"
# The trainer's own batch (bench/h200-trainer.sh): per-kernel profile and per-shape table, call counts.
npx deno bundle --platform deno bench/profile.bench.ts -o "$H/bin/a/b/profile.js"
npx deno bundle --platform deno bench/calls.bench.ts -o "$H/bin/a/b/calls.js"
cp node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm \
  "$H/node_modules/onnxruntime-web/dist/"
cp node_modules/sql.js/dist/sql-wasm.wasm "$H/bin/node_modules/sql.js/dist/"
gzip -9 "$H/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm" "$H/bin/node_modules/sql.js/dist/sql-wasm.wasm"
npx deno run -A bench/torch-fixtures.ts "$H/fixtures"
du -sh "$H" .device
bytes=$(du -sb "$H" | cut -f1)
[ "$bytes" -lt $((28 * 1024 * 1024)) ] || { echo "h200-prep: $H is $bytes bytes, over 28 MiB" >&2; exit 1; }
echo "carry: [\".device\", \"$H\"]"
