// sampleTasks under a stop and a resume (issue #48 item 3), with a scripted sampler: a stopped run
// ends between decoding steps, not at the end of its sampling call; and an evaluation's finished
// calls are kept, so running it again samples only what was left.
import { assert, assertEquals } from "../../../tests/assert.ts";
import type { Task } from "../../core/types.ts";
import type { Sample, SampleProgress } from "../../model/sampler.ts";
import { MemoryStore } from "../store.ts";
import { sampleTasks } from "./common.ts";
import { DEFAULT_RUN_OPTIONS, type RunContext } from "./context.ts";
import type { ModelRuntime } from "./model-runtime.ts";
import type { Prompter } from "./prompting.ts";

const tasks = Array.from(
  { length: 5 },
  (_, i) => ({ id: `q${i}`, db_id: "db", question: `question ${i}`, gold_sql: "SELECT 1" }) as Task,
);

function setup(abort: AbortController) {
  const store = new MemoryStore();
  const ctx = {
    env: { store, now: () => Date.now() },
    opts: { ...DEFAULT_RUN_OPTIONS, sampleBatchPrompts: 2 },
    signal: abort.signal,
    onProgress: () => {},
    onMetrics: () => {},
    onLog: () => {},
    counters: {},
  } as unknown as RunContext;
  const calls: number[][] = [];
  let onStep: (call: number, step: number) => void = () => {};
  const runtime = {
    hf: { config: { eosTokenIds: [0] } },
    decode: (ids: readonly number[]) => ids.join(" "),
    // 50 decoding steps per call, each reported as the samplers do; the answer is the prompt's id.
    async sample(
      prompts: readonly (readonly number[])[],
      _n: number,
      _p: unknown,
      hear?: (p: SampleProgress) => void,
    ): Promise<Sample[]> {
      calls.push(prompts.map((p) => p[0]));
      for (let step = 0; step < 50; step++) {
        await Promise.resolve();
        onStep(calls.length, step);
        hear?.({ step: step + 1, finished: 0, total: prompts.length, tokens: (step + 1) * prompts.length, added: [] });
      }
      return prompts.map((p, i) => ({
        prompt: i,
        index: 0,
        tokens: [p[0]],
        text: `answer ${p[0]}`,
        logprobs: [-1],
        finishReason: "eos" as const,
      }));
    },
  } as unknown as ModelRuntime;
  const prompter = {
    prompts: (ts: readonly Task[]) =>
      Promise.resolve(ts.map((t) => ({ text: t.question, ids: [Number(t.id.slice(1)) + 1], answerPrefix: "" }))),
  } as unknown as Prompter;
  return { ctx, tools: { runtime, prompter }, calls, step: (f: typeof onStep) => (onStep = f), store };
}

const params = { temperature: 0, topP: 1, topK: 0, minP: 0, maxNewTokens: 50, seed: 3 };

Deno.test("sampleTasks (issue #48 item 3): a stop ends the call at its next decoding step, not at the end of the call", async () => {
  const abort = new AbortController();
  const s = setup(abort);
  let stepsAfter = -1;
  s.step((call, step) => {
    if (call === 1 && step === 10) abort.abort(new Error("stopped by the user"));
    if (abort.signal.aborted) stepsAfter++;
  });
  const err = await sampleTasks(s.ctx, s.tools, tasks, 1, params).then(() => null, (e: Error) => e);
  assert(err?.message.startsWith("run cancelled: stopped by the user"), String(err));
  assertEquals([s.calls.length, stepsAfter], [1, 0]);
});

Deno.test("sampleTasks (issue #48 item 3): an evaluation's finished calls are kept; run again, it samples only what was left", async () => {
  const abort = new AbortController();
  const s = setup(abort);
  s.step((call, step) => {
    if (call === 2 && step === 5) abort.abort(new Error("stopped by the user"));
  });
  const keep = { dir: "partial/eval", key: "k" };
  await sampleTasks(s.ctx, s.tools, tasks, 1, params, undefined, undefined, keep).catch(() => undefined);
  assertEquals(s.calls, [[1, 2], [3, 4]]);
  // Again (a new run of the same folder): the first call comes from the folder, the rest is sampled.
  const again = setup(new AbortController());
  Object.assign(again.ctx.env, { store: s.store });
  const progress: number[] = [];
  const out = await sampleTasks(again.ctx, again.tools, tasks, 1, params, (d) => progress.push(d), undefined, keep);
  assertEquals(again.calls, [[3, 4], [5]]);
  assertEquals(out.samples.map((x) => [x.prompt, x.text]), [[0, "answer 1"], [1, "answer 2"], [2, "answer 3"], [
    3,
    "answer 4",
  ], [4, "answer 5"]]);
  assertEquals(progress[0], 2);
  // Other sampling (another key): nothing is taken from the folder.
  const other = setup(new AbortController());
  Object.assign(other.ctx.env, { store: s.store });
  await sampleTasks(other.ctx, other.tools, tasks, 1, params, undefined, undefined, { ...keep, key: "other" });
  assertEquals(other.calls.length, 3);
});
