// The PRM cells end to end on a tiny random model (lavapipe / Dawn), in process: PRM data (its
// labels.jsonl, curation and statistics; interrupted after a batch and resumed, the same file as an
// uninterrupted run), PRM train (a process and an outcome model; interrupted and resumed from its
// checkpoint, the same PRM folder; the folder loads back and scores the same), GRPO with the prm
// reward and both step-level advantages, self-consistency with PRM best-of-N at N = 1, 2, 4.
// A random model writes no SQL, so every chain is one wrong step: what is checked is mechanics —
// including chain-of-ctes@2's answer prefix: every chain, rollout and GRPO sample is an answer that
// starts with "```sql\nWITH", written after a prompt that does not.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { decodeMetrics } from "../../core/metrics.ts";
import { parseNotebook } from "../../core/notebook.ts";
import { decodePrmRecords } from "../../core/prm-dataset.ts";
import { readPrmFolder } from "../../model/prm-files.ts";
import { MemorySource } from "../../model/source.ts";
import { decodeSamples, type PrmDataReport, type PrmTrainReport, type SelfConsistencyReport } from "../records.ts";
import { MemoryStore } from "../store.ts";
import { denoEnv } from "../recipe/env.deno.ts";
import {
  tinyDatasetCell,
  tinyPromptCorpus,
  writeTinyDataset,
  writeVaryingLengthModel,
} from "../recipe/fixtures.deno.ts";
import { runNotebook } from "../recipe/runner.ts";

const TEMPLATE = "chain-of-ctes@2";
const PREFIX = "```sql\nWITH";
const OUTCOME = {
  components: [{ name: "error_penalty", weight: 1 }, { name: "length", weight: 1, params: { maxTokens: 2 } }],
};
const WITH_PRM = { components: [...OUTCOME.components, { name: "prm", weight: 0.5 }] };
const SETUP = [
  tinyDatasetCell({ devFraction: 0.25 }),
  { id: "model", type: "model", params: { source: "url", url: "model", dtype: "f32", loraRank: 2, loraAlpha: 4 } },
  { id: "prompt", type: "prompt", params: { template: TEMPLATE, maxPromptTokens: 1024 } },
  { id: "reward", type: "reward", params: { spec: OUTCOME } },
];
const DATA = {
  id: "labels",
  type: "prmdata",
  params: { chains: 3, rollouts: 2, budget: 8, maxNewTokens: 4, questionsPerBatch: 2, dropUnparsed: false, balance: 0 },
};
const TRAIN = [
  {
    id: "prm",
    type: "prmtrain",
    params: { loraRank: 2, loraAlpha: 4, lr: 0.01, epochs: 2, batchChains: 4, devFraction: 0.25 },
  },
  {
    id: "orm",
    type: "prmtrain",
    params: { labels: "outcome", loraRank: 2, loraAlpha: 4, lr: 0.01, epochs: 1, batchChains: 8, devFraction: 0.25 },
  },
];
const USE = [
  { id: "reward2", type: "reward", params: { spec: WITH_PRM } },
  {
    id: "grpo",
    type: "grpo",
    params: {
      G: 3,
      steps: 1,
      batchQuestions: 2,
      maxNewTokens: 4,
      lr: 0.01,
      evalEvery: 0,
      dropEqualGroups: false,
      stepAdvantage: "prm-weighted",
    },
  },
  {
    id: "grpo2",
    type: "grpo",
    params: {
      G: 3,
      steps: 1,
      batchQuestions: 2,
      maxNewTokens: 4,
      lr: 0.01,
      evalEvery: 0,
      dropEqualGroups: false,
      stepAdvantage: "per-step-norm",
      prm: "prm",
    },
  },
  { id: "sc", type: "selfconsistency", params: { N: 4, split: "dev", n: 2, maxNewTokens: 4, prm: ["prm", "orm"] } },
];

function doc(cells: unknown[]) {
  const parsed = parseNotebook({ version: 1, title: "prm", cells });
  assert(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
  return parsed.doc;
}

/** Runs `cells` into `store`, stopping the run at the first metrics record of `stopAt` (a crash after that batch or step). */
async function run(dir: string, store: MemoryStore, cells: unknown[], stopAt?: string, logs: string[] = []) {
  const ac = new AbortController();
  return await runNotebook(doc(cells), { ...denoEnv({ out: dir, base: dir }), store }, {
    signal: ac.signal,
    opts: { samplesPerStep: 64 },
    onLog: (m) => logs.push(m),
    onMetrics: (r) => r.phase === stopAt && ac.abort(new Error("test stop")),
  });
}

const text = async (store: MemoryStore, name: string) =>
  new TextDecoder().decode((await store.read(name)) ?? new Uint8Array());

Deno.test({
  name:
    "prm cells: labelling resumes after a batch, training resumes from its checkpoint, GRPO with the prm reward and step advantages, PRM best-of-N",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-prm-" });
    await writeTinyDataset(`${dir}/data`);
    await writeVaryingLengthModel(`${dir}/model`, {
      seed: 5,
      eosStrength: 1,
      corpus: await tinyPromptCorpus(`${dir}/data`, [TEMPLATE]),
    });
    // One straight run of everything.
    const straight = new MemoryStore();
    const straightLogs: string[] = [];
    const summary = await run(dir, straight, [...SETUP, DATA, ...TRAIN, ...USE], undefined, straightLogs);
    // GRPO without a prm parameter scores with the last process PRM, not the outcome model trained after it.
    assert(
      straightLogs.some((l) => l.includes(`cell "grpo" uses the PRM of cell "prm" (process labels`)),
      straightLogs.join("\n"),
    );
    const data = summary.cells.find((c) => c.id === "labels")?.report as PrmDataReport;
    const labels = decodePrmRecords(await text(straight, "prm-data/labels/labels.jsonl"));
    assertEquals(labels.bad, []);
    assert(
      data.skipped.emptyGold >= 1,
      `questions with an empty gold result are left out: ${JSON.stringify(data.skipped)}`,
    );
    assertEquals(data.raw.chains, labels.records.length);
    assertEquals((await text(straight, "prm-data/labels/questions.jsonl")).trim().split("\n").length, data.questions);
    for (const r of labels.records) {
      assert(
        r.completion.startsWith(PREFIX) && !r.completion.startsWith(PREFIX + PREFIX),
        `an answer that starts with the prefix once: ${JSON.stringify(r.completion)}`,
      );
      assert(r.labels.length <= r.ends.length && r.ends.length >= 1, `labels within the steps: ${JSON.stringify(r)}`);
      assert(!r.correct && r.labels.at(-1) === 0, "a random model's chains are wrong at their only step");
    }
    assertEquals(data.raw.firstError["0"], labels.records.length);
    const train = decodePrmRecords(await text(straight, "prm-data/labels/train.jsonl")).records;
    assertEquals(data.curated.chains, train.length);
    // The process PRM trained on the chains of the training questions, and wrote its folder.
    const prm = summary.cells.find((c) => c.id === "prm")?.report as PrmTrainReport;
    assertEquals(prm.steps, 2 * Math.ceil(prm.examples / 4));
    assert(
      prm.examples > 0 && prm.examples + prm.devExamples === train.length,
      `examples ${prm.examples} + ${prm.devExamples}`,
    );
    const files = new Map<string, Uint8Array>();
    for (const f of prm.files) files.set(f.split("/").at(-1) ?? f, (await straight.read(f)) ?? new Uint8Array());
    const folder = await readPrmFolder(new MemorySource(files));
    assertEquals([folder.adapter.r, folder.info.labels, folder.info.template], [2, "process", TEMPLATE]);
    const metrics = decodeMetrics(await text(straight, "metrics.jsonl")).records;
    assertEquals(
      metrics.filter((r) => r.phase === "prmtrain").length,
      prm.steps + (summary.cells.find((c) => c.id === "orm")?.report as PrmTrainReport).steps,
    );
    assert(metrics.filter((r) => r.phase === "prmtrain").every((r) => Number.isFinite(r.loss)), "finite losses");
    // Each labelling batch says where its time went: sampling (its calls counted) and judging by execution.
    const batches = metrics.filter((r) => r.phase === "prmdata");
    assert(
      batches.length > 0 &&
        batches.every((r) =>
          (r.ms?.sample ?? 0) > 0 && (r.ms?.score ?? -1) >= 0 && Number(r.extra?.sampleCalls) >= 1 &&
          r.extra?.roomCalls === 0
        ),
      `prmdata metrics: ${JSON.stringify(batches)}`,
    );
    // GRPO: the prm component is scored, the records carry each step's PRM score.
    const grpo = metrics.filter((r) => r.phase === "grpo");
    assertEquals(grpo.length, 2);
    assert(
      grpo.every((r) => r.rewards?.prm !== undefined && (r.extra?.prmMean ?? -1) >= 0),
      `prm reward and PRM score metrics: ${JSON.stringify(grpo)}`,
    );
    const recs = decodeSamples(await text(straight, "samples.jsonl")).records.filter((r) => r.phase === "grpo");
    assert(
      recs.every((r) => r.completion.startsWith(PREFIX) && !r.prompt.endsWith(PREFIX)),
      "GRPO records: the prompt before the answer, the answer from its prefix",
    );
    assert(
      recs.length === 12 &&
        recs.every((r) =>
          r.steps?.length && r.steps.every((s) => typeof s.prmScore === "number" && s.prmScore > 0 && s.prmScore < 1)
        ),
      `steps[].prmScore on GRPO records: ${JSON.stringify(recs.map((r) => [r.completion, r.steps]))}`,
    );
    assert(
      recs.every((r) => Math.abs(r.reward.components.prm - (r.steps?.[0].prmScore ?? NaN)) < 1e-6),
      "the prm component is the mean step score (one step here)",
    );
    // Self-consistency: both reward models ranked, every rule at N = 1, 2, 4.
    const sc = summary.cells.find((c) => c.id === "sc")?.report as SelfConsistencyReport;
    assertEquals(sc.prmBestOfN?.map((x) => [x.cellId, x.labels]), [["prm", "process"], ["orm", "outcome"]]);
    assertEquals(sc.atN?.map((a) => [a.N, Object.keys(a.prm)]), [[1, ["prm", "orm"]], [2, ["prm", "orm"]], [4, [
      "prm",
      "orm",
    ]]]);
    assertEquals(sc.atN?.at(-1)?.vote, sc.voteAccuracy);

    // Interrupted after the first labelling batch, then run again into the same store: the same labels.
    const resumed = new MemoryStore();
    await run(dir, resumed, [...SETUP, DATA], "prmdata").then(
      () => assert(false, "the run should stop"),
      (e: Error) => assert(/cancelled/.test(e.message), e.message),
    );
    const partial = decodePrmRecords(await text(resumed, "prm-data/labels/labels.jsonl")).records.length;
    assert(
      partial > 0 && partial < labels.records.length,
      `stopped after the first batch (${partial} of ${labels.records.length})`,
    );
    // Training interrupted after its first step, then everything again.
    const logs: string[] = [];
    await run(dir, resumed, [...SETUP, DATA, TRAIN[0]], "prmtrain", logs).then(
      () => assert(false, "the run should stop"),
      (e: Error) => assert(/cancelled/.test(e.message), e.message),
    );
    const again = await run(dir, resumed, [...SETUP, DATA, ...TRAIN]);
    assertEquals(
      await text(resumed, "prm-data/labels/labels.jsonl"),
      await text(straight, "prm-data/labels/labels.jsonl"),
    );
    assertEquals(
      await text(resumed, "prm-data/labels/train.jsonl"),
      await text(straight, "prm-data/labels/train.jsonl"),
    );
    assert(logs.some((l) => l.includes(`resumed after 2 of ${data.questions} questions`)), logs.join("\n"));
    assertEquals((again.cells.find((c) => c.id === "labels")?.report as PrmDataReport).resumedFrom, data.questions);
    assertEquals((again.cells.find((c) => c.id === "prm")?.report as PrmTrainReport).resumedFrom, 1);
    for (const f of prm.files) assertEquals(await resumed.read(f), await straight.read(f), `${f} after resuming`);
    console.log(
      `prm data: ${data.questions} questions (${
        JSON.stringify(data.skipped)
      } left out), ${data.raw.chains} chains, ${data.curated.chains} for training; prm: ${prm.steps} steps, loss ${
        JSON.stringify(prm.loss)
      }, dev ${JSON.stringify(prm.dev)}; sc atN ${JSON.stringify(sc.atN)}`,
    );
    await Deno.remove(dir, { recursive: true });
  },
});
