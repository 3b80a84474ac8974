// The Dawn event-polling options of engine.deno.ts: parsing RLVR_DAWN_POLL / RLVR_DAWN_SPIN_MS and the
// MessageChannel scheduler (its turns run in order, a turn may queue the next, and the channel is closed
// once no turn is queued: a process whose last wait went through it exits by itself — an open port
// would keep Deno's event loop alive, and the test runner would not notice).
import { assert, assertEquals } from "../../tests/assert.ts";
import { channelScheduler, describePolling, parseDawnPolling } from "./engine.deno.ts";

Deno.test("parseDawnPolling: RLVR_DAWN_POLL values, the older RLVR_DAWN_SPIN_MS, the default", () => {
  assertEquals(parseDawnPolling(undefined, undefined), { kind: "timeout", spinMs: 0 });
  assertEquals(parseDawnPolling("", ""), { kind: "timeout", spinMs: 0 });
  assertEquals(parseDawnPolling("timeout", undefined), { kind: "timeout", spinMs: 0 });
  assertEquals(parseDawnPolling("channel", undefined), { kind: "channel", channelMs: Infinity });
  assertEquals(parseDawnPolling("channel:50", undefined), { kind: "channel", channelMs: 50 });
  assertEquals(parseDawnPolling("channel:2.5", undefined), { kind: "channel", channelMs: 2.5 });
  assertEquals(parseDawnPolling("channel:Infinity", undefined), { kind: "channel", channelMs: Infinity });
  assertEquals(parseDawnPolling("spin", undefined), { kind: "spin" });
  // RLVR_DAWN_POLL wins over the older variable; the older one alone keeps its meaning.
  assertEquals(parseDawnPolling("channel:5", "Infinity"), { kind: "channel", channelMs: 5 });
  assertEquals(parseDawnPolling(undefined, "2"), { kind: "timeout", spinMs: 2 });
  assertEquals(parseDawnPolling(undefined, "Infinity"), { kind: "spin" });
  assertEquals(parseDawnPolling(undefined, "-1"), { kind: "timeout", spinMs: 0 });
  // The caller's default where neither variable is set (tryDawn: channel:1 on a GPU).
  assertEquals(parseDawnPolling(undefined, undefined, { kind: "channel", channelMs: 1 }), {
    kind: "channel",
    channelMs: 1,
  });
  assertEquals(parseDawnPolling("timeout", undefined, { kind: "channel", channelMs: 1 }), {
    kind: "timeout",
    spinMs: 0,
  });
  for (const bad of ["chanel", "channel:", "channel:-3", "timeout:5", "fast"]) {
    let msg = "";
    try {
      parseDawnPolling(bad, undefined);
    } catch (e) {
      msg = (e as Error).message;
    }
    assert(msg.startsWith(`RLVR_DAWN_POLL=${bad}: one of`), `${bad}: ${msg || "no error"}`);
  }
  assertEquals(describePolling({ kind: "timeout", spinMs: 0 }), "Dawn's event polling through setTimeout(0)");
  assertEquals(
    describePolling({ kind: "channel", channelMs: 50 }),
    "Dawn's event polling through MessageChannel turns for 50 ms of a wait, then setTimeout(0)",
  );
});

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
