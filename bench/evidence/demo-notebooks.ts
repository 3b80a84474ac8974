// The evidence notebooks of issue #19, made from the built-in demo notebook (notebooks/demo.json) so
// they measure exactly what the page runs: `demo-knowledge.json` (its prompt cell as shipped:
// evidence off) and `demo-bird.json` (evidence on), at one of two sizes:
//   h200  the shipped parameters with 8 warm-up samples per question and every question of a split
//         in each evaluation (the laptop notebook's sizes otherwise);
//   tiny  a smoke test for a CPU machine: 2 questions per split, 4-token answers, 2 GRPO steps.
// Usage: deno run -A bench/evidence/demo-notebooks.ts OUT_DIR [h200|tiny]
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

const [out, size = "h200"] = Deno.args;
if (!out || !SIZES[size]) {
  console.error("usage: deno run -A bench/evidence/demo-notebooks.ts OUT_DIR [h200|tiny]");
  Deno.exit(2);
}
await Deno.mkdir(out, { recursive: true });
for (const [mode, evidence] of [["knowledge", false], ["bird", true]] as const) {
  const cells = demo.cells.map((c) => ({ ...c, params: { ...c.params, ...SIZES[size](c), ...(c.type === "prompt" ? { evidence } : {}) } }));
  const nb = { ...demo, title: `${demo.title} (${mode} mode, ${size})`, cells };
  await Deno.writeTextFile(`${out}/demo-${mode}.json`, JSON.stringify(nb, null, 1) + "\n");
}
console.log(`wrote ${out}/demo-knowledge.json and ${out}/demo-bird.json (${size})`);
