// The MessageChannel scheduler of engine.deno.ts's Dawn event polling: its turns run in order, a turn may queue the
// next, and the channel is closed once no turn is queued (a process whose last wait went through it exits by itself:
// an open port would keep Deno's event loop alive, and the test runner would not notice).
import { assertEquals } from "../../tests/assert.ts";
import { channelScheduler, parseDawnValidation, withSkipValidation } from "./engine.deno.ts";

Deno.test("channelScheduler: turns in order with their arguments, a turn queueing the next, the channel closed when idle", async () => {
  const schedule = channelScheduler();
  const seen: string[] = [];
  await new Promise<void>((resolve) => {
    let left = 50;
    const turn = (...a: unknown[]) => {
      seen.push(String(a[0]));
      if (--left > 0) schedule(turn, [left]);
      else resolve();
    };
    schedule(turn, ["first"]);
    schedule((...a: unknown[]) => seen.push(`other ${a.join(",")}`), [1, 2]);
  });
  assertEquals(seen.slice(0, 3), ["first", "other 1,2", "49"]);
  assertEquals(seen.length, 51);
  assertEquals(seen.at(-1), "1");
  // A later wait opens a new channel and closes it again.
  const again = await new Promise<number>((resolve) => schedule((...a: unknown[]) => resolve(a[0] as number), [7]));
  assertEquals(again, 7);
  // Runs after microtasks: a turn queued now comes after a resolved promise's continuation.
  const order: string[] = [];
  await new Promise<void>((resolve) => {
    schedule(() => {
      order.push("turn");
      resolve();
    }, []);
    Promise.resolve().then(() => order.push("microtask"));
  });
  assertEquals(order, ["microtask", "turn"]);
});

Deno.test("channelScheduler: a process whose turns are done exits by itself (no port left open)", async () => {
  const url = new URL("./engine.deno.ts", import.meta.url).href;
  const code = `import { channelScheduler } from ${JSON.stringify(url)};
const s = channelScheduler();
let n = 0;
const turn = () => { if (++n < 100) s(turn, []); else console.log("turns " + n); };
s(turn, []);
await new Promise((r) => setTimeout(r, 20));
s(() => console.log("again"), []);`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", code],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const killer = setTimeout(() => child.kill(), 20_000);
  const out = await child.output();
  clearTimeout(killer);
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assertEquals({ code: out.code, text: text.trim() }, { code: 0, text: "turns 100\nagain" });
});

Deno.test("RLVR_DAWN_VALIDATION: on, off, auto (the default); skip_validation merged into enable-dawn-features", () => {
  assertEquals(parseDawnValidation(undefined), "auto");
  assertEquals(parseDawnValidation(" OFF "), "off");
  assertEquals(parseDawnValidation("on"), "on");
  let threw = "";
  try {
    parseDawnValidation("no");
  } catch (e) {
    threw = String(e);
  }
  assertEquals(threw.includes("must be on, off or auto"), true);
  assertEquals(withSkipValidation(["backend=vulkan"]), ["backend=vulkan", "enable-dawn-features=skip_validation"]);
  assertEquals(
    withSkipValidation(["enable-dawn-features=disable_robustness", "disable-dawn-features=timestamp_quantization"]),
    ["enable-dawn-features=disable_robustness,skip_validation", "disable-dawn-features=timestamp_quantization"],
  );
  assertEquals(withSkipValidation(["enable-dawn-features=skip_validation"]), ["enable-dawn-features=skip_validation"]);
});
