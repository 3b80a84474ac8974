import { assertEquals } from "../tests/assert.ts";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendRecords, latestBySuite, readRecords, validateRecord } from "./records.ts";

function assertThrows(fn: () => unknown, _type: ErrorConstructor, includes: string): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof Error) || !e.message.includes(includes)) {
      throw new Error(`expected an error with "${includes}", got ${e}`);
    }
    return;
  }
  throw new Error(`expected an error with "${includes}", nothing was thrown`);
}

const good = () => ({
  suite: "train-step",
  commit: "7615547",
  date: "2026-12-05T21:10:00Z",
  device: "nvidia hopper NVIDIA H100 80GB HBM3",
  engine: "dawn",
  command: "deno run -A bench/run.ts train-step",
  figures: { tok_s: 13_000, recompute_tok_s: 10_500, peak_bytes: 2_985_334_596 },
  reference: { torch_tok_s: 24_000 },
});

Deno.test("records: a whole train-step record validates and keeps its fields", () => {
  const r = validateRecord({ ...good(), notes: "n", runs: 3 });
  assertEquals(r.figures.peak_bytes, 2_985_334_596);
  assertEquals(r.notes, "n");
  assertEquals(r.runs, 3);
});

Deno.test("records: the error names the bad field", () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ ...good(), engine: "wgpu" }, "engine"],
    [{ ...good(), commit: "HEAD" }, "commit"],
    [{ ...good(), date: "yesterday" }, "date"],
    [{ ...good(), device: "" }, "device"],
    [{ ...good(), figures: { ...good().figures, tok_s: "fast" } }, "figures.tok_s"],
    [{ ...good(), figures: { tok_s: 1, peak_bytes: 2 } }, "figures.recompute_tok_s"],
    [{ ...good(), reference: {} }, "reference.torch_tok_s"],
    [{ ...good(), speed: 1 }, "speed"],
    [{ ...good(), runs: 0 }, "runs"],
  ];
  for (const [rec, field] of cases) assertThrows(() => validateRecord(rec), Error, `bench record: ${field} `);
});

Deno.test("records: each known suite's required figures are enforced; an unknown suite needs none", () => {
  const base = { ...good(), figures: {}, reference: {} };
  assertThrows(() => validateRecord({ ...base, suite: "pretrain" }), Error, "figures.tok_s");
  assertThrows(() => validateRecord({ ...base, suite: "grpo-step" }), Error, "figures.hub_step_s");
  assertThrows(() => validateRecord({ ...base, suite: "decode" }), Error, "figures.tok_s_b8");
  assertThrows(
    () => validateRecord({ ...base, suite: "decode", figures: { tok_s_b8: 1, tok_s_b64: 2, first_token_ms_b8: 3 } }),
    Error,
    "reference.transformers_tok_s_b8",
  );
  assertEquals(validateRecord({ ...base, suite: "products" }).suite, "products");
});

Deno.test("records: append validates all before writing; read returns them and names a bad line", () => {
  const dir = mkdtempSync(join(tmpdir(), "records-"));
  const path = join(dir, "r.jsonl");
  assertEquals(readRecords(path), []);
  appendRecords(path, [good()]);
  assertThrows(
    () => appendRecords(path, [good(), { ...good(), engine: "x" }]),
    Error,
    "record 1: bench record: engine",
  );
  assertEquals(readFileSync(path, "utf8").trim().split("\n").length, 1);
  appendRecords(path, [{ ...good(), date: "2026-12-06T10:00:00Z", figures: { ...good().figures, tok_s: 14_000 } }]);
  const back = readRecords(path);
  assertEquals(back.length, 2);
  assertEquals(latestBySuite(back).get("train-step")?.figures.tok_s, 14_000);
  writeFileSync(path, readFileSync(path, "utf8") + "{oops\n");
  assertThrows(() => readRecords(path), Error, "r.jsonl:3: not JSON");
});

Deno.test("records: bench/results/records.jsonl validates", () => {
  const records = readRecords(new URL("./results/records.jsonl", import.meta.url).pathname);
  for (const suite of ["train-step", "pretrain"]) {
    if (!records.some((r) => r.suite === suite)) throw new Error(`records.jsonl has no ${suite} record`);
  }
});
