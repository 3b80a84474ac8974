import { assert, assertEquals } from "../../tests/assert.ts";
import { curate, decodePrmRecords, encodeJsonl, prmDataStats, type PrmRecord } from "./prm-dataset.ts";

function rec(taskId: string, completion: string, labels: number[], o: Partial<PrmRecord> = {}): PrmRecord {
  const ends = completion.split(";").map((_, k, parts) => parts.slice(0, k + 1).join(";").length);
  const correct = labels.length === ends.length && labels.every((y) => y === 1);
  const firstError = labels.indexOf(0) >= 0 ? labels.indexOf(0) : null;
  return {
    v: 1,
    taskId,
    dbId: "db",
    completion,
    sql: completion,
    ends,
    names: ends.map(() => null),
    labels,
    rates: labels.map(() => null),
    correct,
    firstError,
    complete: correct || firstError !== null,
    source: "sample",
    prefixSteps: 0,
    ...o,
  };
}

const OFF = { dropUnparsed: false, minPositiveRate: 0, balance: 0, seed: 1 };

Deno.test("curate: a zero on a prefix that reached the gold elsewhere is flipped; unparsed, unlabelled and duplicate chains are dropped", () => {
  const rs = [
    rec("q1", "a;b;c", [1, 1, 1]),
    rec("q1", "a;b;x", [1, 0]), // its prefix "a;b" reached the gold in the chain above
    rec("q1", "a;y;z", [1, 0]),
    rec("q1", " A;y;z\n", [1, 0]), // the same answer, up to case and spacing
    rec("q2", "p;q", [], { correct: false, complete: false }),
    rec("q2", "junk", [0], { sql: null }),
  ];
  const { kept, report } = curate(rs, { ...OFF, dropUnparsed: true });
  assertEquals(report, {
    input: 6,
    unparsed: 1,
    unlabelled: 1,
    flipped: 1,
    lowRate: 0,
    duplicates: 1,
    balanced: 0,
    kept: 3,
  });
  assertEquals(kept.map((r) => [r.completion, r.labels, r.firstError, r.complete]), [
    ["a;b;c", [1, 1, 1], null, true],
    ["a;b;x", [1, 1], null, false],
    ["a;y;z", [1, 0], 1, true],
  ]);
  assertEquals(rs[1].labels, [1, 0], "the input is not changed");
});

Deno.test("curate: low-rate positives are cut with what follows; balance keeps at most ratio x the smaller class, seeded", () => {
  const low = curate([rec("q", "a;b;c", [1, 1, 0], { rates: [0.5, 0.125, 0] })], { ...OFF, minPositiveRate: 0.25 });
  assertEquals([low.kept[0].labels, low.report.lowRate], [[1], 2]);
  const rs = [
    ...Array.from({ length: 6 }, (_, i) => rec(`p${i}`, "a;b", [1, 1])),
    rec("n0", "a;b", [1, 0]),
    rec("n1", "a;b", [0]),
  ];
  const b = curate(rs, { ...OFF, balance: 1.5 });
  assertEquals([b.report.balanced, b.kept.length, b.kept.filter((r) => r.labels.includes(0)).length], [3, 5, 2]);
  assertEquals(curate(rs, { ...OFF, balance: 1.5 }).kept.map((r) => r.taskId), b.kept.map((r) => r.taskId));
});

Deno.test("prmDataStats: labels per position and the first-error histogram", () => {
  const s = prmDataStats([
    rec("q1", "a;b;c", [1, 1, 1]),
    rec("q1", "a;b;x", [1, 0]),
    rec("q2", "a;b", [1, 1], { correct: false, complete: true }),
    rec("q2", "a;b;c", [1], { correct: false, complete: false }),
  ]);
  assertEquals(s.byPosition, { positive: [4, 2, 1], negative: [0, 1, 0] });
  assertEquals(s.firstError, { none: 1, "1": 1, past: 1, unresolved: 1 });
  assertEquals([s.chains, s.correctChains, s.questions, s.labels], [4, 1, 2, { positive: 7, negative: 1 }]);
});

Deno.test("PRM records round-trip through JSON Lines; bad lines are named, a partial last line ignored", () => {
  const rs = [rec("q1", "a;b", [1, 0]), rec("q2", "c", [1])];
  const text = encodeJsonl(rs) + '{"v":1}\n' + '{"v":1,"taskId":"q3"';
  const d = decodePrmRecords(text);
  assertEquals(d.records, rs);
  assertEquals(d.bad, [3]);
  assert(decodePrmRecords("").records.length === 0, "empty");
});
