#!/usr/bin/env bash
# Run HERE (the CPU machine, with node_modules) before a device call: writes .devwork/device/ (~10 MiB), to carry with
# .device (bash ../shared/device/prepare.sh). The tracked tree travels too: keep the call under 64 MiB in all.
#   bin/a/b/run.js, bin/a/b/rlvr.js   self-contained Deno bundles of bench/run.ts (every suite) and src/cli/main.ts
#   node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.{mjs,wasm.gz}   what onnxruntime-web loads
#   bin/node_modules/sql.js/dist/sql-wasm.wasm.gz, node_modules/sql.js/dist/sql-wasm.wasm.gz, bin/workers/sql.worker.ts
#   demo-tok/ (the demo tokenizer), demo.tar.xz (public/demo), fixtures/ (bench/torch-fixtures.ts: the cross-check's
#   tiny qwen2/llama/qwen3 models, adapters and batches)
# Why bin/a/b: a bundle resolves the Deno-side wasm paths of src/model/onnx/ort.ts ("../../../node_modules/...") and
# src/runtime/sql-wasm.ts ("../../node_modules/...") against its own file URL.
# There: `source .device/remote-setup.sh; bash bench/device.sh SUITE [key=value ...]` (unpacks once, then runs the suite).
set -euo pipefail
cd "$(dirname "$0")/.."
H=${DEVWORK:-.devwork/device}
rm -rf "$H"
mkdir -p "$H/bin/a/b" "$H/bin/workers" "$H/node_modules/onnxruntime-web/dist" "$H/node_modules/sql.js/dist" "$H/bin/node_modules/sql.js/dist" "$H/demo-tok"
npx deno bundle --platform deno bench/run.ts -o "$H/bin/a/b/run.js"
npx deno bundle --platform deno src/cli/main.ts -o "$H/bin/a/b/rlvr.js"
npx deno bundle --platform deno workers/sql.worker.ts -o "$H/bin/workers/sql.worker.ts"
# sql.js reads __dirname in a bundle.
for f in "$H/bin/a/b/run.js" "$H/bin/a/b/rlvr.js" "$H/bin/workers/sql.worker.ts"; do
  { echo 'globalThis.__dirname ??= "/"; globalThis.__filename ??= "/index.js";'; cat "$f"; } > "$f.tmp" && mv "$f.tmp" "$f"
done
git rev-parse --short HEAD > "$H/commit"
cp public/model/tokenizer.json public/model/tokenizer_config.json "$H/demo-tok/"
gzip -9 "$H/demo-tok/tokenizer.json"
tar -cJf "$H/demo.tar.xz" public/demo
cp node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm \
  "$H/node_modules/onnxruntime-web/dist/"
cp node_modules/sql.js/dist/sql-wasm.wasm "$H/bin/node_modules/sql.js/dist/"
cp node_modules/sql.js/dist/sql-wasm.wasm "$H/node_modules/sql.js/dist/"
gzip -9 "$H/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm" "$H/bin/node_modules/sql.js/dist/sql-wasm.wasm" "$H/node_modules/sql.js/dist/sql-wasm.wasm"
npx deno run -A bench/torch-fixtures.ts "$H/fixtures"
du -sh "$H"
echo "carry: [\".device\", \"$H\"]"
