// Pure parts of the recipe (no GPU): splits, scoring against the reward spec on a real demo
// database, BIRD prediction files, answer groups for maj@k, the TRL config and seeds.
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { parsePredictions, parseQuestions } from "../../core/loaders.ts";
import { defaultParams, parseNotebook } from "../../core/notebook.ts";
import { REWARD_PRESETS, scoreSample } from "../../core/rewards.ts";
import { majAtK } from "../../core/selfconsistency.ts";
import type { Task } from "../../core/types.ts";
import { DEFAULT_LIMITS, GuardedDatabase } from "../sql-exec.ts";
import { loadSqlJs } from "../sql-wasm.ts";
import { answerCounts, birdPredictions } from "./common.ts";
import { MemoryStore } from "../store.ts";
import { mixSeed, type RunEnv } from "./context.ts";
import { runNotebook } from "./runner.ts";
import { denoEnv } from "./env.deno.ts";
import { sharedDatasets } from "../../../tests/shared.ts";
import { buildSplits } from "./data.ts";
import { kValues } from "./evaluate.ts";
import { trlConfig, trlLossType } from "./export.ts";
import { Scorer } from "./scoring.ts";

const SQL = await loadSqlJs();
const demo = new URL("../../../public/demo/", import.meta.url);
const shop = new GuardedDatabase(SQL, await Deno.readFile(new URL("shop/shop.sqlite", demo)));
const runner = { query: (_db: string, sql: string) => Promise.resolve(shop.query(sql, DEFAULT_LIMITS)) };
const train: Task[] = parseQuestions(await Deno.readTextFile(new URL("train.jsonl", demo))).items.map((i) => i.task);

Deno.test("recipe/data: dev split is a seeded, disjoint part of the training split; limit applies per split", () => {
  const p = { ...defaultParams("dataset"), split: "train", devFraction: 0.25, seed: 7, limit: 40 };
  const a = buildSplits(p, { train, test: train.slice(0, 50) });
  const b = buildSplits(p, { train, test: train.slice(0, 50) });
  assertEquals(a.dev.map((t) => t.id), b.dev.map((t) => t.id));
  assertEquals(a.dev.length, 10);
  assertEquals(a.train.length, 30);
  assertEquals(a.test.length, 40);
  const trainIds = new Set(a.train.map((t) => t.id));
  assert(a.dev.every((t) => !trainIds.has(t.id)), "dev and train are disjoint");
  const c = buildSplits({ ...p, seed: 8 }, { train });
  assert(
    JSON.stringify(c.dev.map((t) => t.id)) !== JSON.stringify(a.dev.map((t) => t.id)),
    "another seed, another dev split",
  );
});

Deno.test("recipe/scoring: outcomes and rewards agree with scoreSample on the demo shop database", async () => {
  const shopTasks = train.filter((t) => t.db_id === "shop").slice(0, 3);
  const spec = {
    components: [...REWARD_PRESETS.databricks.components, {
      name: "length" as const,
      weight: 1,
      params: { maxTokens: 5 },
    }],
  };
  const scorer = new Scorer(runner, spec, "set", "auto");
  const t = shopTasks[0];
  const completions = [
    ["gold in a block", "```sql\n" + t.gold_sql + "\n```", 20],
    ["gold rows in another order", `<answer>SELECT * FROM (${t.gold_sql}) ORDER BY 1 DESC</answer>`, 3],
    ["wrong rows", "SELECT 1", 2],
    ["syntax error", "```sql\nSELECT name FROM WHERE\n```", 4],
    ["no SQL", "I do not know", 9],
  ] as const;
  const got = [];
  for (const [what, text, tokens] of completions) {
    const s = await scorer.scoreCompletion(t, text, tokens);
    const again = scoreSample(spec, {
      completion: text,
      completionTokens: tokens,
      extraction: s.extraction,
      outcome: s.outcome,
    });
    assertEquals(s.reward, again, `${what}: reward equals scoreSample's`);
    got.push([what, s.correct, s.outcome?.error?.kind ?? null, s.reward.total]);
  }
  assertEquals(got, [
    ["gold in a block", true, null, 1 - 0.5],
    ["gold rows in another order", true, null, 1],
    ["wrong rows", false, null, 0],
    ["syntax error", false, "syntax", -1],
    ["no SQL", false, null, -1 - 0.5],
  ]);
});

Deno.test("recipe/common: BIRD predictions round-trip through parsePredictions", () => {
  const tasks = train.slice(0, 3);
  const dict = birdPredictions(tasks, ["SELECT 1", null, "SELECT name FROM products"]);
  assertEquals(dict["0"], "SELECT 1\t----- bird -----\t" + tasks[0].db_id);
  const back = parsePredictions(JSON.stringify(dict));
  assertEquals(back.format, "bird");
  assertEquals([...back.sql.entries()], [[0, "SELECT 1"], [1, ""], [2, "SELECT name FROM products"]]);
});

Deno.test("recipe/common: answer groups put equal results together and failed runs apart (maj@k input)", async () => {
  const found = train.find((x) => x.db_id === "shop");
  assert(found);
  const t: Task = found;
  const scorer = new Scorer(runner, REWARD_PRESETS.databricks, "set", "auto");
  const texts = [t.gold_sql, `SELECT * FROM (${t.gold_sql}) ORDER BY 1 DESC`, "SELECT 1", "SELEC", "SELECT 1"];
  const scored = await Promise.all(texts.map((x) => scorer.scoreCompletion(t, x, 3)));
  const groups = answerCounts(scored, "set");
  assertEquals(groups.map((g) => [g.count, g.correct, g.failed ?? false]), [[2, true, false], [2, false, false], [
    1,
    false,
    true,
  ]]);
  // Two correct vs two wrong: maj@5 is a coin flip between the tied groups.
  assertEquals(majAtK(groups, 5).value, 0.5);
  assertEquals(kValues(8), [1, 2, 4, 8]);
  assertEquals(kValues(6), [1, 2, 4, 6]);
});

Deno.test("recipe/export: TRL GRPOConfig uses TRL's field names and maps the loss variants", () => {
  const g = {
    ...defaultParams("grpo"),
    G: 8,
    batchQuestions: 4,
    lr: 2e-5,
    kl: 0.01,
    aggregation: "seq-mean-token-sum-norm" as const,
  };
  const cfg = trlConfig(g, { loraRank: 16, loraAlpha: 32 }, ["q_proj", "v_proj"], { maxSteps: 10 });
  const grpo = cfg.grpo_config;
  for (
    const k of [
      "learning_rate",
      "num_generations",
      "max_completion_length",
      "beta",
      "epsilon",
      "epsilon_high",
      "loss_type",
      "scale_rewards",
      "temperature",
      "top_p",
      "per_device_train_batch_size",
      "max_steps",
      "seed",
      "num_iterations",
    ]
  ) {
    assert(k in grpo, `grpo_config.${k}`);
  }
  assertEquals({ ...grpo }, {
    ...grpo,
    learning_rate: 2e-5,
    num_generations: 8,
    per_device_train_batch_size: 32,
    max_steps: 10,
    beta: 0.01,
    loss_type: "dr_grpo",
    scale_rewards: "group",
  });
  assertEquals(cfg.peft_config, {
    r: 16,
    lora_alpha: 32,
    lora_dropout: 0,
    target_modules: ["q_proj", "v_proj"],
    task_type: "CAUSAL_LM",
    bias: "none",
  });
  assertEquals([trlLossType("token-mean"), trlLossType("seq-mean-token-mean")], ["dapo", "grpo"]);
});

Deno.test("recipe/context: mixSeed is deterministic and separates stages and steps", () => {
  assertEquals(mixSeed(1, "grpo", 3), mixSeed(1, "grpo", 3));
  const seen = new Set([mixSeed(1, "grpo", 3), mixSeed(1, "grpo", 4), mixSeed(2, "grpo", 3), mixSeed(1, "warmup", 3)]);
  assertEquals(seen.size, 4);
});

Deno.test("recipe/runner: an error names the cell that failed", async () => {
  const unused = () => Promise.reject(new Error("not used"));
  const env: RunEnv = {
    store: new MemoryStore(),
    loadDataset: () => Promise.reject(new Error("no such file questions.jsonl")),
    sqlRunner: () => ({ query: unused, close: () => {} }),
    schemaOf: unused,
    loadModel: unused,
    adapterSource: () => {
      throw new Error("not used");
    },
    gpuDevice: unused,
    now: () => 0,
  };
  const doc = (cells: unknown[]) => {
    const r = parseNotebook({ version: 1, title: "t", cells });
    assert(r.ok, JSON.stringify(!r.ok && r.errors));
    return r.doc;
  };
  await assertRejects(
    () => runNotebook(doc([{ id: "intro", type: "markdown" }, { id: "d1", type: "dataset" }]), env),
    /^cell "d1" \(dataset\): no such file questions\.jsonl$/,
  );
  await assertRejects(
    () => runNotebook(doc([{ id: "base", type: "evaluate" }]), env),
    /^cell "base" needs a dataset cell before it$/,
  );
  await assertRejects(
    () => runNotebook(doc([{ id: "g", type: "grpo" }]), env),
    /^cell "g" needs a dataset cell before it$/,
  );
});

Deno.test({
  name: "recipe/env: Spider schemas get tables.json's natural names when the dataset cell names tables.json",
  ignore: sharedDatasets === null,
  async fn() {
    const root = `${sharedDatasets}/spider-train`;
    const env = denoEnv({ out: await Deno.makeTempDir(), base: root });
    const p = {
      ...defaultParams("dataset"),
      source: "url" as const,
      format: "spider" as const,
      questionsUrl: "questions.jsonl",
      dbRoot: "database",
    };
    const plain = await env.schemaOf(p, "college_2");
    const described = await env.schemaOf({ ...p, tablesUrl: "tables.json" }, "college_2");
    assertEquals(described.tables.map((t) => t.name), plain.tables.map((t) => t.name));
    const natural = (s: typeof plain) =>
      s.tables.flatMap((t) =>
        t.columns.filter((c) => c.naturalName !== undefined).map((c) => `${t.name}.${c.name}: ${c.naturalName}`)
      );
    assertEquals(natural(plain), []);
    assert(natural(described).length > 0, "some columns get natural names");
    console.log(natural(described).slice(0, 3).join("; "));
  },
});
