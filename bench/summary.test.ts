import { assert, assertEquals } from "../tests/assert.ts";
import { readRecords, validateRecord } from "./records.ts";
import { currentFigures, formatValue, trend, withFigures } from "./summary.ts";

const rec = (date: string, tokS: number, device = "NVIDIA H100 80GB HBM3") =>
  validateRecord({
    suite: "train-step",
    commit: "abcdef0",
    date,
    device,
    engine: "dawn",
    command: "deno run -A bench/run.ts train-step",
    figures: { tok_s: tokS, recompute_tok_s: 1, peak_bytes: 2_985_334_596 },
    reference: { torch_tok_s: 2 * tokS },
  });

Deno.test("summary: the trend gives each figure's change from the record before, within one device", () => {
  const out = trend([rec("2026-12-05", 10_000), rec("2026-12-06", 10_500), rec("2026-12-06", 99, "NVIDIA H200")]);
  assert(out.includes("| 2026-12-06 | abcdef0 | 10,500 (+5.0%) |"), out);
  assert(out.includes("train-step · NVIDIA H200 · dawn (1 record)"), out);
  assert(!out.includes("99 ("), "no change across devices");
  assert(out.includes("| 0.50 |"), "ours / reference");
});

Deno.test("summary: the current figures are the newest record of each group", () => {
  const table = currentFigures([rec("2026-12-06", 12_000), rec("2026-12-05", 10_000)]);
  assert(table.includes("tok_s 12,000") && !table.includes("tok_s 10,000"), table);
  assertEquals(formatValue("peak_bytes", 2_985_334_596), "2.99 GB");
});

Deno.test("summary: docs/performance.md's figures are current with bench/results/records.jsonl", () => {
  const root = new URL("..", import.meta.url).pathname;
  const page = Deno.readTextFileSync(`${root}docs/performance.md`);
  const want = withFigures(page, currentFigures(readRecords(`${root}bench/results/records.jsonl`)));
  assert(page === want, "docs/performance.md's table is stale: run deno run -A bench/summary.ts --docs");
});
