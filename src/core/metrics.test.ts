import { assert, assertClose, assertEquals } from "../../tests/assert.ts";
import {
  Aggregator,
  decodeMetrics,
  encodeMetrics,
  type MetricsRecord,
  namesCells,
  resumedOnce,
  summarize,
  withSteps,
} from "./metrics.ts";
import { Rng } from "./rng.ts";

function twoPass(xs: number[]) {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const std = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length);
  return [xs.length, mean, std, Math.min(...xs), Math.max(...xs)];
}

Deno.test("Aggregator: matches a two-pass computation, merge equals one stream, large offsets stay accurate", () => {
  const rng = new Rng(1);
  const xs = Array.from({ length: 1001 }, () => 1e9 + rng.normal() * 3);
  const s = summarize(xs);
  assertClose([s.count, s.mean, s.std, s.min, s.max], twoPass(xs), { atol: 0, rtol: 1e-7 });
  const a = new Aggregator().addAll(xs.slice(0, 300));
  const b = new Aggregator().addAll(xs.slice(300));
  const m = a.merge(b).summary();
  assertClose([m.count, m.mean, m.std, m.min, m.max], twoPass(xs), { atol: 0, rtol: 1e-7 });
  assertEquals(new Aggregator().summary(), { count: 0, mean: 0, std: 0, min: 0, max: 0 });
  assertEquals(new Aggregator().merge(new Aggregator().add(2)).summary(), {
    count: 1,
    mean: 2,
    std: 0,
    min: 2,
    max: 2,
  });
  let threw = false;
  try {
    new Aggregator().add(NaN);
  } catch {
    threw = true;
  }
  assert(threw, "NaN refused");
});

const record = (step: number): MetricsRecord => ({
  v: 1,
  step,
  phase: "grpo",
  time: 1764400000000 + step,
  ms: { sample: 1200, score: 80, train: 900 },
  tokensPerSec: { sample: 410.5, train: 3000 },
  rewards: { execution: { mean: 0.4, std: 0.49 }, format: { mean: 0.9, std: 0.3 }, total: { mean: 1.3, std: 0.6 } },
  execAccuracy: 0.4,
  equalGroupFraction: 0.25,
  kl: 0.001,
  entropy: 0.7,
  clipFrac: { low: 0.01, high: 0.02 },
  completionLength: { count: 64, mean: 88, std: 20, min: 31, max: 256 },
  gpuMemoryBytes: 2 ** 31,
});

Deno.test("metrics JSONL: round trip, truncated last line dropped, corrupt middle line reported", () => {
  const text = [1, 2, 3].map((i) => encodeMetrics(record(i))).join("");
  assertEquals(decodeMetrics(text), { records: [record(1), record(2), record(3)], errors: [], truncated: false });
  // A crash mid-write: every prefix decodes without throwing, keeps every complete record.
  for (let cut = 0; cut < text.length; cut++) {
    const d = decodeMetrics(text.slice(0, cut));
    assertEquals(d.errors, [], `cut at ${cut}`);
    const complete = text.slice(0, cut).split("\n").length - 1;
    assert(
      d.records.length === complete || (d.records.length === complete + 1 && !d.truncated),
      `cut at ${cut}: ${d.records.length} records`,
    );
  }
  const cut = decodeMetrics(text.slice(0, text.length - 10));
  assert(cut.truncated && cut.records.length === 2, "last line cut off");
  const bad = decodeMetrics(encodeMetrics(record(1)) + "{oops\n" + '{"v":2,"step":1}\n' + encodeMetrics(record(4)));
  assertEquals(bad.records.map((r) => r.step), [1, 4]);
  assertEquals(bad.errors.map((e) => e.line), [2, 3]);
  assert(/version/.test(bad.errors[1].message), bad.errors[1].message);
  const nan = decodeMetrics(encodeMetrics({ ...record(5), kl: NaN }));
  assert(Number.isNaN(nan.records[0].kl), "NaN survives as NaN");
});

Deno.test("metrics: records name their cell; a resumed cell's repeated steps replace only that cell's (resumedOnce, withSteps)", () => {
  const r = (cell: string | undefined, phase: MetricsRecord["phase"], step: number, loss = step): MetricsRecord => ({
    v: 1,
    phase,
    step,
    time: 0,
    loss,
    ...(cell === undefined ? {} : { cell }),
  });
  // The cell survives the round trip; a cell that is not a string is a bad record.
  assertEquals(decodeMetrics(encodeMetrics(r("g1", "grpo", 1))).records, [r("g1", "grpo", 1)]);
  const bad = decodeMetrics(JSON.stringify({ ...r(undefined, "grpo", 1), cell: 3 }) + "\n");
  assertEquals(bad.errors.map((e) => e.message), ["cell is not a string"]);
  // Two GRPO cells of one file, the first resumed from step 2 (step 3 logged twice, the second one wins), the second
  // cell's steps from 1 again: each cell keeps its own steps.
  const file = [
    r("g1", "grpo", 1),
    r("g1", "grpo", 2),
    r("g1", "grpo", 3, 30),
    r("g1", "grpo", 3, 31),
    r("e", "eval", 1),
    r("g2", "grpo", 1),
    r("g2", "grpo", 2),
  ];
  assert(namesCells(file));
  assertEquals(resumedOnce(file).map((x) => `${x.cell}:${x.step}:${x.loss}`), [
    "g1:1:1",
    "g1:2:2",
    "g1:3:31",
    "e:1:1",
    "g2:1:1",
    "g2:2:2",
  ]);
  // An older file (no cell): as it is, since its second GRPO cell's step 1 cannot be told from a resume.
  const old = file.map(({ cell: _c, ...x }) => x as MetricsRecord);
  assert(!namesCells(old));
  assertEquals(resumedOnce(old).length, old.length);
  // withSteps on one cell's records without cells: as before.
  assertEquals(withSteps([], old.filter((x) => x.phase === "grpo").slice(0, 4)).map((x) => x.loss), [1, 2, 31]);
});
