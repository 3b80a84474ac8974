// Laboratory (issue 51): WebGPU calls per decoding step of the grpo-step suite's hub path (the Hub notebook's GRPO
// cell through the recipe's runner: LoRA, G samples per prompt, the runtime's sampler) at a small shape, to set beside
// bench/suites/decode-ours.ts's per-step counts at the same shape. Counts every captured replay (CapturedDecoder.run)
// and the calls between consecutive replays (the step's choice, advance, read-back and the host's bookkeeping), and
// prints each captured session made (its batch and columns) and each prefill's prompt lengths.
// Usage: deno run -A bench/hub-calls.ts [--webgpu deno|dawn] [hubShape=tiny] [newTokens=24] [steps=2] [out=DIR]
// Beside it: deno run -A bench/suites/decode-ours.ts tiny q4 2 6 1000 24 0 OUT.json 600 lora=16 (the same graph and
// per-step calls on the lavapipe run of 2026-12-07: 2 submits, 1 mapAsync, 0 writeBuffer, 64 pipelines; 36 without lora).
import { args as benchArgs, webgpu } from "./engine.ts";
import { requestGpu } from "../src/gpu/device.ts";
import { CapturedDecoder, CapturedPrefill } from "../src/model/captured.ts";
import { grpoStep } from "./suites/grpo-step.ts";
import { type CallCounts, diffCalls, installCallCounter, snapshotCalls } from "./webgpu-calls.ts";

const named = new Map(
  benchArgs.filter((a) => /^[a-zA-Z]+=/.test(a)).map((a) => a.split("=") as [string, string]),
);
const calls = installCallCounter();
type Proto = { run(): Promise<void> };
const events: { kind: string; at: CallCounts; t: number }[] = [];
for (const [kind, cls] of [["decode", CapturedDecoder], ["prefill", CapturedPrefill]] as const) {
  const proto = cls.prototype as unknown as Proto;
  const orig = proto.run;
  proto.run = function (this: unknown, ...a: unknown[]) {
    events.push({ kind, at: snapshotCalls(calls), t: performance.now() });
    if (kind === "prefill" && Array.isArray(a[0])) {
      console.log(`prefill run: prompt lengths ${(a[0] as number[][]).map((x) => x.length).join(",")}`);
    }
    return (orig as (...x: unknown[]) => Promise<void>).apply(this, a);
  };
}
for (const cls of [CapturedDecoder, CapturedPrefill]) {
  const c = cls as unknown as { create(o: { built: { options: { staticDecode?: unknown } } }): Promise<unknown> };
  const orig = c.create.bind(cls);
  c.create = (o) => {
    console.log(`${cls.name}.create ${JSON.stringify(o.built.options.staticDecode)}`);
    return orig(o);
  };
}
const out = named.get("out") ?? await Deno.makeTempDir({ prefix: "hub-calls-" });
await Deno.mkdir(out, { recursive: true });
const args = new Map<string, string>([
  ["parts", "hub"],
  ["hubShape", named.get("hubShape") ?? "tiny"],
  ["newTokens", named.get("newTokens") ?? "24"],
  ["steps", named.get("steps") ?? "2"],
  ...[...named].filter(([k]) => !["out", "hubShape", "newTokens", "steps"].includes(k)),
]);
let gpu: Awaited<ReturnType<typeof requestGpu>> | null = null;
await grpoStep.run({
  args,
  out,
  reference: false,
  gpu: async () => gpu ??= await requestGpu(),
});
// Replays in runs of consecutive decode events (one sampling call each); per step = between two replays.
const runs: (typeof events)[] = [];
for (const [i, e] of events.entries()) {
  if (e.kind !== "decode") continue;
  if (i === 0 || events[i - 1].kind !== "decode") runs.push([]);
  runs.at(-1)!.push(e);
}
console.log(`engine ${webgpu}; ${events.length} captured runs (${runs.length} decoding calls)`);
for (const [k, r] of runs.entries()) {
  if (r.length < 4) {
    console.log(`call ${k}: ${r.length} replays`);
    continue;
  }
  // From the second replay to the last: the steady steps.
  const d = diffCalls(r[1].at, r.at(-1)!.at), n = r.length - 2;
  const ms = (r.at(-1)!.t - r[1].t) / n;
  const per = Object.entries(d).map(([m, v]) => `${m} ${(v.calls / n).toFixed(1)}`).join(", ");
  console.log(`call ${k}: ${r.length} replays, ${ms.toFixed(1)} ms a step; per step: ${per}`);
}
