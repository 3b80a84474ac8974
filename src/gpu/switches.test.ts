import { assert, assertEquals } from "../../tests/assert.ts";
import { DEFAULT_SWITCHES, parsePerfSwitches, perfSwitches, setPerfSwitches } from "./switches.ts";

Deno.test("perf switches: default and name=value lists parse", () => {
  assertEquals(parsePerfSwitches("default"), { ...DEFAULT_SWITCHES });
  assertEquals(parsePerfSwitches(""), { ...DEFAULT_SWITCHES });
  const s = parsePerfSwitches("passes=split, wideSplit=3,q4deq=2");
  assertEquals(s, { ...DEFAULT_SWITCHES, passes: "split", wideSplit: 3, q4deq: 2 });
  assertEquals(parsePerfSwitches("narrowWg=256,narrowMinK=64,wT=0"), {
    ...DEFAULT_SWITCHES,
    narrowWg: 256,
    narrowMinK: 64,
    wT: 0,
  });
  assertEquals(parsePerfSwitches("q4deq=2,q4deq=0").q4deq, 0);
});

Deno.test("perf switches: unknown names and values are errors naming the choices; dropped switches are unknown", () => {
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
  fails("speed=1", /perf switch 'speed=1': one of default, passes=/);
  fails("merged", /perf switch 'merged'/);
  fails("old", /perf switch 'old'/);
  fails("t96=0", /perf switch 't96=0'/);
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
