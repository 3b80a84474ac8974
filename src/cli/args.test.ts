import { assertEquals, assertRejects } from "../../tests/assert.ts";
import { int, MAX_TIMER_MS, num, UsageError } from "./args.ts";
import { command as evalCommand } from "./commands/eval.ts";

Deno.test("num: a numeric flag outside its range is a usage error naming the flag and the range (issue 47 item 8)", async () => {
  const v = (x: string) => ({ f: x });
  assertEquals(int(v("3"), "f", 1, 1, 5), 3);
  assertEquals(int({}, "f", 7, 1, 5), 7);
  assertEquals(num(v("0.5"), "f", 1, { min: 0, max: 1 }), 0.5);
  for (const bad of ["0", "6", "2.5", "", " ", "1e400", "NaN", "Infinity", "-1", "0x"]) {
    await assertRejects(() => int(v(bad), "f", 1, 1, 5), /^--f must be an integer from 1 to 5, got /);
  }
  const e = await assertRejects(() => int({ "timeout-ms": "3000000000" }, "timeout-ms", 1, 1, MAX_TIMER_MS));
  assertEquals(e instanceof UsageError, true);
  assertEquals(e.message, `--timeout-ms must be an integer from 1 to ${MAX_TIMER_MS}, got "3000000000"`);
});

Deno.test("eval command: --timeout-ms past the timer's limit, a zero cap and a runaway worker count are refused before any work (issue 47 item 8)", async () => {
  // The paths need not exist: the flags are checked first.
  const base = ["--questions", "/nonexistent/q.json", "--db-root", "/nonexistent", "--pred", "/nonexistent/p.txt"];
  for (
    const [flag, value] of [["--timeout-ms", "3000000000"], ["--max-rows", "0"], ["--max-bytes", "0"], [
      "--workers",
      "100000",
    ], ["--workers", "1.5"]]
  ) {
    await assertRejects(
      () => evalCommand.run([...base, flag, value]),
      new RegExp(`^${flag} must be an integer from \\d+ to \\d+, got "${value}"`),
    );
  }
});
