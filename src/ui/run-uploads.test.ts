// The run controller with uploaded datasets and after a reload: a dataset cell with source
// "upload" and no files fails in the cell without starting a run; with files, their bytes are
// copied once, marked for transfer and sent with the request, and the run folder depends on the
// files; an evaluate cell's samples come back from the lines outputs.json names.
import { assert, assertEquals } from "../../tests/assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { type Notebook, parseNotebook } from "../core/notebook.ts";
import type { SampleRecord } from "../runtime/records.ts";
import { encodeSample } from "../runtime/records.ts";
import type { RunInfo, RunRequest, UploadedDataset } from "../../workers/gpu.api.ts";
import { type RunApi, RunController, UPLOAD_REMEDY } from "./run-controller.ts";
import { runIdOf, uploadKey } from "../runtime/run-plan.ts";

const parsed = parseNotebook(demo);
if (!parsed.ok) throw new Error("demo notebook invalid");
/** The demo notebook with its dataset cell switched to uploaded files. */
const doc: Notebook = {
  ...parsed.doc,
  cells: parsed.doc.cells.map((
    c,
  ) => (c.type === "dataset" ? { ...c, params: { ...c.params, source: "upload" as const, split: "test" } } : c)),
};

function fakeApi(files: Record<string, string> = {}, runs: RunInfo[] = []) {
  const started: RunRequest[] = [];
  const api: RunApi = {
    startRun: (req) => {
      started.push(req);
      return Promise.resolve({ ok: true as const, summary: { title: "", accuracy: {}, files: [], cells: [] } });
    },
    stopRun: () => Promise.resolve(true),
    listRuns: () => Promise.resolve(runs),
    readRunFile: (_id, name) => Promise.resolve(files[name] ?? null),
    removeRun: () => Promise.resolve(),
    storage: () => Promise.resolve({ kind: "opfs" as const }),
  };
  return { api, started };
}

const questions = [
  { db_id: "pets", question: "How many pets?", query: "SELECT count(*) FROM pets" },
  { db_id: "pets", question: "Name the pets.", query: "SELECT name FROM pets" },
].map((q) => JSON.stringify(q)).join("\n") + "\n";

Deno.test("run controller: a dataset cell with source upload and no files fails in the cell; no run starts", async () => {
  const { api, started } = fakeApi();
  const c = new RunController(api, () => doc, (e) => e, "http://app/", { uploads: () => null });
  assertEquals(await c.run("cell", "base-concepts"), null);
  assertEquals(started.length, 0);
  const s = c.state("data");
  assertEquals([s.status, s.error?.kind], ["failed", "data"]);
  assert(
    s.error?.message.includes("upload a questions file and its databases in the dataset cell first"),
    s.error?.message,
  );

  // Questions without the database they name: the same cell says which one is missing.
  const partial: UploadedDataset = { questions, databases: new Map() };
  const c2 = new RunController(api, () => doc, (e) => e, "http://app/", { uploads: () => partial });
  await c2.run("cell", "base-concepts");
  assertEquals(started.length, 0);
  assert(/database pets, not uploaded/.test(c2.state("data").error?.message ?? ""), c2.state("data").error?.message);
});

Deno.test("run controller (issue #48 regression): a missing upload's remedy says to upload the file, not to check URLs", async () => {
  const { api } = fakeApi();
  for (const up of [null, { questions, databases: new Map() }]) {
    const c = new RunController(api, () => doc, (e) => e, "http://app/", { uploads: () => up });
    await c.run("cell", "base-concepts");
    const remedy = c.state("data").error?.remedy ?? "";
    assertEquals(remedy, UPLOAD_REMEDY);
    assert(/Upload the missing file in the dataset cell/.test(remedy) && !/URL/i.test(remedy), remedy);
  }
  // The worker's words for a database the run asked for and nobody uploaded get the same remedy.
  const worker = fakeApi();
  worker.api.startRun = () =>
    Promise.resolve({
      ok: false,
      error:
        'cell "base-concepts" (evaluate): database pets was not uploaded: upload a questions file and its databases in the dataset cell first',
      cellId: "base-concepts",
      stopped: false,
    });
  const w = new RunController(worker.api, () => doc, (e) => e, "http://app/", {
    uploads: () => ({ questions, databases: new Map([["pets", new Uint8Array(4)]]) }),
  });
  await w.run("cell", "base-concepts");
  assertEquals(w.state("base-concepts").error?.remedy, UPLOAD_REMEDY);
});

Deno.test("run controller (issue #48 item 9): other uploaded files clear the dataset cell's error about the earlier ones", async () => {
  const { api, started } = fakeApi();
  const uploadEvents = new EventTarget();
  const aircraft = JSON.stringify({ db_id: "aircraft", question: "How many planes?", query: "SELECT 1" }) + "\n";
  let up: UploadedDataset | null = { questions: aircraft, databases: new Map() };
  const c = new RunController(api, () => doc, (e) => e, "http://app/", { uploads: () => up, uploadEvents });
  await c.run("cell", "base-concepts");
  assertEquals(started.length, 0);
  assert(/database aircraft, not uploaded/.test(c.state("data").error?.message ?? ""), c.state("data").error?.message);
  // The same files again (a file picked twice): the error stays, it is still true.
  uploadEvents.dispatchEvent(new Event("change"));
  assertEquals(c.state("data").status, "failed");
  // Another questions file: the error spoke of files no longer there.
  up = { questions, databases: new Map() };
  uploadEvents.dispatchEvent(new Event("change"));
  assertEquals([c.state("data").status, c.state("data").error], ["idle", null]);
  // Running it says what is missing now.
  await c.run("cell", "base-concepts");
  assert(/database pets, not uploaded/.test(c.state("data").error?.message ?? ""), c.state("data").error?.message);
  // Every file forgotten: not run, rather than an error about files that are gone.
  up = null;
  uploadEvents.dispatchEvent(new Event("change"));
  assertEquals(c.state("data").status, "idle");
});

Deno.test("run controller: uploaded files go with the request, copied once and transferred; other files, other run folder", async () => {
  const { api, started } = fakeApi();
  const pets = new Uint8Array(300_000).map((_, i) => i % 253);
  const unused = new Uint8Array(50);
  let up: UploadedDataset = { questions, databases: new Map([["pets", pets], ["unused", unused]]) };
  const transferred: Transferable[][] = [];
  const c = new RunController(api, () => doc, (e) => e, "http://app/", {
    uploads: () => up,
    transfer: (value, buffers) => (transferred.push(buffers), value),
  });
  await c.run("cell", "base-concepts");
  assertEquals(started.length, 1);
  const sent = started[0].uploads!;
  assertEquals(sent.questions, questions);
  assertEquals([...sent.databases.keys()], ["pets"], "only the databases the questions use");
  assertEquals(sent.databases.get("pets"), pets);
  assert(sent.databases.get("pets")!.buffer !== pets.buffer, "a copy: the page keeps its bytes for browsing");
  assertEquals(transferred, [[sent.databases.get("pets")!.buffer]], "the copy is transferred, not cloned again");
  assertEquals(started[0].runId, runIdOf(doc, uploadKey(up)));
  assert(started[0].runId.startsWith(`${runIdOf(doc)}-u`), started[0].runId);

  // A changed byte at the end of a large database: another run folder.
  const changed = pets.slice();
  changed[changed.length - 1] ^= 1;
  up = { questions, databases: new Map([["pets", changed]]) };
  await c.run("cell", "base-concepts");
  assert(started[1].runId !== started[0].runId, "other files, other folder");
  // The demo notebook (no uploads) keeps its plain id.
  assertEquals(runIdOf(parsed.doc, uploadKey(up)), runIdOf(parsed.doc));
});

Deno.test("run controller: after a reload an evaluate cell's samples come back from samples.jsonl", async () => {
  const sample = (phase: SampleRecord["phase"], step: number, question: string): SampleRecord => ({
    v: 1,
    phase,
    step,
    taskId: question,
    dbId: "shop",
    question,
    sampleIndex: 0,
    prompt: "p",
    completion: "c",
    reasoning: null,
    extraction: { sql: null, source: "none", reason: "no SQL" },
    predicted: null,
    gold: null,
    error: null,
    correct: false,
    execMs: 0,
    reward: { total: 0, components: {}, weighted: {} },
    advantage: null,
    completionTokens: 1,
    logprob: 0,
    finishReason: "eos",
  } as unknown as SampleRecord);
  // An earlier run of "baseline" (lines 0-1), a GRPO step (2-3), then the latest "baseline" run (4-5).
  const lines = [
    sample("eval", 0, "old a"),
    sample("eval", 0, "old b"),
    sample("grpo", 1, "g1"),
    sample("grpo", 1, "g2"),
    sample("eval", 0, "new a"),
    sample("eval", 0, "new b"),
  ];
  const runId = runIdOf(parsed.doc);
  const outputs = {
    "base-concepts": {
      id: "base-concepts",
      type: "evaluate",
      ms: 5,
      report: {
        kind: "evaluate",
        cellId: "base-concepts",
        split: "test",
        label: "baseline",
        overall: { questions: 2, greedy: 0 },
        byDifficulty: {},
        samplesPerQuestion: 0,
        predictionsPath: "p",
      },
      sampleLines: { from: 4, count: 2 },
    },
  };
  const { api } = fakeApi({
    "outputs.json": JSON.stringify(outputs),
    "samples.jsonl": lines.map(encodeSample).join(""),
  }, [
    {
      runId,
      title: "t",
      status: "done",
      mode: "cell",
      cellId: "base-concepts",
      startedAt: "a",
      updatedAt: "b",
      checkpoints: {},
    },
  ]);
  const c = new RunController(api, () => parsed.doc, (e) => e, "http://app/");
  await c.restore(false);
  const s = c.state("base-concepts");
  assertEquals(s.status, "done");
  assertEquals(s.samples.map((r) => r.question), ["new a", "new b"]);
});

Deno.test("run controller: a run started before the page finished looking for stored runs is not taken for an interrupted one", async () => {
  // Regression: Run clicked right after load; listRuns then saw this run's own "running" folder and
  // the page showed "The page was reloaded during a run: resuming it" with a Resume button.
  const runId = runIdOf(parsed.doc);
  let finish: (() => void) | null = null;
  let listed: (() => void) | null = null;
  const listing = new Promise<void>((r) => (listed = r));
  const api: RunApi = {
    startRun: () =>
      new Promise((
        resolve,
      ) => (finish = () => resolve({ ok: true, summary: { title: "", accuracy: {}, files: [], cells: [] } }))),
    stopRun: () => Promise.resolve(true),
    listRuns: async () => {
      await listing;
      return [{
        runId,
        title: "t",
        status: "running",
        mode: "cell",
        cellId: "grpo",
        startedAt: "a",
        updatedAt: "b",
        checkpoints: {},
      }];
    },
    readRunFile: () => Promise.resolve(null),
    removeRun: () => Promise.resolve(),
    storage: () => Promise.resolve({ kind: "opfs" as const }),
  };
  const c = new RunController(api, () => parsed.doc, (e) => e, "http://app/");
  const restored = c.restore(false);
  const run = c.run("cell", "grpo");
  await Promise.resolve();
  listed!();
  assertEquals(await restored, null);
  assertEquals([c.banner, c.pending], [null, null]);
  assertEquals(c.state("grpo").status, "waiting", "the run's own state is left alone");
  finish!();
  await run;
});

Deno.test("run controller: after a reload a notebook on uploaded files shows its last run's outputs and asks for the files to continue", async () => {
  const u: UploadedDataset = { questions, databases: new Map([["pets", new Uint8Array(200).fill(3)]]) };
  const runId = runIdOf(doc, uploadKey(u));
  const outputs = {
    "base-concepts": {
      id: "base-concepts",
      type: "evaluate",
      ms: 5,
      accuracy: 0.5,
      report: {
        kind: "evaluate",
        cellId: "base-concepts",
        split: "test",
        label: "baseline",
        overall: { questions: 2, greedy: 0.5 },
        byDifficulty: {},
        samplesPerQuestion: 0,
        predictionsPath: "p",
      },
    },
  };
  const info: RunInfo = {
    runId,
    title: "t",
    status: "running",
    mode: "cell",
    cellId: "grpo",
    startedAt: "a",
    updatedAt: "b",
    checkpoints: { grpo: 2 },
  };
  const other: RunInfo = { ...info, runId: "nb-12345678" };
  const { api, started } = fakeApi({ "outputs.json": JSON.stringify(outputs) }, [info, other]);
  // The reloaded page: no uploads yet.
  let current: UploadedDataset | null = null;
  const c = new RunController(api, () => doc, (e) => e, "http://app/", { uploads: () => current });
  assertEquals(await c.restore(false), null, "nothing resumes without the files");
  assertEquals(started.length, 0);
  assertEquals([c.state("base-concepts").status, c.state("base-concepts").accuracy], ["done", 0.5]);
  assert(c.banner?.includes("Upload the same files"), c.banner ?? "");
  assertEquals(c.pending, null);
  // The same files again: the run uses that folder.
  current = u;
  await c.run("cell", "grpo");
  assertEquals(started[0].runId, runId);
});
