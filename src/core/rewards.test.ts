import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import type { Extraction } from "./extract.ts";
import { extractSql } from "./extract.ts";
import type { RewardInput, RewardSpec } from "./rewards.ts";
import { compileRewardSpec, REWARD_PRESETS, scoreSample, usesPrm, validateRewardSpec } from "./rewards.ts";
import type { ExecErrorKind, ExecOutcome } from "./types.ts";

const GOOD = "<think>count rows</think>\n<answer>SELECT count(*) FROM t</answer>";
const ok = (correct: boolean): ExecOutcome => ({ correct, error: null, ms: 1 });
const failed = (kind: ExecErrorKind): ExecOutcome => ({ correct: false, error: { kind, message: kind }, ms: 1 });

function sample(completion: string, outcome: ExecOutcome | null, completionTokens = 10): RewardInput {
  const extraction: Extraction = extractSql(completion);
  return { completion, completionTokens, extraction, outcome: extraction.sql === null ? null : outcome };
}

const one = (name: string, params?: Record<string, unknown>) =>
  compileRewardSpec({ components: [{ name, weight: 1, params }] });

Deno.test("execution: 1 only when extracted and correct", () => {
  const s = one("execution");
  assertEquals(s(sample(GOOD, ok(true))).total, 1);
  assertEquals(s(sample(GOOD, ok(false))).total, 0);
  assertEquals(s(sample(GOOD, failed("syntax"))).total, 0);
  assertEquals(s(sample("no sql here", null)).total, 0);
});

Deno.test("error_penalty: -1 for syntax/runtime/forbidden/empty and for no SQL; not for wrong, timeout, capped, worker", () => {
  const s = one("error_penalty");
  for (const k of ["syntax", "runtime", "forbidden", "empty"] as const) {
    assertEquals(s(sample(GOOD, failed(k))).total, -1, k);
  }
  for (const k of ["timeout", "capped", "worker"] as const) assertEquals(s(sample(GOOD, failed(k))).total, 0, k);
  assertEquals(s(sample(GOOD, ok(false))).total, 0);
  assertEquals(s(sample(GOOD, ok(true))).total, 0);
  assertEquals(s(sample("I cannot answer", null)).total, -1);
  assertEquals(s(sample("<answer></answer>", null)).total, -1, "empty answer");
  const custom = one("error_penalty", { value: -2, kinds: ["timeout"], noSql: false });
  assertEquals(custom(sample(GOOD, failed("timeout"))).total, -2);
  assertEquals(custom(sample(GOOD, failed("syntax"))).total, 0);
  assertEquals(custom(sample("nothing", null)).total, 0);
});

Deno.test("executable_credit (Arctic): 1 correct, 0.1 ran but wrong, 0 otherwise", () => {
  const s = one("executable_credit");
  assertEquals(s(sample(GOOD, ok(true))).total, 1);
  assertEquals(s(sample(GOOD, ok(false))).total, 0.1);
  assertEquals(s(sample(GOOD, failed("runtime"))).total, 0);
  assertEquals(s(sample(GOOD, failed("capped"))).total, 0, "a capped result did not run cleanly");
  assertEquals(s(sample("nothing", null)).total, 0);
  assertEquals(one("executable_credit", { executed: 0.2, correct: 2 })(sample(GOOD, ok(false))).total, 0.2);
});

Deno.test("format 1 for strict, soft_format 0.5 for tags in order; other tags and a prefix", () => {
  const strict = one("format");
  const soft = one("soft_format");
  assertEquals([strict(sample(GOOD, ok(true))).total, soft(sample(GOOD, ok(true))).total], [1, 0.5]);
  const chatty = "Sure. <think>x</think> <answer>SELECT 1</answer> Hope this helps!";
  assertEquals([strict(sample(chatty, ok(true))).total, soft(sample(chatty, ok(true))).total], [0, 0.5]);
  const bare = "```sql\nSELECT 1\n```";
  assertEquals([strict(sample(bare, ok(true))).total, soft(sample(bare, ok(true))).total], [0, 0]);
  const r = "<reasoning>r</reasoning><answer>SELECT 1</answer>";
  assertEquals(one("format", { tags: ["reasoning", "answer"] })(sample(r, ok(true))).total, 1);
  assertEquals(one("format", { prefix: "<think>\n" })(sample("x</think><answer>SELECT 1</answer>", ok(true))).total, 1);
});

Deno.test("length: -0.5 only above k tokens", () => {
  const s = one("length", { maxTokens: 100 });
  assertEquals(s(sample(GOOD, ok(true), 100)).total, 0);
  assertEquals(s(sample(GOOD, ok(true), 101)).total, -0.5);
  assertEquals(one("length", { maxTokens: 0, value: -1 })(sample(GOOD, ok(true), 1)).total, -1);
});

Deno.test("weights combine; components report raw values, weighted sums to total", () => {
  const spec: RewardSpec = {
    components: [
      { name: "execution", weight: 2 },
      { name: "error_penalty", weight: 0.5 },
      { name: "format", weight: 0.25 },
      { name: "length", weight: 1, params: { maxTokens: 5 }, label: "too_long" },
      { name: "length", weight: 1, params: { maxTokens: 50, value: -3 }, label: "way_too_long" },
    ],
  };
  assertEquals(scoreSample(spec, sample(GOOD, ok(true), 10)), {
    total: 2 + 0.25 - 0.5,
    components: { execution: 1, error_penalty: 0, format: 1, too_long: -0.5, way_too_long: 0 },
    weighted: { execution: 2, error_penalty: 0, format: 0.25, too_long: -0.5, way_too_long: 0 },
  });
  assertEquals(scoreSample(spec, sample("oops", null, 60)).total, -0.5 - 0.5 - 3);
});

Deno.test("presets: databricks, arctic, reasoning-r1 score as documented", () => {
  const d = (x: RewardInput) => scoreSample(REWARD_PRESETS.databricks, x).total;
  assertEquals([
    d(sample(GOOD, ok(true))),
    d(sample(GOOD, ok(false))),
    d(sample(GOOD, failed("syntax"))),
    d(sample("x", null)),
  ], [1, 0, -1, -1]);
  const a = (x: RewardInput) => scoreSample(REWARD_PRESETS.arctic, x).total;
  assertEquals([a(sample(GOOD, ok(true))), a(sample(GOOD, ok(false))), a(sample(GOOD, failed("syntax")))], [1, 0.1, 0]);
  const r = scoreSample(REWARD_PRESETS["reasoning-r1"], sample(GOOD, ok(true), 2000));
  assertEquals(r.components, { execution: 1, format: 1, length: -0.5 });
  assertEquals(r.total, 1.5);
  // Presets are plain JSON: they survive a round trip and validate.
  for (const p of Object.values(REWARD_PRESETS)) assertEquals(validateRewardSpec(JSON.parse(JSON.stringify(p))), p);
});

Deno.test("validation: unknown names, bad weights and params are clear errors", async () => {
  const bad = async (spec: unknown, re: RegExp) => await assertRejects(() => validateRewardSpec(spec), re);
  await bad(
    { components: [{ name: "exec", weight: 1 }] },
    /unknown reward component "exec" \(known: execution, error_penalty/,
  );
  await bad({}, /expected \{ components/);
  await bad({ components: [] }, /no components/);
  await bad({ components: [{ name: "execution" }] }, /finite numeric weight/);
  await bad({ components: [{ name: "execution", weight: NaN }] }, /finite numeric weight/);
  await bad({ components: [{ name: "length", weight: 1 }] }, /needs params.maxTokens/);
  await bad(
    { components: [{ name: "length", weight: 1, params: { maxTokens: 1.5 } }] },
    /"maxTokens" has a bad value 1.5/,
  );
  await bad(
    { components: [{ name: "length", weight: 1, params: { max: 5 } }] },
    /no parameter "max" \(known: maxTokens, value\)/,
  );
  await bad({ components: [{ name: "execution", weight: 1, params: { x: 1 } }] }, /no parameter "x" \(known: none\)/);
  await bad(
    { components: [{ name: "error_penalty", weight: 1, params: { kinds: ["syntax", "oops"] } }] },
    /"kinds" has a bad value/,
  );
  await bad({ components: [{ name: "format", weight: 1, params: { tags: [] } }] }, /"tags" has a bad value/);
  await bad({ components: [{ name: "execution", weight: 1 }, { name: "execution", weight: 2 }] }, /appears twice/);
  await assertRejects(
    () =>
      one("execution")({
        completion: "SELECT 1",
        completionTokens: 3,
        extraction: { sql: "SELECT 1", source: "whole-text" },
        outcome: null,
      }),
    /no execution outcome/,
  );
});

Deno.test("prm component: the mean of the PRM's step scores (or min/last/product), 0 without steps, an error without scores", () => {
  const spec = validateRewardSpec({
    components: [{ name: "execution", weight: 1 }, { name: "prm", weight: 0.5 }, {
      name: "prm",
      weight: 1,
      label: "prm_min",
      params: { aggregate: "min" },
    }],
  });
  assert(usesPrm(spec), "usesPrm");
  const extraction = { sql: "SELECT 1", source: "sql-block" as const };
  const outcome = { correct: true, error: null, ms: 1 };
  const s = scoreSample(spec, { completion: "x", completionTokens: 1, extraction, outcome, prmScores: [0.9, 0.3] });
  assert(Math.abs(s.components.prm - 0.6) < 1e-12 && s.components.prm_min === 0.3, JSON.stringify(s));
  assert(Math.abs(s.total - (1 + 0.3 + 0.3)) < 1e-12, `total ${s.total}`);
  assertEquals(
    scoreSample(spec, {
      completion: "",
      completionTokens: 0,
      extraction: { sql: null, reason: "empty completion" },
      outcome: null,
      prmScores: [],
    }).components.prm,
    0,
  );
  let msg = "";
  try {
    scoreSample(spec, { completion: "x", completionTokens: 1, extraction, outcome });
  } catch (e) {
    msg = e instanceof Error ? e.message : String(e);
  }
  assert(msg.includes("PRM train cell"), msg);
  let bad = "";
  try {
    validateRewardSpec({ components: [{ name: "prm", weight: 1, params: { aggregate: "max" } }] });
  } catch (e) {
    bad = e instanceof Error ? e.message : String(e);
  }
  assert(bad.includes('"prm" parameter "aggregate"'), bad);
  assert(!usesPrm(REWARD_PRESETS.databricks), "presets have no prm component");
});

Deno.test("reward spec: parameters named after Object.prototype members are unknown, not accepted (issue 47 item 12)", async () => {
  for (const k of ["constructor", "toString", "hasOwnProperty", "__proto__", "valueOf"]) {
    const params = JSON.parse(`{${JSON.stringify(k)}: 1}`);
    for (const name of ["execution", "length"]) {
      const spec = {
        components: [{ name, weight: 1, params: name === "length" ? { maxTokens: 8, ...params } : params }],
      };
      await assertRejects(() => validateRewardSpec(spec), new RegExp(`has no parameter "${k}"`));
    }
  }
  assertEquals(({} as Record<string, unknown>).polluted, undefined);
});
