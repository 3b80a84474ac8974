// The PRM evidence notebooks (issue #18), on the demo data and on the synthetic-pattern questions
// over the held-out Spider databases (synthetic-heldout.ts writes their files):
//   prm-<set>.json          CoCTE cold start -> PRM data -> PRM train (process) and ORM train (outcome) ->
//                           self-consistency N = 16 before RL (vote@N vs mean-log-prob@N vs PRM@N vs ORM@N at
//                           N = 1, 2, 4, 8, 16) -> GRPO with reward = execution outcome + mean PRM step score and
//                           Reward-SQL's step-level advantages -> greedy evaluation -> self-consistency again
//   prm-<set>-outcome.json  the same cold start, then GRPO with the execution outcome reward alone -> greedy evaluation
//   prm-<set>-stepnorm.json GRPO with DeepSeekMath's per-step normalisation instead, on the PRM of
//                           prm-<set>'s run (run-prm-<set>/prm/prm, loaded: run it after prm-<set>)
// All use the chain-of-ctes@2 prompt (chain-of-ctes@1 with the answer started as "```sql\nWITH" for the model: the
// demo model cannot sample the second token of WITH, docs/prm.md 2026-12-04) and start the same way: a greedy baseline, then the CoCTE cold start — a
// warm-up `sft` with sftTargets "cocte": every training question's gold rewritten as a chain of CTEs and checked by
// execution inside the run (runtime/cocte-convert.ts, the converter of `rlvr cocte`; the chains are written to the
// run's warmup/cold/cocte.jsonl), one round of COLD_EPOCHS passes — then a greedy evaluation whose report counts
// the answers that are chains of two or more steps (EvalReport.chains). Without it the demo model wrote 377 of 384
// answers that were no chain at all (docs/prm.md, 2026-12-02). The demo set runs in BIRD mode (the definitions in
// the prompt, written out though it is the prompt cell's default: the demo model answers 16.7% of test-concepts so
// under omnisql@1, 1% without); the synthetic questions have none.
// Answers get TOKENS new tokens (the demo's gold chains: median 232, 90th percentile 348, longest 473 tokens) and
// prompts the rest of the model's 1024 positions.
// Run: deno run -A bench/evidence/prm-notebooks.ts OUT_DIR [full|session|tiny]
// (h200-prep.sh does; h200.sh runs them as the parts prm-demo, prm-demo-outcome, prm-synth, ...).
// Sizes: `full` (default; the committed bench/evidence/prm-*.json) labels every training question with a budget of
// 48 rollouts and compares best-of-N up to N = 16; `session` is cut to a few device calls (2026-12-04, fifth session, on
// the H200: prm-demo 574 + 518 s beside the five others, prm-synth 364 s beside its two): 96 questions labelled with 4 chains and a budget of 24,
// best-of-N up to N = 16 (up to 8 until the fourth session of 2026-12-04; the first 8 of 16 samples are the 8 drawn
// then, up to floating-point rounding between batch shapes: samples are seeded per call, prompt and index); `tiny` is a smoke test for a CPU machine (lavapipe): 4 questions per split, 8-token
// answers (16 for the cold start's evaluation), 2 GRPO steps, N = 2, cut chains kept for the PRM (dropUnparsed false:
// under chain-of-ctes@2 an 8-token answer is an unfinished chain). The sizes `cold` (the cold start alone, on the CPU
// machine) and `coldsweep` (the cold start at six settings, which picked COLD_EPOCHS and COLD_LR) are in this file at
// 7615547; their figures in bench/evidence/summaries/2026-12-04-prm-cold.json.
export {};
const [out, size = "full"] = Deno.args;
const SIZES = ["full", "session", "tiny"] as const;
type Size = (typeof SIZES)[number];
const isSize = (x: string): x is Size => (SIZES as readonly string[]).includes(x);
if (!out || !isSize(size)) throw new Error("usage: prm-notebooks.ts OUT_DIR [full|session|tiny]");
const small = size === "session", tiny = size === "tiny";

const TOKENS = tiny ? 8 : 384;
const PROMPT_TOKENS = 1024 - 384;
// The cold start: the best of the six settings of the coldsweep on the H200 (2026-12-04,
// docs/prm.md). 4 passes at lr 5e-4 (the setting before) left the model writing no chain at all (0 of 96 demo, 0 of
// 67 synth answers: WITH is the tokens W + ITH, and after "W" it went on with "assword", "roduct", ...); 32 passes at
// lr 1e-3 gave 96 of 96 / 62 of 67 multi-step chains and the highest greedy accuracy of the six (21.9% demo
// test-concepts, 16.4% synth dev), picked on those same splits.
const COLD_EPOCHS = 32, COLD_LR = 0.001;
// tiny cuts every split of the dataset cell to this many questions.
const limit = tiny ? { limit: 4 } : {};
const sets = {
  demo: {
    title: "the demo data with the demo model (BIRD mode)",
    data: {
      id: "data",
      type: "dataset",
      params: { source: "demo", name: "demo", format: "rlvr", split: "train", devFraction: 0.1, seed: 1, ...limit },
    },
    evidence: true,
    eval: "test-concepts",
    extra: [{ id: "heldout_db", type: "evaluate", params: { split: "heldout-db", k: 1, maxNewTokens: TOKENS } }],
  },
  synth: {
    title: "synthetic-pattern questions over Spider databases held out of pretraining",
    data: {
      id: "data",
      type: "dataset",
      params: {
        source: "url",
        questionsUrl: "synthetic-heldout/questions.jsonl",
        dbRoot: "synthetic-heldout/db",
        name: "synthetic-heldout",
        format: "rlvr",
        split: "train",
        devFraction: 0.35,
        seed: 1,
        ...limit,
      },
    },
    evidence: false,
    eval: "dev",
    extra: [],
  },
} as const;

await Deno.mkdir(out, { recursive: true });
const written: string[] = [];
for (const [name, s] of Object.entries(sets)) {
  const evaluate = (id: string, maxNewTokens: number) => ({
    id,
    type: "evaluate",
    params: { split: s.eval, k: 1, maxNewTokens },
  });
  const setup = [
    s.data,
    { id: "model", type: "model", params: { source: "demo", dtype: "f32", loraRank: 16, loraAlpha: 32 } },
    {
      id: "prompt",
      type: "prompt",
      params: { template: "chain-of-ctes@2", maxPromptTokens: PROMPT_TOKENS, evidence: s.evidence },
    },
    { id: "reward", type: "reward", params: { comparison: "set" } },
    evaluate("baseline", tiny ? 16 : TOKENS),
    {
      id: "cold",
      type: "warmup",
      params: { method: "sft", sftTargets: "cocte", rounds: 1, epochs: tiny ? 1 : COLD_EPOCHS, lr: COLD_LR },
    },
    evaluate("cold_eval", tiny ? 16 : TOKENS),
  ];
  const prmCells = [
    {
      id: "labels",
      type: "prmdata",
      params: {
        chains: small ? 4 : 8,
        rollouts: 4,
        budget: small ? 24 : 48,
        maxSteps: 6,
        temperature: 1,
        maxNewTokens: TOKENS,
        questionsPerBatch: 16,
        balance: 1,
        ...(small ? { n: 96 } : {}),
        ...(tiny ? { chains: 2, rollouts: 2, budget: 4, questionsPerBatch: 4, dropUnparsed: false } : {}),
      },
    },
    ...([["prm", "process"], ["orm", "outcome"]] as const).map(([id, labels]) => ({
      id,
      type: "prmtrain",
      params: { labels, loraRank: 16, loraAlpha: 32, lr: 0.0005, epochs: 3, batchChains: 16, devFraction: 0.15 },
    })),
  ];
  const sc = (id: string) => ({
    id,
    type: "selfconsistency",
    params: {
      N: tiny ? 2 : 16,
      vote: "count",
      temperature: 0.8,
      split: s.eval,
      maxNewTokens: TOKENS,
      prm: ["prm", "orm"],
    },
  });
  const grpo = (extra: Record<string, unknown>) => ({
    id: "grpo",
    type: "grpo",
    params: {
      G: tiny ? 2 : 8,
      steps: tiny ? 2 : 20,
      batchQuestions: tiny ? 2 : 8,
      lr: 0.0002,
      kl: 0,
      maxNewTokens: TOKENS,
      evalEvery: 10,
      evalN: tiny ? 4 : 100,
      ...extra,
    },
  });
  const after = [evaluate("after", TOKENS), ...s.extra];
  const withPrm = {
    components: [{ name: "execution", weight: 1 }, { name: "error_penalty", weight: 1 }, { name: "prm", weight: 1 }],
  };
  const notebooks: Record<string, unknown[]> = {
    [`prm-${name}`]: [
      ...setup,
      ...prmCells,
      sc("sc_before"),
      { id: "reward_prm", type: "reward", params: { spec: withPrm } },
      grpo({ stepAdvantage: "prm-weighted", prm: "prm" }),
      ...after,
      sc("sc_after"),
    ],
    [`prm-${name}-outcome`]: [...setup, grpo({}), ...after],
    [`prm-${name}-stepnorm`]: [
      ...setup,
      { id: "prm", type: "prmtrain", params: { load: `run-prm-${name}/prm/prm` } },
      { id: "reward_prm", type: "reward", params: { spec: withPrm } },
      grpo({ stepAdvantage: "per-step-norm", prm: "prm" }),
      ...after,
    ],
  };
  const titles: Record<string, string> = {
    [`prm-${name}`]:
      `Evidence (PRM): CoCTE cold start, PRM data, PRM and ORM, best-of-N, GRPO with PRM + outcome on ${s.title}`,
    [`prm-${name}-outcome`]: `Evidence (PRM): CoCTE cold start, GRPO with the outcome reward alone on ${s.title}`,
    [`prm-${name}-stepnorm`]:
      `Evidence (PRM): CoCTE cold start, GRPO with PRM + outcome and per-step normalised advantages on ${s.title}`,
  };
  for (const [file, cells] of Object.entries(notebooks)) {
    await Deno.writeTextFile(
      `${out}/${file}.json`,
      JSON.stringify(
        { version: 1, title: `${titles[file]}${size === "full" ? "" : ` (${size})`}`, cells },
        null,
        2,
      ) + "\n",
    );
    written.push(`${file}.json`);
  }
}
console.log(`wrote ${written.join(", ")} to ${out} (${size})`);
