#!/usr/bin/env bash
# Run HERE (the CPU machine, with node_modules) before a device call of the grpo-step and decode suites (issue 51): writes
# .devwork/peers/ = bench/device-prep.sh's folder (without the cross-check fixtures) plus
#   bin/a/b/decode.js, bin/a/b/tjs-decode.js   bundles of bench/suites/decode-ours.ts and decode-tjs.ts
#   tjs/transformers.js                          transformers.js v4's web build bundled (npm @huggingface/transformers,
#                                                installed into .devwork/tjs, never into the project's dependencies)
#   tjs/ort/ort-wasm-simd-threaded.asyncify.{mjs,wasm.gz}   the onnxruntime-web that transformers.js was built with
#   spider/{questions.jsonl,tables.json,database/DB/DB.sqlite}   one Spider database (DB, default hospital_1) and its questions
# The tree travels too (64 MiB in all with .device): public/model (31.5 MB) must not;
# docs/CONTRIBUTING.md says how. There, carrying [".device", ".devwork/peers"]:
#   source .device/remote-setup.sh; DEVWORK=.devwork/peers bash bench/device.sh grpo-step ...; ... decode ...
set -euo pipefail
cd "$(dirname "$0")/../.."
H=.devwork/peers
DEVWORK=$H bash bench/device-prep.sh
rm -rf "$H/fixtures"
npx deno bundle --platform deno bench/suites/decode-ours.ts -o "$H/bin/a/b/decode.js"
npx deno bundle --platform deno bench/suites/decode-tjs.ts -o "$H/bin/a/b/tjs-decode.js"
T=.devwork/tjs
TJS_VERSION=${TJS_VERSION:-4.3.2}
if [ ! -f "$T/node_modules/@huggingface/transformers/package.json" ]; then
  mkdir -p "$T" && (cd "$T" && echo '{"name":"tjs","private":true}' > package.json && npm install --ignore-scripts --no-audit --no-fund "@huggingface/transformers@$TJS_VERSION")
fi
mkdir -p "$H/tjs/ort"
npx deno bundle --platform browser "$T/node_modules/@huggingface/transformers/dist/transformers.web.js" -o "$H/tjs/transformers.js"
cp "$T/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs" "$T/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm" "$H/tjs/ort/"
gzip -9 "$H/tjs/ort/ort-wasm-simd-threaded.asyncify.wasm"
S=${SPIDER:-../shared/datasets/spider-train}
DB=${DB:-hospital_1}
mkdir -p "$H/spider/database/$DB"
cp "$S/database/$DB/$DB.sqlite" "$H/spider/database/$DB/"
grep "\"db_id\": \"$DB\"" "$S/questions.jsonl" > "$H/spider/questions.jsonl"
python3 -c "import json,sys; json.dump([t for t in json.load(open(sys.argv[1])) if t['db_id'] == sys.argv[2]], open(sys.argv[3], 'w'))" "$S/tables.json" "$DB" "$H/spider/tables.json"
du -sh "$H"
echo "carry: [\".device\", \"$H\"]"
