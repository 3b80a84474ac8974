// The PRM evidence notebooks (issue #18), on the demo data and on the synthetic-pattern questions
// over the held-out Spider databases (synthetic-heldout.ts writes their files):
//   prm-<set>.json          PRM data -> PRM train (process) and ORM train (outcome) -> self-consistency
//                           N = 16 before RL (vote@N vs mean-log-prob@N vs PRM@N vs ORM@N at N = 1, 2,
//                           4, 8, 16) -> GRPO with reward = execution outcome + mean PRM step score and
//                           Reward-SQL's step-level advantages -> greedy evaluation -> self-consistency again
//   prm-<set>-outcome.json  the same prompt and GRPO with the execution outcome reward alone -> greedy evaluation
//   prm-<set>-stepnorm.json GRPO with DeepSeekMath's per-step normalisation instead, on the PRM of
//                           prm-<set>'s run (run-prm-<set>/prm/prm, loaded: run it after prm-<set>)
// All use the chain-of-ctes@1 prompt. Run: deno run -A bench/evidence/prm-notebooks.ts OUT_DIR [full|session]
// (h200-prep.sh does; h200.sh runs them as the parts prm-demo, prm-demo-outcome, prm-synth, ...).
// Sizes: `full` (default; the committed bench/evidence/prm-*.json) labels every training question with a budget of
// 48 rollouts and compares best-of-N up to N = 16; `session` is cut to fit one device call per notebook (about
// 8 minutes, estimated from the demo GRPO step's 1.1-1.5 s for 32 samples on the H200; not yet measured): 96
// questions labelled with 4 chains and a budget of 24, best-of-N up to N = 8.
export {};
const [out, size = "full"] = Deno.args;
if (!out || (size !== "full" && size !== "session")) throw new Error("usage: prm-notebooks.ts OUT_DIR [full|session]");
const small = size === "session";

const TOKENS = 160;
const sets = {
  demo: {
    title: "the demo data with the demo model",
    data: { id: "data", type: "dataset", params: { source: "demo", name: "demo", format: "rlvr", split: "train", devFraction: 0.1, seed: 1 } },
    eval: "test-concepts",
    extra: [{ id: "heldout_db", type: "evaluate", params: { split: "heldout-db", k: 1, maxNewTokens: TOKENS } }],
  },
  synth: {
    title: "synthetic-pattern questions over Spider databases held out of pretraining",
    data: { id: "data", type: "dataset", params: { source: "url", questionsUrl: "synthetic-heldout/questions.jsonl", dbRoot: "synthetic-heldout/db", name: "synthetic-heldout", format: "rlvr", split: "train", devFraction: 0.35, seed: 1 } },
    eval: "dev",
    extra: [],
  },
} as const;

for (const [name, s] of Object.entries(sets)) {
  const setup = [
    s.data,
    { id: "model", type: "model", params: { source: "demo", dtype: "f32", loraRank: 16, loraAlpha: 32 } },
    { id: "prompt", type: "prompt", params: { template: "chain-of-ctes@1", maxPromptTokens: 800 } },
    { id: "reward", type: "reward", params: { comparison: "set" } },
    { id: "baseline", type: "evaluate", params: { split: s.eval, k: 1, maxNewTokens: TOKENS } },
  ];
  const prmCells = [
    { id: "labels", type: "prmdata", params: { chains: small ? 4 : 8, rollouts: 4, budget: small ? 24 : 48, maxSteps: 6, temperature: 1, maxNewTokens: TOKENS, questionsPerBatch: 16, balance: 1, ...(small ? { n: 96 } : {}) } },
    { id: "prm", type: "prmtrain", params: { labels: "process", loraRank: 16, loraAlpha: 32, lr: 0.0005, epochs: 3, batchChains: 16, devFraction: 0.15 } },
    { id: "orm", type: "prmtrain", params: { labels: "outcome", loraRank: 16, loraAlpha: 32, lr: 0.0005, epochs: 3, batchChains: 16, devFraction: 0.15 } },
  ];
  const sc = (id: string) => ({ id, type: "selfconsistency", params: { N: small ? 8 : 16, vote: "count", temperature: 0.8, split: s.eval, maxNewTokens: TOKENS, prm: ["prm", "orm"] } });
  const grpo = (extra: Record<string, unknown>) => ({ id: "grpo", type: "grpo", params: { G: 8, steps: 20, batchQuestions: 8, lr: 0.0002, kl: 0, maxNewTokens: TOKENS, evalEvery: 10, evalN: 100, ...extra } });
  const after = [{ id: "after", type: "evaluate", params: { split: s.eval, k: 1, maxNewTokens: TOKENS } }, ...s.extra];
  const withPrm = { components: [{ name: "execution", weight: 1 }, { name: "error_penalty", weight: 1 }, { name: "prm", weight: 1 }] };
  const notebooks: Record<string, unknown[]> = {
    [`prm-${name}`]: [...setup, ...prmCells, sc("sc_before"), { id: "reward_prm", type: "reward", params: { spec: withPrm } }, grpo({ stepAdvantage: "prm-weighted" }), ...after, sc("sc_after")],
    [`prm-${name}-outcome`]: [...setup, grpo({}), ...after],
    [`prm-${name}-stepnorm`]: [
      ...setup,
      { id: "prm", type: "prmtrain", params: { load: `run-prm-${name}/prm/prm` } },
      { id: "reward_prm", type: "reward", params: { spec: withPrm } },
      grpo({ stepAdvantage: "per-step-norm" }),
      ...after,
    ],
  };
  const titles: Record<string, string> = {
    [`prm-${name}`]: `Evidence (PRM): PRM data, PRM and ORM, best-of-N, GRPO with PRM + outcome on ${s.title}`,
    [`prm-${name}-outcome`]: `Evidence (PRM): GRPO with the outcome reward alone on ${s.title}`,
    [`prm-${name}-stepnorm`]: `Evidence (PRM): GRPO with PRM + outcome and per-step normalised advantages on ${s.title}`,
  };
  for (const [file, cells] of Object.entries(notebooks)) {
    await Deno.writeTextFile(`${out}/${file}.json`, JSON.stringify({ version: 1, title: titles[file], cells }, null, 2) + "\n");
  }
}
console.log(`wrote ${Object.keys(sets).map((n) => `prm-${n}.json, prm-${n}-outcome.json, prm-${n}-stepnorm.json`).join(", ")} to ${out}`);
