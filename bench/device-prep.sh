#!/usr/bin/env bash
# Run HERE (the CPU machine, with node_modules) before bench/h200.sh: writes .devwork/h200/ (~10 MiB; must stay under 28):
# Before the device call move public/model, public/demo and bench/evidence/results out of the checkout (and back after;
# `bash bench/h200-move.sh out`, then `back`):
# the tracked tree is ~49 MB with them (public/model 32, bench/evidence/results 11), ~4 without; .device ~36 MB and this
# folder ~15 MB travel too, and the call takes 64 MiB in all.
#   bin/a/b/{rlvr,decode,decode-profile,train,profile,calls,poll}.js   self-contained Deno bundles (src/cli/main.ts, bench/decode.bench.ts,
#                                     bench/train.bench.ts, bench/profile.bench.ts, bench/calls.bench.ts, bench/poll.bench.ts)
#   node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.{mjs,wasm.gz}   what onnxruntime-web/webgpu loads at run time
#   bin/node_modules/sql.js/dist/sql-wasm.wasm.gz   sql.js (not used by the benchmarks; there so every rlvr command runs)
# The two wasm files travel gzip'd (26.8 MB -> 6.6 MB for ORT's); bench/h200.sh unpacks every *.gz under
# .devwork/h200 before its first part (gunzip, or python3's gzip where gunzip is missing).
#   fixtures/   tiny qwen2/llama/qwen3 models + PEFT adapters + ids/batch files (bench/torch-fixtures.ts)
#   for the GRPO-step parts (h200.sh grpo, grpo-05b; `rlvr run` of bench/evidence/grpo-step*.json on a random model):
#   bin/a/b/demo-shape.js, bin/workers/sql.worker.ts, node_modules/sql.js/dist/sql-wasm.wasm.gz (the worker's
#   ../../node_modules), demo-tok/ (the demo tokenizer), demo.tar.xz (public/demo, unpacked to public/ beside bin/),
#   grpo-step.json, grpo-step-q4.json
# Why bin/a/b: a bundle resolves the Deno-side wasm paths of src/model/onnx/ort.ts ("../../../node_modules/...")
# and src/runtime/sql-wasm.ts ("../../node_modules/...") against the bundle's own file URL, so the bundles sit
# three folders below .devwork/h200 and the wasm files where those relative paths land.
# (A bundle at .devwork/rlvr.js would look for /node_modules or the folder above the checkout.)
set -euo pipefail
cd "$(dirname "$0")/.."
H=.devwork/h200
rm -rf "$H"
mkdir -p "$H/bin/a/b" "$H/bin/workers" "$H/node_modules/onnxruntime-web/dist" "$H/node_modules/sql.js/dist" "$H/bin/node_modules/sql.js/dist" "$H/demo-tok"
npx deno bundle --platform deno src/cli/main.ts -o "$H/bin/a/b/rlvr.js"
npx deno bundle --platform deno bench/decode.bench.ts -o "$H/bin/a/b/decode.js"
npx deno bundle --platform deno bench/train.bench.ts -o "$H/bin/a/b/train.js"
# The trainer's own batch (bench/h200-trainer.sh): per-kernel profile and per-shape table, call counts.
npx deno bundle --platform deno bench/profile.bench.ts -o "$H/bin/a/b/profile.js"
# The FP32 arithmetic ceiling of WGSL kernels on this engine (bench/h200-check.sh ceiling).
npx deno bundle --platform deno bench/fma-peak.bench.ts -o "$H/bin/a/b/fma-peak.js"
npx deno bundle --platform deno bench/ladder.bench.ts -o "$H/bin/a/b/ladder.js"
npx deno bundle --platform deno bench/calls.bench.ts -o "$H/bin/a/b/calls.js"
# ORT's per-kernel profile of the captured decoding graph (bench/h200-check.sh probe).
npx deno bundle --platform deno bench/decode-profile.bench.ts -o "$H/bin/a/b/decode-profile.js"
# The wait on the GPU under each Dawn polling mode (bench/h200-ring.sh).
npx deno bundle --platform deno bench/poll.bench.ts -o "$H/bin/a/b/poll.js"
npx deno bundle --platform deno bench/demo-shape-model.ts -o "$H/bin/a/b/demo-shape.js"
npx deno bundle --platform deno workers/sql.worker.ts -o "$H/bin/workers/sql.worker.ts"
# As bench/evidence/h200-prep.sh does for `rlvr run` (sql.js reads __dirname in a bundle).
for f in "$H/bin/a/b/rlvr.js" "$H/bin/workers/sql.worker.ts"; do
  { echo 'globalThis.__dirname ??= "/"; globalThis.__filename ??= "/index.js";'; cat "$f"; } > "$f.tmp" && mv "$f.tmp" "$f"
done
cp public/model/tokenizer.json public/model/tokenizer_config.json "$H/demo-tok/"
gzip -9 "$H/demo-tok/tokenizer.json"
tar -cJf "$H/demo.tar.xz" public/demo
cp bench/evidence/grpo-step.json bench/evidence/grpo-step-q4.json "$H/"
cp node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm \
  "$H/node_modules/onnxruntime-web/dist/"
cp node_modules/sql.js/dist/sql-wasm.wasm "$H/bin/node_modules/sql.js/dist/"
cp node_modules/sql.js/dist/sql-wasm.wasm "$H/node_modules/sql.js/dist/"
gzip -9 "$H/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm" "$H/bin/node_modules/sql.js/dist/sql-wasm.wasm" "$H/node_modules/sql.js/dist/sql-wasm.wasm"
npx deno run -A bench/torch-fixtures.ts "$H/fixtures"
# What NVIDIA's driver makes of the big products' kernels (bench/h200-check.sh regs): the SPIR-V Dawn writes for them here
# (Dawn on SwiftShader, dump_shaders), assembled, and vkstats built here. Needs Debian's spirv-tools and libvulkan-dev.
npx deno bundle --platform deno bench/vkstats/dump.ts -o "$H/bin/a/b/vkdump.js"
if command -v spirv-as >/dev/null && [ -f /usr/include/vulkan/vulkan.h ] && [ -f /usr/lib/chromium/vk_swiftshader_icd.json ]; then
  mkdir -p "$H/vk"
  VK_DRIVER_FILES=/usr/lib/chromium/vk_swiftshader_icd.json XDG_RUNTIME_DIR=/tmp RLVR_WEBGPU=dawn \
    RLVR_DAWN_OPTIONS="disable-dawn-features=use_vulkan_zero_initialize_workgroup_memory_extension;enable-dawn-features=dump_shaders" \
    npx deno run -A --no-check bench/vkstats/dump.ts "$H/vk/labels.json" > "$H/vk/dump.log" 2>&1
  python3 bench/vkstats/split.py "$H/vk/dump.log" "$H/vk/labels.json" "$H/vk/spv" | tail -3
  # The same products under experimental switches (VK_PERF, ';'-separated sets, e.g. "ka=1;ka=2"; default none):
  # their kernels' files carry the switches in their labels (e.g. matmul_t128h_ka_k16_vAB), the rest repeat the defaults'.
  IFS=';' read -ra sets <<< "${VK_PERF-}"
  for i in "${!sets[@]}"; do
    VK_DRIVER_FILES=/usr/lib/chromium/vk_swiftshader_icd.json XDG_RUNTIME_DIR=/tmp RLVR_WEBGPU=dawn \
      RLVR_DAWN_OPTIONS="disable-dawn-features=use_vulkan_zero_initialize_workgroup_memory_extension;enable-dawn-features=dump_shaders" \
      npx deno run -A --no-check bench/vkstats/dump.ts "$H/vk/labels-$i.json" "perf=${sets[$i]}" > "$H/vk/dump.log" 2>&1
    python3 bench/vkstats/split.py "$H/vk/dump.log" "$H/vk/labels-$i.json" "$H/vk/spv" | tail -3
  done
  rm -f "$H/vk/dump.log" "$H"/vk/spv/*.spvasm
  cc -O2 -o "$H/vk/vkstats" bench/vkstats/vkstats.c -ldl
  # the headers vkstats.c includes (not the whole of /usr/include/vulkan: 13 MB), for a build there if this binary does not run
  mkdir -p "$H/vk/include/vulkan" "$H/vk/include/vk_video"
  cp /usr/include/vulkan/vulkan.h /usr/include/vulkan/vulkan_core.h /usr/include/vulkan/vk_platform.h "$H/vk/include/vulkan/"
  cp /usr/include/vk_video/*.h "$H/vk/include/vk_video/"
else
  echo "h200-prep: no spirv-as / Vulkan headers / SwiftShader here: bench/h200-check.sh regs will have no SPIR-V (apt-get install spirv-tools libvulkan-dev)"
fi
du -sh "$H" .device 2>/dev/null || du -sh "$H"
bytes=$(du -sb "$H" | cut -f1)
[ "$bytes" -lt $((28 * 1024 * 1024)) ] || { echo "h200-prep: $H is $bytes bytes, over 28 MiB" >&2; exit 1; }
echo "carry: [\".device\", \"$H\"]"
