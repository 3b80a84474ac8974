// The evidence notebooks of issue #19, made from the built-in demo notebook (notebooks/demo.json) so
// they measure exactly what the page runs: `demo-knowledge.json` (its prompt cell as shipped:
// evidence off) and `demo-bird.json` (evidence on), at one of two sizes:
//   h200  the shipped parameters with 8 warm-up samples per question and every question of a split
//         in each evaluation (the laptop notebook's sizes otherwise);
//   tiny  a smoke test for a CPU machine: 2 questions per split, 4-token answers, 2 GRPO steps.
// Usage: deno run -A bench/evidence/demo-notebooks.ts OUT_DIR [h200|tiny] [rftKeep=better|correct] [samples=N]
//   rftKeep, samples: the warm-up's kept samples and samples per question (a variant of the measurement;
//   the notebook's own values otherwise, the size's for samples).
import demo from "../../notebooks/demo.json" with { type: "json" };

type Cell = (typeof demo.cells)[number];

const SIZES: Record<string, (c: Cell) => Record<string, unknown>> = {
  h200: (c) => {
    switch (c.type) {
      case "warmup": return { samplesPerQuestion: 8 };
      case "grpo": return { evalN: 96 };
      default: return {};
    }
  },
  tiny: (c) => {
    switch (c.type) {
      case "dataset": return { limit: 2 };
      case "evaluate": return { n: 2, maxNewTokens: 4 };
      case "warmup": return { samplesPerQuestion: 2, maxNewTokens: 4 };
      case "grpo": return { G: 2, batchQuestions: 1, steps: 2, maxNewTokens: 4, evalEvery: 1, evalN: 2 };
      case "selfconsistency": return { N: 2, n: 2, maxNewTokens: 4 };
      default: return {};
    }
  },
};

const [out, size = "h200", ...opts] = Deno.args;
const named = new Map(opts.map((o) => [o.slice(0, o.indexOf("=")), o.slice(o.indexOf("=") + 1)]));
const keep = named.get("rftKeep"), samples = named.get("samples");
const bad = opts.filter((o) => !/^(rftKeep=(better|correct)|samples=[1-9][0-9]*)$/.test(o));
if (!out || !SIZES[size] || bad.length > 0) {
  console.error(`usage: deno run -A bench/evidence/demo-notebooks.ts OUT_DIR [h200|tiny] [rftKeep=better|correct] [samples=N]${bad.length ? ` (not understood: ${bad.join(" ")})` : ""}`);
  Deno.exit(2);
}
const warmupVariant = { ...(keep ? { rftKeep: keep } : {}), ...(samples ? { samplesPerQuestion: Number(samples) } : {}) };
const variant = Object.entries(warmupVariant).map(([k, v]) => `${k} ${v}`).join(", ");
await Deno.mkdir(out, { recursive: true });
for (const [mode, evidence] of [["knowledge", false], ["bird", true]] as const) {
  const cells = demo.cells.map((c) => ({ ...c, params: { ...c.params, ...SIZES[size](c), ...(c.type === "prompt" ? { evidence } : {}), ...(c.type === "warmup" ? warmupVariant : {}) } }));
  const nb = { ...demo, title: `${demo.title} (${mode} mode, ${size}${variant ? `; warm-up ${variant}` : ""})`, cells };
  await Deno.writeTextFile(`${out}/demo-${mode}.json`, JSON.stringify(nb, null, 1) + "\n");
}
console.log(`wrote ${out}/demo-knowledge.json and ${out}/demo-bird.json (${size}${variant ? `; warm-up ${variant}` : ""})`);
