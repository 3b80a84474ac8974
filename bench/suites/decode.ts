// Suite decode (issue 51): q4 decoding of a random Qwen2.5-0.5B-shaped model at batch 8 and 64, ours (the captured
// sampler, bench/suites/decode-ours.ts) beside transformers' generate (bench/torch/generate.py: bf16, sdpa, warm) and
// transformers.js v4 generating from the same q4 graph on the same engine (bench/suites/decode-tjs.ts), each in a
// process of its own, in the order torch, ours, transformers.js. tok/s = B (new - 1) / (time of the full generate -
// first token), the decoding rate after the first token, for all three; first token = prefill + one sampled token.
// pending=16,1024 runs our captured decoding under each WebGPU EP dispatches-per-submit value (ort.ts), alternated in
// one process `reps` times: the first value's figures are the record's, the others' carry a `_p<value>` suffix.
import { resolve } from "node:path";
import { bundleDir, median, numArg, pythonReference, round, type Suite, type SuiteContext } from "../suite.ts";

/** Runs `deno run -A script ...args` with the engine flag; its output goes to the console. */
async function deno(script: string, args: string[], engine: string, env: Record<string, string> = {}) {
  const p = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, "--webgpu", engine, ...args],
    stdout: "inherit",
    stderr: "inherit",
    env,
  }).output();
  if (!p.success) throw new Error(`${script} exited with ${p.code}`);
}

type OurRun = {
  ran: string;
  pending: number | null;
  batch: number;
  partial: boolean;
  decodeTokensPerSecond: number;
  msPerStep: number;
  firstTokenSeconds: number;
  webgpuCallsPerStep: Record<string, { calls: number }>;
};
type PeerRun = {
  batch: number;
  decodeTokensPerSecond: number;
  msPerStep: number;
  firstTokenSeconds: number;
  minSeconds?: number;
  seconds: number;
};

async function run(ctx: SuiteContext) {
  await ctx.gpu(); // the record's device
  const b = bundleDir();
  const engine = Deno.env.get("RLVR_WEBGPU") ?? "dawn";
  const preset = ctx.args.get("preset") ?? "qwen2.5-0.5b";
  const batches = (ctx.args.get("batches") ?? "8,64").split(",").map(Number);
  const prompt = numArg(ctx.args, "prompt", 128),
    newTokens = numArg(ctx.args, "new", 128),
    reps = numArg(ctx.args, "reps", 2);
  const pendings = (ctx.args.get("pending") ?? "16").split(",").map(Number);
  const parts = new Set((ctx.args.get("parts") ?? "torch,ours,tjs").split(","));
  const decodeScript = b ? `${b}bin/a/b/decode.js` : "bench/suites/decode-ours.ts";
  const tjsScript = b ? `${b}bin/a/b/tjs-decode.js` : "bench/suites/decode-tjs.ts";
  const tjsModule = resolve(
    ctx.args.get("tjsModule") ?? (b ? `${b}tjs/transformers.js` : ".devwork/peers/tjs/transformers.js"),
  );
  const tjsOrt = resolve(
    ctx.args.get("tjsOrt") ?? (b ? `${b}tjs/ort` : ".devwork/tjs/node_modules/onnxruntime-web/dist"),
  );
  // Each process's own stop (s): later runs are skipped, the figures of those made are kept.
  // transformers' generate runs its first full generate slow (up to 3x on an H200): at least 3, the median taken.
  const torchReps = numArg(ctx.args, "torchReps", Math.max(3, reps));
  const budget = numArg(ctx.args, "budget", 240),
    tjsBudget = numArg(ctx.args, "tjsBudget", 120),
    tjsReps = numArg(ctx.args, "tjsReps", reps);
  const figures: Record<string, number> = {}, reference: Record<string, number> = {};
  const notes: string[] = [];
  const key = (B: number) => `b${B}`;
  /** A peer's figures by batch, as references (transformers, transformersjs). */
  const peerFigures = (peer: string, runs: PeerRun[]) => {
    for (const x of runs) {
      reference[`${peer}_tok_s_${key(x.batch)}`] = round(x.decodeTokensPerSecond);
      reference[`${peer}_ms_step_${key(x.batch)}`] = round(x.msPerStep, 2);
      reference[`${peer}_first_token_ms_${key(x.batch)}`] = round(x.firstTokenSeconds * 1000, 1);
    }
  };

  if (parts.has("torch") && ctx.reference) {
    const r = await pythonReference(ctx, "generate.py", [
      "--attn",
      "sdpa",
      "--batches",
      batches.join(","),
      "--new",
      String(newTokens),
      "--prompt",
      String(prompt),
      "--reps",
      String(torchReps),
    ], "generate.json") as { runs: PeerRun[]; errors: string[] };
    peerFigures("transformers", r.runs);
    if (r.errors.length) notes.push(`transformers: ${r.errors.join("; ")}`);
  }
  if (parts.has("ours")) {
    const out = `${ctx.out}/decode-ours.json`;
    await deno(decodeScript, [
      preset,
      "q4",
      batches.join(","),
      "1",
      String(prompt),
      String(newTokens),
      "0",
      out,
      String(budget),
      "sampler=captured",
      `pending=${pendings.join(",")}`,
      `reps=${reps}`,
    ], engine);
    const r = JSON.parse(await Deno.readTextFile(out)) as { runs: OurRun[] };
    for (const pd of pendings) {
      const suffix = pd === pendings[0] ? "" : `_p${pd}`;
      for (const B of batches) {
        const runs = r.runs.filter((x) => x.batch === B && (x.pending ?? pendings[0]) === pd && !x.partial);
        if (runs.length === 0) continue;
        figures[`tok_s_${key(B)}${suffix}`] = round(median(runs.map((x) => x.decodeTokensPerSecond)));
        figures[`tok_s_max_${key(B)}${suffix}`] = round(Math.max(...runs.map((x) => x.decodeTokensPerSecond)));
        figures[`ms_step_${key(B)}${suffix}`] = round(median(runs.map((x) => x.msPerStep)), 2);
        figures[`first_token_ms_${key(B)}${suffix}`] = round(median(runs.map((x) => x.firstTokenSeconds * 1000)), 1);
        figures[`submits_per_step_${key(B)}${suffix}`] = round(
          median(runs.map((x) => x.webgpuCallsPerStep["Queue.submit"]?.calls ?? 0)),
          1,
        );
      }
    }
    notes.push(
      `ours: captured sampler (${[...new Set(r.runs.map((x) => x.ran))].join(", ")}), pending ${
        pendings.join(" / ")
      } alternated, ${reps} runs each`,
    );
  }
  if (parts.has("tjs")) {
    const out = `${ctx.out}/decode-tjs.json`;
    try {
      await deno(tjsScript, [
        tjsModule,
        tjsOrt,
        `preset=${preset}`,
        `batches=${batches.join(",")}`,
        `promptLen=${prompt}`,
        `newTokens=${newTokens}`,
        `reps=${tjsReps}`,
        `out=${out}`,
        `budget=${tjsBudget}`,
      ], engine);
    } catch (e) {
      notes.push(`transformers.js: ${(e as Error).message}`);
    }
    try {
      const r = JSON.parse(await Deno.readTextFile(out)) as {
        runs: PeerRun[];
        errors: string[];
        transformersJs: string;
      };
      peerFigures("transformersjs", r.runs);
      notes.push(
        `transformers.js ${r.transformersJs} (its onnxruntime-web) on our q4 graph${
          r.errors.length ? `: ${r.errors.join("; ")}` : ""
        }`,
      );
    } catch { /* its error is in the notes */ }
  }
  for (const B of batches) {
    for (const peer of ["transformers", "transformersjs"]) {
      const ours = figures[`tok_s_${key(B)}`], theirs = reference[`${peer}_tok_s_${key(B)}`];
      if (ours && theirs) figures[`vs_${peer}_${key(B)}`] = round(ours / theirs, 3);
    }
  }
  notes.unshift(
    `${preset} q4, prompt ${prompt}, ${newTokens} new, batches ${
      batches.join(", ")
    }; no EOS (every row runs to length)`,
  );
  return { figures, reference, notes: notes.join("; "), runs: reps };
}

export const decode: Suite = {
  about: "q4 decoding at batch 8 and 64: ours (captured) beside transformers' generate and transformers.js v4",
  usage:
    "[parts=torch,ours,tjs] [batches=8,64] [prompt=128] [new=128] [reps=2] [pending=16,1024] [budget=240] [tjsBudget=120] [tjsReps=REPS] [torchReps=max(3,REPS)] [tjsModule=FILE] [tjsOrt=DIR]",
  run,
};
