import { assert, assertEquals } from "../../tests/assert.ts";
import { Rng } from "./rng.ts";

Deno.test("Rng: same seed gives the same stream, state restores it", () => {
  const a = new Rng(42);
  const b = new Rng(42);
  const xs = Array.from({ length: 5 }, () => a.nextU32());
  assertEquals(xs, Array.from({ length: 5 }, () => b.nextU32()));
  const saved = a.state();
  const next = a.next();
  assertEquals(new Rng(saved).next(), next);
  assert(new Rng(43).nextU32() !== new Rng(42).nextU32());
});

Deno.test("Rng: uniform values have the right mean and range", () => {
  const r = new Rng(7);
  let sum = 0;
  const n = 20000;
  for (let i = 0; i < n; i++) {
    const x = r.next();
    assert(x >= 0 && x < 1);
    sum += x;
  }
  assert(Math.abs(sum / n - 0.5) < 0.01, `mean ${sum / n}`);
  let s2 = 0;
  for (let i = 0; i < n; i++) s2 += r.normal() ** 2;
  assert(Math.abs(s2 / n - 1) < 0.05, `normal variance ${s2 / n}`);
});
