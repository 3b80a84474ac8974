import { assert, assertEquals } from "../../tests/assert.ts";
import { formatPerfSwitches, NEW_SWITCHES, OLD_SWITCHES, parsePerfSwitches, perfSwitches, setPerfSwitches } from "./switches.ts";

Deno.test("perf switches: old, new and name=value lists parse; the formatted form parses back", () => {
  assertEquals(parsePerfSwitches("old"), { ...OLD_SWITCHES });
  assertEquals(parsePerfSwitches("new"), { ...NEW_SWITCHES });
  assertEquals(parsePerfSwitches(""), { ...NEW_SWITCHES });
  const s = parsePerfSwitches("passes=split, arena=0,q4=tile64");
  assertEquals(s, { ...NEW_SWITCHES, passes: "split", arena: false, q4: "tile64" });
  assertEquals(parsePerfSwitches("old,q4=tile128"), { ...OLD_SWITCHES, q4: "tile128" });
  assertEquals(parsePerfSwitches("subgroups=0", OLD_SWITCHES), { ...OLD_SWITCHES, subgroups: false });
  assertEquals(parsePerfSwitches("tk=16,vload=1"), { ...NEW_SWITCHES, tk: 16, vload: 1 });
  assertEquals(parsePerfSwitches("tk=32").tk, 32);
  assertEquals(NEW_SWITCHES.vload, 1); // on since timed on the H200 (2026-12-02)
  assert(formatPerfSwitches(NEW_SWITCHES).endsWith(",tk=16,q4tk=16,vload=1,loraTail=1,embedBack=links,attnNamed=0,attnBwd=blocked,attnFwd=blocked,rank=narrow,attnDq=fused,t256=0,t128h=1,wT=1,ka=0,t96=1,tq=1,narrowWg=1024,narrowMinK=128,lm128=2,attnSplit=1,st4=1,q4deq=1"));
  assertEquals(parsePerfSwitches("ka=1"), { ...NEW_SWITCHES, ka: 1 });
  assertEquals(parsePerfSwitches("ka=2,t96=1"), { ...NEW_SWITCHES, ka: 2, t96: 1 });
  assertEquals(parsePerfSwitches("t96=1,wideSplit=7"), { ...NEW_SWITCHES, t96: 1, wideSplit: 7 });
  assertEquals(parsePerfSwitches("narrowWg=1024,narrowMinK=64,lm128=1"), { ...NEW_SWITCHES, narrowWg: 1024, narrowMinK: 64, lm128: 1 });
  assertEquals(parsePerfSwitches("attnSplit=0,lm128=2"), { ...NEW_SWITCHES, attnSplit: 0, lm128: 2 });
  assertEquals(parsePerfSwitches("st4=2,lm128=0"), { ...NEW_SWITCHES, st4: 2, lm128: 0 });
  assertEquals(parsePerfSwitches("st4=0").st4, 0);
  assertEquals(parsePerfSwitches("q4deq=1").q4deq, 1);
  assertEquals(parsePerfSwitches("q4deq=2,q4deq=0").q4deq, 0);
  assertEquals(parsePerfSwitches("t256=1,t128h=0"), { ...NEW_SWITCHES, t256: 1, t128h: 0 });
  assertEquals(OLD_SWITCHES.t128h, 0); // tile128, the earlier kernel
  assertEquals(parsePerfSwitches("rank=stream,attnDq=kernel"), { ...NEW_SWITCHES, rank: "stream", attnDq: "kernel" });
  assertEquals(parsePerfSwitches("rank=xa").rank, "xa");
  assertEquals(parsePerfSwitches("attnBwd=blocked").attnBwd, "blocked");
  assertEquals(parsePerfSwitches("attnFwd=lanes,attnBwd=lanes"), { ...NEW_SWITCHES, attnFwd: "lanes", attnBwd: "lanes" });
  for (const x of [NEW_SWITCHES, OLD_SWITCHES, s]) assertEquals(parsePerfSwitches(formatPerfSwitches(x)), { ...x });
});

Deno.test("perf switches: unknown names and values are errors naming the choices", () => {
  const fails = (spec: string, pattern: RegExp) => {
    let msg = "";
    try {
      parsePerfSwitches(spec);
    } catch (e) {
      msg = e instanceof Error ? e.message : String(e);
    }
    assert(pattern.test(msg), `${spec}: ${msg}`);
  };
  fails("passes=both", /passes: one of merged, split, got both/);
  fails("speed=1", /perf switch 'speed=1': one of old, new, passes=/);
  fails("merged", /perf switch 'merged'/);
});

Deno.test("perf switches: setPerfSwitches returns the previous ones", () => {
  const before = perfSwitches();
  const prev = setPerfSwitches({ passes: "split" });
  try {
    assertEquals(prev, before);
    assertEquals(perfSwitches().passes, "split");
  } finally {
    setPerfSwitches(prev);
  }
  assertEquals(perfSwitches(), before);
});
