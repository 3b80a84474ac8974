// The label search on real SQL (no GPU): chains of CTEs written by a scripted sampler for a demo
// shop question, split by core/prm-steps.ts, continued from their step prefixes and judged by
// executing them on the shop database against the gold, as the PRM data cell does. The truth of a
// prefix (can some continuation reach the gold?) is found by trying every continuation.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { labelQuestions, type RolloutEnv } from "../../core/prm-label.ts";
import { prmStepSpans } from "../../core/prm-steps.ts";
import { REWARD_PRESETS } from "../../core/rewards.ts";
import { Rng } from "../../core/rng.ts";
import type { Task } from "../../core/types.ts";
import { DEFAULT_LIMITS, GuardedDatabase } from "../sql-exec.ts";
import { loadSqlJs } from "../sql-wasm.ts";
import { Scorer } from "../recipe/scoring.ts";

const SQL = await loadSqlJs();
const demo = new URL("../../../public/demo/", import.meta.url);
const shop = new GuardedDatabase(SQL, await Deno.readFile(new URL("shop/shop.sqlite", demo)));
const runner = { query: (_db: string, sql: string) => Promise.resolve(shop.query(sql, DEFAULT_LIMITS)) };
// A question on the demo's shop database (written here: the demo's own questions change with its data).
const task: Task = {
  id: "shop.active-books",
  db_id: "shop",
  question: "Which active products are in the Books category?",
  gold_sql: "SELECT name FROM products WHERE category = 'Books' AND is_active = 1",
};
const scorer = new Scorer(runner, REWARD_PRESETS.databricks, "set", "sql-block");

// Each step has a right and a wrong version; a chain is three of them, as the chain-of-ctes@1 prompt asks.
const STEPS = [
  [
    "books AS (\n  SELECT name, is_active FROM products WHERE category = 'Books'\n)",
    "books AS (\n  SELECT name, is_active FROM products WHERE category = 'Toys'\n)",
  ],
  [
    "active AS (\n  SELECT name FROM books WHERE is_active = 1\n)",
    "active AS (\n  SELECT name FROM books WHERE is_active = 0\n)",
  ],
  ["SELECT name FROM active", "SELECT COUNT(*) FROM active"],
] as const;
const chain = (picks: number[]) =>
  "```sql\nWITH " + `${STEPS[0][picks[0]]},\n${STEPS[1][picks[1]]}\n${STEPS[2][picks[2]]}` + "\n```";
const stepsIn = (prefix: string) => (prefix === "" ? 0 : prmStepSpans(prefix + "\n```").ends.length);

/** Every continuation of the prefix that holds `have` steps chosen as `picks`. */
function continuations(picks: number[]): string[] {
  if (picks.length === 3) return [chain(picks)];
  return [0, 1].flatMap((c) => continuations([...picks, c]));
}

Deno.test("label search on the shop database: steps split from real chains, prefixes continued and executed; positives sound, first errors never after the true ones", async () => {
  const picksOf = (text: string) => STEPS.map((alts) => alts.findIndex((a) => text.includes(a)));
  const env: RolloutEnv = {
    async sample(requests, n, wave) {
      return requests.map((r, i) =>
        Array.from({ length: n }, (_, j) => {
          const rng = new Rng((wave * 7919 + i * 131 + j + 1) >>> 0);
          const have = stepsIn(r.prefix);
          const picks = [
            ...picksOf(r.prefix).slice(0, have),
            ...Array.from({ length: 3 - have }, () => (rng.next() < 0.6 ? 0 : 1)),
          ];
          const full = chain(picks);
          assert(
            r.prefix === "" || full.startsWith(r.prefix),
            `the prefix ${JSON.stringify(r.prefix)} starts its chain`,
          );
          return full.slice(r.prefix.length);
        })
      );
    },
    judge: async (_q, answers) =>
      (await Promise.all(answers.map((a) => scorer.execute(task, a)))).map((x) => x.correct),
    steps: (answer) => {
      const s = prmStepSpans(answer);
      return { ends: s.ends, lastIsFinal: s.names.at(-1) === null };
    },
  };
  const r = await labelQuestions(1, env, { chains: 6, rollouts: 8, budget: 200, maxSteps: 8 });
  // The truth of each prefix: some continuation of it reaches the gold.
  const truth = async (text: string, k: number) => {
    const picks = picksOf(text).slice(0, k + 1);
    return (await env.judge(0, continuations(picks))).some(Boolean);
  };
  assert(r.chains.length >= 6 && r.chains.some((c) => !c.correct), `chains ${r.chains.length}`);
  for (const c of r.chains) {
    assertEquals(c.ends.length, 3, `three steps in ${c.completion}`);
    for (const [k, y] of c.labels.entries()) {
      const t = await truth(c.completion, k);
      if (y === 1) {
        assert(
          t,
          `step ${k} of ${JSON.stringify(c.completion)} labelled correct, but nothing after it reaches the gold`,
        );
      } else assert(!t || c.rates[k] === 0, `step ${k} labelled wrong`);
    }
    if (c.firstError !== null) {
      let trueFirst = -1;
      for (let k = 0; k < 3 && trueFirst < 0; k++) if (!(await truth(c.completion, k))) trueFirst = k;
      assert(
        trueFirst >= 0 && c.firstError <= trueFirst,
        `first error ${c.firstError} vs true ${trueFirst} in ${c.completion}`,
      );
    }
  }
  const fe = r.chains.filter((c) => c.firstError !== null).map((c) => c.firstError);
  assert(new Set(fe).size >= 2, `first errors at several positions: ${fe}`);
  console.log(
    `${r.chains.length} chains (${r.chains.filter((c) => c.correct).length} correct, ${
      r.chains.filter((c) => c.source === "rollout").length
    } from rollouts), first errors ${JSON.stringify(fe)}, ${r.rollouts[0]} rollouts in ${r.waves} waves`,
  );
});
