// The PRM data cell: step labels by execution for the training questions (core/prm-label.ts's
// budgeted tree search over chains sampled with the GPU policy, judged by the run's SQL runner),
// written as it goes — prm-data/<cell>/labels.jsonl grows by one batch of questions at a time and
// state.json says how far it got, so a restarted run continues after the last finished batch with
// the same samples an uninterrupted run would draw — then curated into train.jsonl (core/prm-dataset.ts).
import { extractSql } from "../../core/extract.ts";
import type { PrmDataParams } from "../../core/notebook-params.ts";
import {
  curate,
  decodePrmRecords,
  encodeJsonl,
  prmDataStats,
  type PrmQuestion,
  type PrmRecord,
} from "../../core/prm-dataset.ts";
import { labelQuestions, type RolloutEnv } from "../../core/prm-label.ts";
import { prmStepSpans, tokenCharEnds } from "../../core/prm-steps.ts";
import type { Task } from "../../core/types.ts";
import type { PrmDataReport } from "../records.ts";
import {
  checkAborted,
  emitMetrics,
  mixSeed,
  progressReporter,
  requireSetup,
  type RunContext,
  splitTasks,
} from "../recipe/context.ts";
import { toolsFor } from "../recipe/common.ts";

/** Where a PRM data cell's files live. */
export function prmDataPaths(
  cellId: string,
): { questions: string; labels: string; train: string; stats: string; state: string } {
  const d = `prm-data/${cellId}`;
  return {
    questions: `${d}/questions.jsonl`,
    labels: `${d}/labels.jsonl`,
    train: `${d}/train.jsonl`,
    stats: `${d}/stats.json`,
    state: `${d}/state.json`,
  };
}

/** How far a PRM data cell got (state.json). */
interface PrmDataState {
  config: string;
  /** Usable questions done, in batch order. */
  done: number;
  /** Lines of labels.jsonl that belong to the finished batches. */
  lines: number;
  rollouts: number;
  sampled: number;
}

function isState(x: unknown): x is PrmDataState {
  if (typeof x !== "object" || x === null) return false;
  const s: Record<string, unknown> = { ...x };
  return typeof s.config === "string" &&
    ["done", "lines", "rollouts", "sampled"].every((k) => typeof s[k] === "number");
}

const dec = new TextDecoder();

/** Runs the PRM data cell; resumes from `prm-data/<cell>/state.json` when its parameters match. */
export async function runPrmData(ctx: RunContext, cellId: string, p: PrmDataParams): Promise<PrmDataReport> {
  const setup = requireSetup(ctx, cellId);
  const runtime = setup.model.runtime;
  const split = p.split || setup.dataset.params.split;
  const tasks = splitTasks(ctx, cellId, split).slice(0, p.n);
  const seed = ctx.opts.seed ?? p.seed;
  const store = ctx.env.store;
  const paths = prmDataPaths(cellId);
  // Judged by execution alone: a prm reward component has no say in what the PRM learns.
  const tools = toolsFor(ctx, cellId, { template: p.template, prm: null });
  const progress = progressReporter(ctx, cellId, "prmdata");
  progress(0, "running the gold queries…");
  const skipped = { emptyGold: 0, goldFailed: 0 };
  const usable: Task[] = [];
  for (const t of tasks) {
    const g = await tools.scorer.gold(t);
    if (!g.reply.ok || g.reply.result.capped) skipped.goldFailed++;
    else if (p.dropEmptyGold && g.reply.result.rows.length === 0) skipped.emptyGold++;
    else usable.push(t);
  }
  if (usable.length === 0) {
    throw new Error(
      `no question of split "${split}" has a usable gold result (${skipped.goldFailed} failed, ${skipped.emptyGold} empty)`,
    );
  }
  const prompts = await tools.prompter.prompts(usable);
  const questions: PrmQuestion[] = usable.map((t, i) => ({
    v: 1,
    taskId: t.id,
    dbId: t.db_id,
    question: t.question,
    gold_sql: t.gold_sql,
    prompt: prompts[i].text,
    template: p.template,
    ...(t.difficulty ? { difficulty: t.difficulty } : {}),
  }));
  await store.write(paths.questions, encodeJsonl(questions));
  // What the search depends on (curation's knobs do not: train.jsonl is rebuilt from labels.jsonl every run).
  const config = JSON.stringify({
    split,
    n: p.n,
    template: p.template,
    chains: p.chains,
    rollouts: p.rollouts,
    budget: p.budget,
    maxSteps: p.maxSteps,
    temperature: p.temperature,
    maxNewTokens: p.maxNewTokens,
    questionsPerBatch: p.questionsPerBatch,
    dropEmptyGold: p.dropEmptyGold,
    seed,
    tasks: usable.length,
    taskIds: mixSeed(...usable.map((t) => t.id)),
    model: runtime.hf.name,
  });
  let state: PrmDataState = { config, done: 0, lines: 0, rollouts: 0, sampled: 0 };
  const saved = await store.read(paths.state);
  if (saved) {
    const s: unknown = JSON.parse(dec.decode(saved));
    if (!isState(s)) throw new Error(`${paths.state} is not a PRM data state`);
    if (s.config !== config) {
      throw new Error(
        `${paths.state} was made with other parameters; use a fresh output folder or remove prm-data/${cellId}`,
      );
    }
    state = s;
    // Lines past the state's count come from a batch that did not finish: they are redone.
    const text = dec.decode((await store.read(paths.labels)) ?? new Uint8Array());
    const lines = text.split("\n").filter((l) => l.trim() !== "");
    if (lines.length !== state.lines) {
      await store.write(
        paths.labels,
        lines.slice(0, state.lines).map((l) => l + "\n").join(""),
      );
    }
    ctx.onLog(`prmdata "${cellId}": resumed after ${state.done} of ${usable.length} questions`);
  } else {
    await store.write(paths.labels, "");
  }
  const resumedFrom = state.done;
  const extractMode = tools.prompter.template.extractMode;
  const B = p.questionsPerBatch;
  for (let start = state.done; start < usable.length; start += B) {
    checkAborted(ctx);
    const batch = usable.slice(start, start + B);
    const batchPrompts = prompts.slice(start, start + B);
    let sampled = 0;
    // Where the batch's time went: sampling calls (those of prefixes without room apart) and judging by execution.
    const calls: RoomCalls = { fit: 0, room: 0, roomSteps: 0 };
    let sampleMs = 0, judgeMs = 0;
    const env: RolloutEnv = {
      sample: async (requests, n, wave) => {
        // A request continues its prefix of an answer from a token boundary of that answer (rolloutPrefix);
        // a whole answer (empty prefix) starts with the template's answer prefix. The returned text is what
        // follows the request's prefix (labelQuestions appends it).
        const starts = requests.map((r) =>
          rolloutPrefix(
            r.prefix,
            r.answer,
            batchPrompts[r.question].answerPrefix,
            (t) => runtime.encodePlain(t),
            (t) => runtime.decode(t),
          )
        );
        const ids = requests.map((r, j) => [...batchPrompts[r.question].textIds, ...starts[j].ids]);
        const t0 = ctx.env.now();
        const out = await sampleWithRoom(
          ids,
          n,
          {
            maxNewTokens: p.maxNewTokens,
            maxPositions: runtime.policy.maxPositions,
            batch: Math.max(1, ctx.opts.sampleBatchPrompts),
            seedFor: (kind, a, b) =>
              kind === "fit"
                ? mixSeed(seed, "prmdata", start, wave, a)
                : mixSeed(seed, "prmdata-room", start, wave, a, b),
          },
          async (prompts, k, maxNewTokens, callSeed) => {
            checkAborted(ctx);
            return await runtime.sample(prompts, k, {
              temperature: p.temperature,
              topP: 1,
              topK: 0,
              minP: 0,
              stop: [],
              maxNewTokens,
              seed: callSeed,
            });
          },
          (t) => runtime.decode(t),
          calls,
        );
        sampleMs += ctx.env.now() - t0;
        out.forEach((texts, j) =>
          texts.forEach((t, k) => (texts[k] = starts[j].text.slice(requests[j].prefix.length) + t))
        );
        if (wave === 0) sampled += requests.length * n;
        progress(
          (start + batch.length * 0.5) / usable.length,
          `questions ${start + 1}-${start + batch.length} of ${usable.length}: search wave ${wave + 1}`,
        );
        return out;
      },
      judge: async (q, answers) => {
        const t0 = ctx.env.now();
        const r = (await Promise.all(answers.map((a) => tools.scorer.execute(batch[q], a)))).map((s) => s.correct);
        judgeMs += ctx.env.now() - t0;
        return r;
      },
      steps: (answer) => {
        const s = prmStepSpans(answer);
        return { ends: s.ends, lastIsFinal: s.names.at(-1) === null };
      },
    };
    const r = await labelQuestions(batch.length, env, {
      chains: p.chains,
      rollouts: p.rollouts,
      budget: p.budget,
      maxSteps: p.maxSteps,
    });
    const records: PrmRecord[] = r.chains.map((c) => {
      const t = batch[c.question];
      const x = extractSql(c.completion, { mode: extractMode });
      return {
        v: 1,
        taskId: t.id,
        dbId: t.db_id,
        completion: c.completion,
        sql: x.sql,
        ends: c.ends,
        names: prmStepSpans(c.completion).names,
        labels: c.labels,
        rates: c.rates,
        correct: c.correct,
        firstError: c.firstError,
        complete: c.complete,
        source: c.source,
        prefixSteps: c.prefixSteps,
      };
    });
    await store.append(paths.labels, encodeJsonl(records));
    const rollouts = r.rollouts.reduce((a, b) => a + b, 0);
    state = {
      ...state,
      done: start + batch.length,
      lines: state.lines + records.length,
      rollouts: state.rollouts + rollouts,
      sampled: state.sampled + sampled,
    };
    await store.write(paths.state, JSON.stringify(state));
    const st = prmDataStats(records);
    await emitMetrics(ctx, {
      // Numbered by batch of questions (1-based), the same in a resumed run.
      v: 1,
      step: Math.floor(start / B) + 1,
      phase: "prmdata",
      time: ctx.env.now(),
      execAccuracy: records.length ? st.correctChains / records.length : 0,
      ms: { sample: sampleMs, score: judgeMs },
      extra: {
        questions: batch.length,
        chains: records.length,
        rollouts,
        waves: r.waves,
        positive: st.labels.positive,
        negative: st.labels.negative,
        sampleCalls: calls.fit,
        roomCalls: calls.room,
        roomSteps: calls.roomSteps,
      },
    });
    progress(
      state.done / usable.length,
      `${state.done} of ${usable.length} questions: ${state.lines} labelled chains, ${state.rollouts} rollouts`,
    );
  }
  const all = decodePrmRecords(dec.decode((await store.read(paths.labels)) ?? new Uint8Array()));
  if (all.bad.length) throw new Error(`${paths.labels}: lines ${all.bad.slice(0, 5).join(", ")} are not PRM records`);
  const { kept, report: curation } = curate(all.records, {
    dropUnparsed: p.dropUnparsed,
    minPositiveRate: p.minPositiveRate,
    balance: p.balance,
    seed: mixSeed(seed, "prmdata-balance"),
  });
  await store.write(paths.train, encodeJsonl(kept));
  const raw = prmDataStats(all.records);
  const curated = prmDataStats(kept);
  await store.write(
    paths.stats,
    JSON.stringify({ raw, curation, curated, skipped, rollouts: state.rollouts, sampled: state.sampled }, null, 1),
  );
  progress(
    1,
    `${kept.length} training chains (${curated.labels.positive} positive / ${curated.labels.negative} negative steps)`,
  );
  return {
    kind: "prmdata",
    cellId,
    split,
    questions: usable.length,
    skipped,
    rollouts: state.rollouts,
    sampled: state.sampled,
    raw,
    curation,
    curated,
    files: [paths.questions, paths.labels, paths.train, paths.stats],
    resumedFrom,
  };
}

/**
 * Where a rollout request's sampling starts after the rendered prompt: token ids and the text they
 * decode to. A whole answer (empty prefix) starts with the template's answer prefix. A chain's prefix
 * ends at a step, which is rarely a token boundary: the text ")" that ends a CTE is, in the chain,
 * part of a token such as "),\n" or ")\n", and the prefix re-encoded alone ends in a token the model
 * never wrote there (on the demo model every step end, 544 of 544). So the prefix continues from the
 * chain's own tokens (`answer` re-encoded), up to the first token that reaches the step's end: the
 * text is the prefix plus the rest of that token. Without `answer` the prefix is encoded as it is. A
 * prefix must begin with the answer prefix (it was cut from an answer that does).
 */
export function rolloutPrefix(
  prefix: string,
  answer: string | undefined,
  answerPrefix: string,
  encodePlain: (text: string) => number[],
  decode: (ids: readonly number[]) => string,
): { ids: number[]; text: string } {
  if (!prefix) return { ids: answerPrefix ? encodePlain(answerPrefix) : [], text: answerPrefix };
  if (!prefix.startsWith(answerPrefix)) {
    throw new Error(
      `PRM data: the prefix ${JSON.stringify(prefix.slice(0, 40))} does not start with the template's answer start ${
        JSON.stringify(answerPrefix)
      }`,
    );
  }
  if (answer === undefined) return { ids: encodePlain(prefix), text: prefix };
  if (!answer.startsWith(prefix)) {
    throw new Error(`PRM data: the prefix ${JSON.stringify(prefix.slice(0, 40))} is not the start of its chain`);
  }
  const ids = encodePlain(answer);
  const ends = tokenCharEnds(ids, decode);
  const k = ends.findIndex((e) => e >= prefix.length);
  const head = k < 0 ? null : ids.slice(0, k + 1);
  const text = head ? decode(head) : "";
  // (A tokenizer whose decoding does not give the answer's text back: the prefix as it is.)
  if (!head || !text.startsWith(prefix) || !answer.startsWith(text)) return { ids: encodePlain(prefix), text: prefix };
  return { ids: head, text };
}

/** One sampled row as `sampleWithRoom` reads it (the sampler's `Sample`). */
export interface RoomSample {
  prompt: number;
  index: number;
  tokens: number[];
  text: string;
  finishReason: string;
}

/** What `sampleWithRoom` called, added up: calls of prompts that fit, calls of the others, and those calls' new-token caps. */
export interface RoomCalls {
  fit: number;
  room: number;
  roomSteps: number;
}

/**
 * `n` samples of each prompt, each up to `maxNewTokens` or, where the prompt leaves less of the model's
 * `maxPositions`, up to that room (none where no room is left), in sampling calls of at most `batch` prompts.
 * Prompts that leave `maxNewTokens` go together in the order given (call seed `seedFor("fit", first index, 0)`).
 * The others used to be continued one call each — on the demo, with ~600-token prompts, nearly every rollout —
 * and now share calls: sorted by length, `batch` at a time, each call capped at its longest prompt's room (the
 * sampler left-pads, so that is what fits); a row stopped by that cap before its own room continues in the next
 * round as a prompt of its own (its prompt and the tokens so far, one sample; `seedFor("room", round, group)`).
 * So every row ends where a call of its own would have ended it: at EOS or at its own room. A continued row's
 * text is its tokens decoded together. Returns per prompt its texts in sample order; `counts` adds up the calls.
 */
export async function sampleWithRoom(
  prompts: readonly (readonly number[])[],
  n: number,
  opts: {
    maxNewTokens: number;
    maxPositions: number;
    batch: number;
    seedFor: (kind: "fit" | "room", a: number, b: number) => number;
  },
  sample: (prompts: number[][], n: number, maxNewTokens: number, seed: number) => Promise<RoomSample[]>,
  decode: (ids: readonly number[]) => string,
  counts?: RoomCalls,
): Promise<string[][]> {
  const { maxNewTokens, maxPositions, batch: P } = opts;
  // A prompt either fits (its texts pushed in order) or not (each row's text set at its sample slot when it ends).
  const out: string[][] = prompts.map(() => []);
  // A row still decoding: its prompt, its sample slot, the tokens so far (none in round 0).
  let rows: { owner: number; slot: number; done: number[] }[] = [];
  const fresh: number[] = [];
  for (let i = 0; i < prompts.length; i += P) {
    const js = Array.from({ length: Math.min(P, prompts.length - i) }, (_, k) => i + k);
    const room = splitByRoom(js.map((j) => prompts[j].length), maxNewTokens, maxPositions);
    const fits = room.fits.map((k) => js[k]);
    if (fits.length) {
      const got = await sample(fits.map((j) => [...prompts[j]]), n, maxNewTokens, opts.seedFor("fit", i, 0));
      if (counts) counts.fit++;
      got.sort((a, b) => a.prompt - b.prompt || a.index - b.index);
      for (const s of got) out[fits[s.prompt]].push(s.text);
    }
    for (const [k, left] of room.alone) if (left >= 1) fresh.push(js[k]);
  }
  const finish = (owner: number, slot: number, tokens: number[], s: RoomSample, continued: boolean) => {
    const body = s.finishReason === "eos" ? tokens.slice(0, -1) : tokens;
    out[owner][slot] = !continued ? s.text : body.length ? decode(body) : "";
  };
  for (let round = 0; round === 0 ? fresh.length > 0 : rows.length > 0; round++) {
    // Round 0: the prompts that did not fit, n samples each; later rounds: single rows cut by their call's cap.
    const items = round === 0 ? fresh.map((j) => ({ owner: j, slot: -1, done: [] as number[] })) : rows;
    const len = (r: { owner: number; done: number[] }) => prompts[r.owner].length + r.done.length;
    items.sort((a, b) => len(a) - len(b) || a.owner - b.owner || a.slot - b.slot);
    const next: typeof rows = [];
    for (let g = 0; g * P < items.length; g++) {
      const group = items.slice(g * P, (g + 1) * P);
      const cap = maxPositions - Math.max(...group.map(len));
      const got = await sample(
        group.map((r) => [...prompts[r.owner], ...r.done]),
        round === 0 ? n : 1,
        cap,
        opts.seedFor("room", round, g),
      );
      if (counts) (counts.room++, counts.roomSteps += cap);
      for (const s of got) {
        const r = group[s.prompt];
        const slot = round === 0 ? s.index : r.slot;
        const tokens = [...r.done, ...s.tokens];
        // Cut by the cap, not by EOS, with room of its own left: on in the next round.
        if (s.finishReason === "length" && prompts[r.owner].length + tokens.length < maxPositions) {
          next.push({ owner: r.owner, slot, done: tokens });
        } else finish(r.owner, slot, tokens, s, round > 0);
      }
    }
    rows = next;
  }
  return out;
}

/**
 * Which of a sampling call's prompts (by their lengths) leave maxNewTokens of the model's `maxPositions`
 * (`fits`, in order), and, for each of the others, the new tokens left for it (0 or less: none).
 */
export function splitByRoom(
  lengths: readonly number[],
  maxNewTokens: number,
  maxPositions: number,
): { fits: number[]; alone: [number, number][] } {
  const fits: number[] = [], alone: [number, number][] = [];
  lengths.forEach((n, k) => (n + maxNewTokens <= maxPositions ? fits.push(k) : alone.push([k, maxPositions - n])));
  return { fits, alone };
}
