#!/usr/bin/env bash
# Issue #19, step 0 — run HERE (the CPU machine, with node_modules and ../shared/datasets) before the H200
# calls of bench/evidence/h200-retrain.sh and h200-demo.sh. Writes $E (default .devwork/demo-ev, ~8 MiB) with
# everything those need on the GPU machine, where Deno fetches nothing:
#   bin/a/b/rlvr.js, bin/workers/sql.worker.ts   Deno bundles of the CLI and the SQL worker
#   ort.mjs, ort.wasm.xz, sql-wasm.wasm.xz       what onnxruntime-web/webgpu and sql.js load at run time
#   demo.tar.xz                                  public/demo (databases, concept splits, generic questions, definitions)
#   pt/tokenizer/, pt/corpus.json, pt/corpus.bin.xz   the pretraining tokenizer and packed corpus, built here
#                                                (`rlvr pretrain --corpus-only`: minutes on one core; the GPU side reads them)
#   demo-knowledge.json, demo-bird.json          the evidence notebooks (bench/evidence/demo-notebooks.ts, size EV_SIZE)
#   model/                                       only with MODEL=DIR: a model folder to evaluate without retraining
#                                                (model.safetensors byte-plane shuffled and xz'd, f16planes.py)
# For a session that only evaluates (the retrained model carried as MODEL=public/model): EVAL_ONLY=1 skips the
# corpus (15 min here), which only h200-retrain.sh reads.
# Settings: PT_SYNTHETIC (synthetic questions per Spider database, 4x per demo database; default 1000: the shipped corpus; docs/demo-model.md gives its size),
#   PT_DEFINED_SHARE (--defined-share: the share of them with made-up terms defined in the evidence; default the CLI's, 0.3),
#   PT_SPIDER (default ../shared/datasets/spider-train), PT_SPIDER_LIMIT (Spider questions, default all),
#   PT_SPIDER_SYN (Spider-Syn's folder, default ../shared/datasets/spider-syn; "none": without it),
#   PT_SURFACE (--surface: the share of synthetic questions reworded as people write, default 0.5),
#   PT_SEQ (1024), PT_VOCAB (8192), EV_SIZE (h200 | tiny), EV_RFT_KEEP (better | correct: the warm-up's kept samples),
#   EV_WARM_SAMPLES (warm-up samples per question), E (output folder), DENO (default node_modules/deno/deno).
# Carry to the GPU machine: [".device", "$E"] (the script prints the total against the 64 MiB limit).
set -euo pipefail
cd "$(dirname "$0")/../.."
E=${E:-.devwork/demo-ev}
DENO=${DENO:-node_modules/deno/deno}
SPIDER=${PT_SPIDER:-../shared/datasets/spider-train}
SPIDER_SYN=${PT_SPIDER_SYN:-../shared/datasets/spider-syn}
[ "$SPIDER_SYN" = none ] && SPIDER_SYN=
PT_SURFACE=${PT_SURFACE:-0.5}
# Spider databases held out of pretraining (as in the earlier evidence rounds; their questions evaluate schema transfer).
HOLD=train_station,perpetrator,candidate_poll,news_report,railway,coffee_shop,station_weather,protein_institute
T0=$(date +%s)
rm -rf "$E"
mkdir -p "$E/bin/a/b" "$E/bin/workers" "$E/pt"
"$DENO" bundle --platform deno src/cli/main.ts -o "$E/bin/a/b/rlvr.js"
"$DENO" bundle --platform deno workers/sql.worker.ts -o "$E/bin/workers/sql.worker.ts"
for f in "$E/bin/a/b/rlvr.js" "$E/bin/workers/sql.worker.ts"; do
  { echo 'globalThis.__dirname ??= "/"; globalThis.__filename ??= "/index.js";'; cat "$f"; } > "$f.tmp" && mv "$f.tmp" "$f"
done
cp node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs "$E/ort.mjs"
xz -T0 -9 -c node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm > "$E/ort.wasm.xz"
xz -T0 -9 -c node_modules/sql.js/dist/sql-wasm.wasm > "$E/sql-wasm.wasm.xz"
tar -cJf "$E/demo.tar.xz" public/demo
"$DENO" run -A bench/evidence/demo-notebooks.ts "$E" "${EV_SIZE:-h200}" ${EV_RFT_KEEP:+rftKeep=$EV_RFT_KEEP} ${EV_WARM_SAMPLES:+samples=$EV_WARM_SAMPLES}
# A new base model's greedy baseline on the hand-written and generated concept questions (h200-written.sh).
"$DENO" run -A bench/evidence/demo-notebooks.ts "$E" "${EV_SIZE:-h200}" name=base stages=baseline splits=test-written,test-concepts
# The notebook with only the test-concepts and test-written evaluations (h200-demo.sh EV_MODES=knowledge-wc): ~2 calls.
"$DENO" run -A bench/evidence/demo-notebooks.ts "$E" "${EV_SIZE:-h200}" name=wc splits=test-written,test-concepts
cp bench/evidence/f16planes.py "$E/"
# The corpus: the same flags h200-retrain.sh passes, so its cache key matches there (paths as written, run from
# the unpacked folder where public/demo is public/demo).
B=$E/pt-build
if [ -z "${EVAL_ONLY:-}" ]; then
"$DENO" run -A src/cli/main.ts pretrain --out "$B" --corpus-only --vocab "${PT_VOCAB:-8192}" --spider "$SPIDER" \
  ${PT_SPIDER_LIMIT:+--spider-limit "$PT_SPIDER_LIMIT"} --spider-holdout "$HOLD" --seq-len "${PT_SEQ:-1024}" \
  --chat-turns 8 --chat-passes 2 --synthetic "${PT_SYNTHETIC:-1000}" ${PT_DEFINED_SHARE:+--defined-share "$PT_DEFINED_SHARE"} \
  ${SPIDER_SYN:+--spider-syn "$SPIDER_SYN"} --surface "$PT_SURFACE" > "$E/corpus.log" 2>&1 || { tail -20 "$E/corpus.log"; exit 1; }
tail -c 1500 "$E/corpus.log"; echo
cp -r "$B/tokenizer" "$E/pt/"
cp "$B/corpus.json" "$E/pt/"
xz -T0 -9 -c "$B/corpus.bin" > "$E/pt/corpus.bin.xz"
rm -rf "$B"
# Settings the GPU side must repeat exactly (the corpus key): written next to the corpus.
printf 'SPIDER=%q\nHOLD=%q\nPT_SEQ=%q\nPT_SYNTHETIC=%q\nPT_SPIDER_LIMIT=%q\nPT_DEFINED_SHARE=%q\nSPIDER_SYN=%q\nPT_SURFACE=%q\n' "$SPIDER" "$HOLD" "${PT_SEQ:-1024}" "${PT_SYNTHETIC:-1000}" "${PT_SPIDER_LIMIT:-}" "${PT_DEFINED_SHARE:-}" "$SPIDER_SYN" "$PT_SURFACE" > "$E/pt/settings.sh"
fi
if [ -n "${MODEL:-}" ]; then
  mkdir -p "$E/model"
  cp "$MODEL"/*.json "$E/model/"
  python3 bench/evidence/f16planes.py pack "$MODEL/model.safetensors" "$E/model.planes"
  xz -T0 -9 -c "$E/model.planes" > "$E/model/model.planes.xz" && rm "$E/model.planes"
fi
ev=$(du -sb "$E" | cut -f1); dev=$(du -sb .device 2>/dev/null | cut -f1 || echo 0)
tree=$(git ls-files -z | grep -zv '^public/model/\|^public/demo/' | xargs -0 du -cb | tail -1 | cut -f1)
echo "prep $(( $(date +%s) - T0 )) s; travels: tree without public/model and public/demo $tree + .device ${dev:-0} + $E $ev = $(( (tree + ${dev:-0} + ev) / 1048576 )) MiB of 64"
echo "carry: [\".device\", \"$E\"]   (move public/model and public/demo out of the checkout for the call, and back after)"
