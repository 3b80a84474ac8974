// The evidence notebooks of issue #19, made from the built-in demo notebook (notebooks/demo.json) so
// they measure exactly what the page runs: `demo-knowledge.json` (its prompt cell as shipped:
// evidence off) and `demo-bird.json` (evidence on), at one of two sizes:
//   h200  the shipped parameters with 8 warm-up samples per question and every question of a split
//         in each evaluation (the laptop notebook's sizes otherwise);
//   tiny  a smoke test for a CPU machine: 2 questions per split, 4-token answers, 2 GRPO steps.
// Usage: deno run -A bench/evidence/demo-notebooks.ts OUT_DIR [h200|tiny] [rftKeep=better|correct] [samples=N]
//          [epochs=N] [rounds=N] [lr=X] [perQuestion=N] [grpoLr=X] [grpoSteps=N] [name=SUFFIX] [modes=knowledge,bird]
//          [stages=baseline] [splits=S,S]
//   rftKeep, samples, epochs, rounds, lr, perQuestion: the warm-up's kept samples, samples per question, passes
//   over its targets, rounds, learning rate and cap of different kept answers per question (rftPerQuestion) — a
//   variant of the measurement; grpoLr, grpoSteps: the GRPO cell's learning rate and steps; the notebook's own values otherwise, the size's for samples; name: write demo-<mode>-SUFFIX.json instead (a variant beside the main notebooks,
//   which h200-demo.sh runs as EV_EXTRA="<mode>-SUFFIX:<seed>"); modes: which of the two to write;
//   stages=baseline: only the baseline evaluations (no training cell, no later evaluation: a new base model's
//   greedy figures, bench/evidence/h200-written.sh); splits: only the evaluations of these splits.
import demo from "../../notebooks/demo.json" with { type: "json" };

type Cell = (typeof demo.cells)[number];

const SIZES: Record<string, (c: Cell) => Record<string, unknown>> = {
  h200: (c) => {
    switch (c.type) {
      case "warmup":
        return { samplesPerQuestion: 8 };
      case "grpo":
        return { evalN: 96 };
      default:
        return {};
    }
  },
  tiny: (c) => {
    switch (c.type) {
      case "dataset":
        return { limit: 2 };
      case "evaluate":
        return { n: 2, maxNewTokens: 4 };
      case "warmup":
        return { samplesPerQuestion: 2, maxNewTokens: 4 };
      case "grpo":
        return { G: 2, batchQuestions: 1, steps: 2, maxNewTokens: 4, evalEvery: 1, evalN: 2 };
      case "selfconsistency":
        return { N: 2, n: 2, maxNewTokens: 4 };
      default:
        return {};
    }
  },
};

const [out, size = "h200", ...opts] = Deno.args;
const named = new Map(opts.map((o) => [o.slice(0, o.indexOf("=")), o.slice(o.indexOf("=") + 1)]));
const name = named.get("name"), modes = (named.get("modes") ?? "knowledge,bird").split(",");
const baselineOnly = named.get("stages") === "baseline";
const onlySplits = named.get("splits")?.split(",");
const bad = opts.filter((o) =>
  !/^(stages=baseline|splits=[a-z-]+(,[a-z-]+)*|rftKeep=(better|correct)|(samples|epochs|rounds)=[1-9][0-9]*|perQuestion=[0-9]+|(lr|grpoLr)=[0-9.]+(e-?[0-9]+)?|grpoSteps=[1-9][0-9]*|name=[a-z0-9]+|modes=(knowledge|bird)(,(knowledge|bird))?)$/
    .test(o)
);
if (!out || !SIZES[size] || bad.length > 0) {
  console.error(
    `usage: deno run -A bench/evidence/demo-notebooks.ts OUT_DIR [h200|tiny] [rftKeep=better|correct] [samples=N] [epochs=N] [rounds=N] [lr=X] [perQuestion=N] [grpoLr=X] [grpoSteps=N] [name=SUFFIX] [modes=knowledge,bird]${
      bad.length ? ` (not understood: ${bad.join(" ")})` : ""
    }`,
  );
  Deno.exit(2);
}
// Option -> the warm-up parameter it sets (all numbers but rftKeep).
const WARMUP_OPTS: Record<string, string> = {
  rftKeep: "rftKeep",
  samples: "samplesPerQuestion",
  epochs: "epochs",
  rounds: "rounds",
  lr: "lr",
  perQuestion: "rftPerQuestion",
};
const warmupVariant = Object.fromEntries(
  Object.entries(WARMUP_OPTS).filter(([o]) => named.has(o)).map((
    [o, k],
  ) => [k, o === "rftKeep" ? named.get(o) : Number(named.get(o))]),
);
// Option -> the GRPO parameter it sets.
const GRPO_OPTS: Record<string, string> = { grpoLr: "lr", grpoSteps: "steps" };
const grpoVariant = Object.fromEntries(
  Object.entries(GRPO_OPTS).filter(([o]) => named.has(o)).map(([o, k]) => [k, Number(named.get(o))]),
);
const variant = [
  ...Object.entries(warmupVariant).map(([k, v]) => `warm-up ${k} ${v}`),
  ...Object.entries(grpoVariant).map(([k, v]) => `GRPO ${k} ${v}`),
].join(", ");
await Deno.mkdir(out, { recursive: true });
const written: string[] = [];
for (const [mode, evidence] of [["knowledge", false], ["bird", true]] as const) {
  if (!modes.includes(mode)) continue;
  const kept = demo.cells.filter((c) => {
    if (
      baselineOnly &&
      (["warmup", "grpo", "selfconsistency", "export"].includes(c.type) ||
        (c.type === "evaluate" && !c.id.startsWith("base-")))
    ) return false;
    return !(onlySplits && c.type === "evaluate" &&
      !onlySplits.includes(String((c.params as { split?: string }).split)));
  });
  const cells = kept.map((c) => ({
    ...c,
    params: {
      ...c.params,
      ...SIZES[size](c),
      ...(c.type === "prompt" ? { evidence } : {}),
      ...(c.type === "warmup" ? warmupVariant : {}),
      ...(c.type === "grpo" ? grpoVariant : {}),
    },
  }));
  const nb = { ...demo, title: `${demo.title} (${mode} mode, ${size}${variant ? `; ${variant}` : ""})`, cells };
  const file = `${out}/demo-${mode}${name ? `-${name}` : ""}.json`;
  await Deno.writeTextFile(file, JSON.stringify(nb, null, 1) + "\n");
  written.push(file);
}
console.log(`wrote ${written.join(" and ")} (${size}${variant ? `; ${variant}` : ""})`);
