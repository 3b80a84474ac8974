#!/usr/bin/env bash
# Run HERE (the CPU machine, with node_modules) before bench/h200.sh: writes .devwork/h200/ (~29 MiB):
#   bin/a/b/{rlvr,decode,train}.js   self-contained Deno bundles (src/cli/main.ts, bench/decode.bench.ts, bench/train.bench.ts)
#   node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.{mjs,wasm}   what onnxruntime-web/webgpu loads at run time
#   bin/node_modules/sql.js/dist/sql-wasm.wasm   sql.js (not used by the benchmarks; there so every rlvr command runs)
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
cp node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm \
  "$H/node_modules/onnxruntime-web/dist/"
cp node_modules/sql.js/dist/sql-wasm.wasm "$H/bin/node_modules/sql.js/dist/"
npx deno run -A bench/torch-fixtures.ts "$H/fixtures"
du -sh "$H" .device
echo "carry: [\".device\", \"$H\"]"
