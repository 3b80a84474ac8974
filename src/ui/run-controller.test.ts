import { assert, assertEquals } from "../../tests/assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { parseNotebook, updateParams } from "../core/notebook.ts";
import { type MetricsRecord, withSteps } from "../core/metrics.ts";
import type { SampleRecord } from "../runtime/records.ts";
import type { RunEvents, RunInfo, RunOutcome, RunRequest } from "../../workers/gpu.api.ts";
import { PROGRESS_HISTORY_CAP, type RunApi, RunController, trainingKept, withProgress } from "./run-controller.ts";
import { REMEDIES, runIdOf } from "../runtime/run-plan.ts";

const parsed = parseNotebook(demo);
if (!parsed.ok) throw new Error("demo notebook invalid");
const doc = parsed.doc;

/** A worker double: records requests and plays a scripted run through the events. */
function fakeApi(
  o: { runs?: RunInfo[]; files?: Record<string, string>; play?: (req: RunRequest, ev: RunEvents) => RunOutcome },
) {
  const started: RunRequest[] = [];
  const api: RunApi = {
    startRun: (req, ev) => {
      started.push(req);
      return Promise.resolve(
        o.play ? o.play(req, ev) : { ok: false, error: "no script", cellId: null, stopped: false },
      );
    },
    stopRun: () => Promise.resolve(true),
    listRuns: () => Promise.resolve(o.runs ?? []),
    readRunFile: (_id, name) => Promise.resolve(o.files?.[name] ?? null),
    removeRun: () => Promise.resolve(),
    storage: () => Promise.resolve({ kind: "opfs" as const }),
  };
  return { api, started };
}

const rec = (phase: MetricsRecord["phase"], step: number): MetricsRecord => ({ v: 1, phase, step, time: 0 });
const sample = (phase: SampleRecord["phase"], step: number) => ({ phase, step }) as unknown as SampleRecord;

Deno.test("run controller: records go to the cell that made them; a lost device is resumable", async () => {
  const { api, started } = fakeApi({
    play: (req, ev) => {
      if (started.length === 1) {
        // GRPO reports progress only after its first step's records.
        ev.metrics(rec("grpo", 1));
        ev.samples([sample("grpo", 1)]);
        ev.progress({ cellId: "grpo", stage: "grpo", fraction: 0.25, etaSeconds: 30, message: "step 1/4" });
        return {
          ok: false,
          error: 'cell "grpo" (grpo): run cancelled: GPU device lost (unknown): gone',
          cellId: "grpo",
          stopped: true,
        };
      }
      ev.log('grpo "grpo": resumed from step 1');
      ev.metrics(rec("grpo", 2));
      ev.progress({ cellId: "grpo", stage: "grpo", fraction: 1, etaSeconds: 0, message: "step 2/2" });
      return {
        ok: true,
        summary: {
          title: "",
          accuracy: {},
          files: [],
          cells: [{
            id: "grpo",
            type: "grpo",
            ms: 1,
            report: {
              kind: "grpo",
              cellId: "grpo",
              steps: 2,
              skippedSteps: 0,
              resumedFrom: 1,
              equalGroupFraction: 0,
              heldout: [],
            },
          }],
        },
      };
    },
  });
  const c = new RunController(api, () => doc, (e) => e, "http://app/");
  const out = await c.run("cell", "grpo");
  assert(out && !out.ok);
  assertEquals(started[0].mode, "cell");
  assertEquals(started[0].runId, runIdOf(doc));
  const s = c.state("grpo");
  assertEquals([s.status, s.error?.kind, s.metrics.length, s.samples.length], ["failed", "device-lost", 1, 1]);
  assertEquals(s.error?.resume, { mode: "cell", cellId: "grpo" });
  // No checkpoint of this cell is known: the button and its remedy say "Run again", not "Resume".
  assertEquals(s.error?.resumeLabel, "Run again");
  assert(s.error?.remedy.includes('Press "Run again"') && !s.error.remedy.includes('"Resume"'), s.error?.remedy);
  await c.resume();
  const r = c.state("grpo");
  assertEquals([r.status, r.resumedFrom, r.metrics.map((m) => m.step)], ["done", 1, [1, 2]]);
  assertEquals(c.active, null);
  // Another notebook opened: the previous outputs go (this fake has no stored runs to restore).
  await c.reopen(false);
  assertEquals([c.state("grpo").status, c.state("grpo").metrics.length], ["idle", 0]);
});

Deno.test("run controller: a reload resumes an interrupted run by itself, except for a shared link", async () => {
  const runId = runIdOf(doc);
  const info: RunInfo = {
    runId,
    title: "t",
    status: "running",
    mode: "cell",
    cellId: "grpo",
    startedAt: "a",
    updatedAt: "b",
    checkpoints: { grpo: 3 },
  };
  const files = { "metrics.jsonl": [1, 2, 3].map((s) => JSON.stringify(rec("grpo", s))).join("\n") + "\n" };
  const link = fakeApi({ runs: [info], files });
  const fromLink = new RunController(link.api, () => doc, (e) => e, "http://app/");
  assertEquals(await fromLink.restore(true), null);
  assertEquals(link.started.length, 0);
  assert(fromLink.banner?.includes("shared link"), fromLink.banner ?? "");
  assertEquals(fromLink.pending, { mode: "cell", cellId: "grpo", step: 3 });
  assertEquals(fromLink.state("grpo").metrics.map((m) => m.step), [1, 2, 3]);

  let bannerDuringRun: string | null = null;
  const own = fakeApi({
    runs: [info],
    files,
    play: () => {
      bannerDuringRun = c.banner;
      return { ok: true, summary: { title: "", accuracy: {}, files: [], cells: [] } };
    },
  });
  const c = new RunController(own.api, () => doc, (e) => e, "http://app/");
  const resumed = await c.restore(false);
  await resumed?.resumed;
  assert(String(bannerDuringRun).includes("resuming it from step 3"), String(bannerDuringRun));
  assert(c.banner?.includes("finished"), c.banner ?? "");
  assertEquals(own.started.map((r) => [r.mode, r.cellId]), [["cell", "grpo"]]);
  // Resuming keeps the charts' earlier steps.
  assertEquals(c.state("grpo").metrics.map((m) => m.step), [1, 2, 3]);

  const other = fakeApi({ runs: [{ ...info, runId: "nb-00000000" }] });
  assertEquals(await new RunController(other.api, () => doc, (e) => e, "http://app/").restore(false), null);
  assertEquals(other.started.length, 0);
});

Deno.test("run controller: a cell keeps every phase its progress lines named, after the run too", async () => {
  const line = (cellId: string, message: string) => ({
    cellId,
    stage: cellId,
    fraction: 0.5,
    etaSeconds: null,
    message,
  });
  const { api } = fakeApi({
    play: (_req, ev) => {
      for (
        const m of [
          "building 2 prompts and decoding the first batch",
          "decoding (greedy) 1/2 questions, 4 tokens",
          "decoding (greedy) 2/2 questions, 8 tokens",
          "scoring 2 answers by execution",
          "accuracy 0.0%",
        ]
      ) ev.progress(line("base-concepts", m));
      // A phase shorter than any poll: only the history has it after the next line replaced it.
      for (
        const m of [
          "step 1/2: sampling 2 per question, 1/2 questions",
          "step 1/2: training on 4 samples",
          "step 1/2: reward 0.000, acc 0.000",
          "step 2/2: training on 4 samples",
        ]
      ) ev.progress(line("grpo", m));
      return {
        ok: true,
        summary: {
          title: "",
          accuracy: {},
          files: [],
          cells: [{ id: "base-concepts", type: "evaluate", ms: 1 }, { id: "grpo", type: "grpo", ms: 1 }],
        },
      };
    },
  });
  const c = new RunController(api, () => doc, (e) => e, "http://app/");
  await c.run("all");
  const ev = c.state("base-concepts");
  assertEquals([ev.status, ev.progress], ["done", null]);
  // Lines differing only in their numbers are one phase, showing its last line.
  assertEquals(ev.history.map((e) => e.message), [
    "building 2 prompts and decoding the first batch",
    "decoding (greedy) 2/2 questions, 8 tokens",
    "scoring 2 answers by execution",
    "accuracy 0.0%",
  ]);
  assert(
    ev.history.every((e, i) => e.lastMs >= e.startMs && (i === 0 || e.startMs >= ev.history[i - 1].startMs)),
    "times in order",
  );
  assertEquals(c.state("grpo").history.map((e) => e.message), [
    "step 1/2: sampling 2 per question, 1/2 questions",
    "step 1/2: training on 4 samples",
    "step 1/2: reward 0.000, acc 0.000",
    "step 2/2: training on 4 samples",
  ]);
  // A new run starts the history again.
  await c.run("all");
  assertEquals(c.state("base-concepts").history.length, 4);
});

Deno.test("progress history: capped at its last phases", () => {
  let h = withProgress([], "first", 0);
  for (let i = 0; i < PROGRESS_HISTORY_CAP + 5; i++) {
    h = withProgress(h, i % 2 ? `training step ${i}` : `sampling step ${i}`, i);
  }
  assertEquals(h.length, PROGRESS_HISTORY_CAP);
  assertEquals(h.at(-1)?.message, `sampling step ${PROGRESS_HISTORY_CAP + 4}`);
});

Deno.test("run controller: a resumed run's repeated steps replace the ones shown, live and read back (one point per step)", async () => {
  assertEquals(
    withSteps([rec("grpo", 1), rec("grpo", 2), rec("eval", 2)], [rec("grpo", 2), rec("grpo", 3)]).map((r) =>
      `${r.phase}${r.step}`
    ),
    ["grpo1", "eval2", "grpo2", "grpo3"],
  );
  assertEquals(withSteps([], [rec("warmup", 1), rec("warmup", 2), rec("warmup", 1)]).map((r) => r.step), [1]);
  assertEquals(withSteps([rec("eval", 1)], [rec("eval", 1)]).length, 2, "other phases as they come");
  // Live: the run stopped after step 3 with its checkpoint at 2; the resume logs it and redoes step 3.
  const { api, started } = fakeApi({
    play: (_req, ev) => {
      if (started.length === 1) {
        for (const s of [1, 2, 3]) {
          ev.metrics(rec("grpo", s));
          ev.samples([sample("grpo", s), sample("grpo", s)]);
        }
        return {
          ok: false,
          error: 'cell "grpo" (grpo): run cancelled: GPU device lost (unknown): gone',
          cellId: "grpo",
          stopped: true,
        };
      }
      ev.log('grpo "grpo": resumed from step 2');
      ev.metrics(rec("grpo", 3));
      ev.samples([sample("grpo", 3), sample("grpo", 3)]);
      return {
        ok: true,
        summary: {
          title: "",
          accuracy: {},
          files: [],
          cells: [{
            id: "grpo",
            type: "grpo",
            ms: 1,
            report: {
              kind: "grpo",
              cellId: "grpo",
              steps: 3,
              skippedSteps: 0,
              resumedFrom: 2,
              equalGroupFraction: 0,
              heldout: [],
            },
          }],
        },
      };
    },
  });
  const c = new RunController(api, () => doc, (e) => e, "http://app/");
  await c.run("cell", "grpo");
  await c.resume();
  assertEquals(c.state("grpo").metrics.map((m) => m.step), [1, 2, 3]);
  assertEquals(c.state("grpo").samples.map((m) => m.step), [1, 1, 2, 2, 3, 3]);
  // Read back from a run folder whose metrics.jsonl holds step 3 twice.
  const files = { "metrics.jsonl": [1, 2, 3, 3].map((s) => JSON.stringify(rec("grpo", s))).join("\n") + "\n" };
  const runs: RunInfo[] = [{
    runId: runIdOf(doc),
    title: "t",
    status: "running",
    mode: "cell",
    cellId: "grpo",
    startedAt: "a",
    updatedAt: "b",
    checkpoints: { grpo: 2 },
  }];
  const back = new RunController(fakeApi({ runs, files }).api, () => doc, (e) => e, "http://app/");
  await back.restore(true);
  assertEquals(back.state("grpo").metrics.map((m) => m.step), [1, 2, 3]);
});

Deno.test("run controller: two GRPO cells' records go to the cell each names, live and read back from a run folder", async () => {
  const grpo = doc.cells.find((c) => c.id === "grpo")!;
  const two = { ...doc, cells: [...doc.cells, { ...grpo, id: "grpo2" }] } as typeof doc;
  const named = (cell: string, step: number): MetricsRecord => ({ ...rec("grpo", step), cell });
  // Live: the second cell's records while the first is the current cell (ownerOf alone would give them to it).
  const { api } = fakeApi({
    play: (_req, ev) => {
      for (const s of [1, 2]) ev.metrics(named("grpo", s));
      for (const s of [1, 2, 3]) ev.metrics(named("grpo2", s));
      ev.samples([{ ...sample("grpo", 1), cell: "grpo2" }]);
      return { ok: true, summary: { title: "", accuracy: {}, files: [], cells: [] } };
    },
  });
  const c = new RunController(api, () => two, (e) => e, "http://app/");
  await c.run("all");
  assertEquals(c.state("grpo").metrics.map((m) => m.step), [1, 2]);
  assertEquals(c.state("grpo2").metrics.map((m) => m.step), [1, 2, 3]);
  assertEquals(c.state("grpo2").samples.length, 1);
  // Read back: both checkpointed; grpo2 resumed from step 1 (its step 2 twice).
  const lines = [...[1, 2, 3, 4].map((s) => named("grpo", s)), ...[1, 2, 2].map((s) => named("grpo2", s))];
  const files = { "metrics.jsonl": lines.map((r) => JSON.stringify(r)).join("\n") + "\n" };
  const runs: RunInfo[] = [{
    runId: runIdOf(two),
    title: "t",
    status: "running",
    mode: "all",
    cellId: null,
    startedAt: "a",
    updatedAt: "b",
    checkpoints: { grpo: 4, grpo2: 1 },
  }];
  const back = new RunController(fakeApi({ runs, files }).api, () => two, (e) => e, "http://app/");
  await back.restore(true);
  assertEquals(back.state("grpo").metrics.map((m) => m.step), [1, 2, 3, 4]);
  assertEquals(back.state("grpo2").metrics.map((m) => m.step), [1, 2]);
});

Deno.test("run controller (issue #48 item 4): cells before the model say done as they finish, not waiting till the run ends", async () => {
  let during: string[] = [];
  let c: RunController;
  const { api } = fakeApi({
    play: (_req, ev) => {
      for (const id of ["data", "model", "prompt", "reward"]) {
        ev.cellDone?.({
          id,
          type: doc.cells.find((x) => x.id === id)!.type,
          ms: 1,
        });
      }
      ev.progress({ cellId: "base-concepts", stage: "evaluate", fraction: 0.1, etaSeconds: null, message: "decoding" });
      during = ["data", "prompt", "reward", "base-concepts", "warmup"].map((id) => c.state(id).status);
      return {
        ok: false,
        error: 'cell "base-concepts" (evaluate): run cancelled: stopped by the user',
        cellId: "base-concepts",
        stopped: true,
      };
    },
  });
  c = new RunController(api, () => doc, (e) => e, "http://app/");
  await c.run("all");
  assertEquals(during, ["done", "done", "done", "running", "waiting"]);
  // Stopped: the finished cells stay done, the stopped one says so, the rest are idle; the run says how it ended.
  assertEquals(["data", "base-concepts", "warmup"].map((id) => c.state(id).status), ["done", "stopped", "idle"]);
  assertEquals([c.last?.ok, c.last?.stopped], [false, true]);
});

Deno.test("run controller (issue #48 item 3): Stop says stopping until the run has ended, and asks the worker once", async () => {
  let stops = 0;
  let release: (o: RunOutcome) => void = () => {};
  const { api } = fakeApi({});
  api.startRun = () => new Promise<RunOutcome>((r) => (release = r));
  api.stopRun = () => {
    stops++;
    return Promise.resolve(true);
  };
  const c = new RunController(api, () => doc, (e) => e, "http://app/");
  const run = c.run("all");
  await c.stop();
  await c.stop();
  assertEquals([c.stopping, stops], [true, 1]);
  release({ ok: false, error: "run cancelled: stopped by the user", cellId: null, stopped: true });
  await run;
  assertEquals(c.stopping, false);
});

Deno.test("run controller (issue #48 item 1): Run all on a slow device proposes the quick version first; a fast one starts", async () => {
  const { api, started } = fakeApi({
    play: () => ({ ok: true, summary: { title: "", cells: [], accuracy: {}, files: [] } }),
  });
  let gflops = 2.4;
  api.benchmarkMatmul = () =>
    Promise.resolve({ gflops, size: 512, iterations: 3, seconds: 1, checkPassed: true, checkMaxAbsErr: 0 });
  let open = doc;
  const c = new RunController(api, () => open, (e) => e, "http://app/", { applyDoc: (d) => (open = d) });
  assertEquals(await c.runAll(), null);
  assertEquals(started.length, 0);
  assert(
    c.proposal && c.proposal.full.seconds > 3600 && c.proposal.quick.seconds < c.proposal.full.seconds / 50,
    JSON.stringify(c.proposal?.quick.seconds),
  );
  assert(c.proposal.givesUp.length > 0);
  await c.runQuick();
  assertEquals(started.length, 1);
  assert(open.title.endsWith("(quick version)"));
  assertEquals(started[0].doc, open);
  assertEquals([c.proposal, c.last?.ok], [null, true]);
  // The full notebook comes back with one click.
  assertEquals(c.fullDoc, doc);
  c.backToFull();
  assertEquals([open, c.fullDoc], [doc, null]);
  // A GPU: no proposal, the run starts at once with its plan.
  const fast = new RunController(api, () => doc, (e) => e, "http://app/");
  gflops = 5000;
  await fast.runAll();
  assertEquals([started.length, fast.proposal], [2, null]);
  assert(fast.estimate !== null && fast.estimate.seconds < 20 * 60);
});

Deno.test("run controller (issue #48 regression): a stopped GRPO cell says what was checkpointed, nothing when no step finished; its button says Resume only over a checkpoint", async () => {
  const grpo = doc.cells.find((c) => c.id === "grpo")!;
  assertEquals(
    trainingKept(grpo, 0),
    "No step of this cell had finished, so it has no checkpoint: running it again starts at step 1 of 40.",
  );
  assertEquals(
    trainingKept(grpo, 2),
    "Its checkpoint is kept at step 2 of 40: running it again continues from step 3.",
  );
  assertEquals(
    trainingKept(doc.cells.find((c) => c.id === "warmup"), 3),
    "All 3 rounds of this cell are checkpointed: running it again restores them.",
  );
  assertEquals(trainingKept(doc.cells.find((c) => c.id === "data"), 0), null);
  // The worker's run folder after the Stop: no checkpoint, then one at step 2.
  let checkpoints: Record<string, number> = {};
  const { api } = fakeApi({
    play: (req, ev) => {
      ev.progress({ cellId: "grpo", stage: "grpo", fraction: 0, etaSeconds: null, message: "step 1/40: sampling" });
      return {
        ok: false,
        error: 'cell "grpo" (grpo): run cancelled: stopped by the user',
        cellId: "grpo",
        stopped: true,
      };
    },
  });
  api.listRuns = () =>
    Promise.resolve([{
      runId: runIdOf(doc),
      title: "t",
      status: "stopped",
      mode: "cell",
      cellId: "grpo",
      startedAt: "a",
      updatedAt: "b",
      checkpoints,
    }]);
  const c = new RunController(api, () => doc, (e) => e, "http://app/");
  await c.run("cell", "grpo");
  let s = c.state("grpo");
  assertEquals([s.status, s.error?.kind], ["stopped", "cancelled"]);
  assertEquals(s.error?.remedy, `The run was stopped. ${trainingKept(grpo, 0)}`);
  assertEquals(c.pending?.step, null);
  // Nothing was kept: the button runs the cell again and does not promise to resume it.
  assertEquals(s.error?.resumeLabel, "Run again");
  checkpoints = { grpo: 2 };
  await c.run("cell", "grpo");
  s = c.state("grpo");
  assertEquals(s.error?.remedy, `The run was stopped. ${trainingKept(grpo, 2)}`);
  assertEquals(c.pending?.step, 2);
  assertEquals(s.error?.resumeLabel, "Resume");
  // A cell that trains nothing keeps the general words.
  const evalStop = fakeApi({
    play: () => ({
      ok: false,
      error: 'cell "base-concepts" (evaluate): run cancelled: stopped by the user',
      cellId: "base-concepts",
      stopped: true,
    }),
  });
  const e = new RunController(evalStop.api, () => doc, (x) => x, "http://app/");
  await e.run("cell", "base-concepts");
  assertEquals(e.state("base-concepts").error?.remedy, REMEDIES.cancelled);
  assertEquals(e.state("base-concepts").error?.resumeLabel, "Run again");
  // After a reload the stopped run's cell says the same, from the folder's checkpoints.
  const back = new RunController(
    fakeApi({
      runs: [{
        runId: runIdOf(doc),
        title: "t",
        status: "stopped",
        mode: "cell",
        cellId: "grpo",
        startedAt: "a",
        updatedAt: "b",
        error: 'cell "grpo" (grpo): run cancelled: stopped by the user',
        checkpoints: {},
      }],
    }).api,
    () => doc,
    (x) => x,
    "http://app/",
  );
  await back.restore(false);
  assertEquals(back.state("grpo").error?.remedy, `The run was stopped. ${trainingKept(grpo, 0)}`);
  assertEquals(back.state("grpo").error?.resumeLabel, "Run again");
});

Deno.test("run controller (issue #48 item 9): a dataset cell switched to another source says not run; other edits keep states", async () => {
  let open = doc;
  const docEvents = new EventTarget();
  const { api } = fakeApi({
    play: (_req, ev) => {
      for (const id of ["data", "model", "prompt", "reward"]) {
        ev.cellDone?.({ id, type: open.cells.find((x) => x.id === id)!.type, ms: 1 });
      }
      return {
        ok: true,
        summary: { title: "", accuracy: {}, files: [], cells: [{ id: "base-concepts", type: "evaluate", ms: 1 }] },
      };
    },
  });
  const c = new RunController(api, () => open, (e) => e, "http://app/", { docEvents });
  await c.run("cell", "base-concepts");
  assertEquals(["data", "base-concepts"].map((id) => c.state(id).status), ["done", "done"]);
  const cellId = (id: string) => open.cells.find((x) => x.id === id)!.id;
  const edit = (next: typeof doc) => {
    open = next;
    docEvents.dispatchEvent(new Event("change"));
  };
  // A title or another cell's parameter: the dataset cell's data did not change.
  edit({ ...open, title: "renamed" });
  edit(updateParams(open, cellId("base-concepts"), "evaluate", { k: 2 }));
  assertEquals(c.state("data").status, "done");
  edit(updateParams(open, cellId("data"), "dataset", { source: "upload", name: "my-database", format: "spider" }));
  assertEquals(c.state("data").status, "idle", "the demo's done is not the upload's");
  assertEquals(c.state("base-concepts").status, "done");
});
