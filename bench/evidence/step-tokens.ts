// How often a chain's step prefix, re-encoded alone, ends in other tokens than the whole chain has there
// (docs/prm.md, 2026-12-04 third session: the reason PRM data's rollouts now continue from the chain's own
// tokens, src/runtime/prm/prm-data.ts rolloutPrefix). For every record of a run's samples.jsonl in a phase
// (default grpo), every step end before the final statement (core/prm-steps.ts prmStepSpans): does the
// prefix's encoding equal the first tokens of the whole completion's?
// Run: deno run -A bench/evidence/step-tokens.ts MODEL_DIR SAMPLES.jsonl [PHASE]
import { prmStepSpans } from "../../src/core/prm-steps.ts";
import { loadTokenizer } from "../../src/model/tokenizer.ts";

const [model, samples, phase = "grpo"] = Deno.args;
if (!model || !samples) throw new Error("usage: step-tokens.ts MODEL_DIR SAMPLES.jsonl [PHASE]");
const tok = loadTokenizer(await Deno.readTextFile(`${model}/tokenizer.json`), await Deno.readTextFile(`${model}/tokenizer_config.json`));
const enc = (t: string) => tok.encode(t, { addSpecialTokens: false });
// A file cut at its start (tail -c) may begin inside a line: lines that do not parse are skipped.
const records = (await Deno.readTextFile(samples)).split("\n").flatMap((l) => {
  try {
    return [JSON.parse(l)];
  } catch {
    return [];
  }
}).filter((r) => r.phase === phase && typeof r.completion === "string");
let cuts = 0, differ = 0;
const ends = new Map<string, number>();
for (const r of records) {
  const whole = enc(r.completion);
  for (const e of prmStepSpans(r.completion).ends.slice(0, -1)) {
    cuts++;
    const alone = enc(r.completion.slice(0, e));
    if (alone.some((id, i) => id !== whole[i])) {
      differ++;
      const last = tok.decode([alone[alone.length - 1]]);
      ends.set(last, (ends.get(last) ?? 0) + 1);
    }
  }
}
console.log(JSON.stringify({ samples, phase, records: records.length, stepEnds: cuts, reEncodedDiffers: differ, lastTokenWhenDiffers: Object.fromEntries(ends) }));
