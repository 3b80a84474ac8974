// The benchmark entry point: runs one named suite and appends its validated record to bench/results/records.jsonl.
// Usage (from the repository root): deno run -A bench/run.ts SUITE [key=value ...] [--webgpu dawn|deno|auto]
//   record=FILE   where the record goes (default bench/results/records.jsonl); record=0 prints it only
//   commit=HASH   the commit measured (default BENCH_COMMIT, else `git rev-parse --short HEAD`)
//   torch=0       skip the reference (PyTorch); a suite that needs one then writes no record
//   out=DIR       logs and the reference's JSON (default a temporary folder)
// `deno run -A bench/run.ts` lists the suites. On the GPU machine: bench/device.sh bundles this file.
import { args as benchArgs, webgpu } from "./engine.ts";
import { type Gpu, requestGpu } from "../src/gpu/device.ts";
import { appendRecords, type BenchRecord, validateRecord } from "./records.ts";
import { deviceName, type Suite, type SuiteContext, type SuiteResult } from "./suite.ts";
import { decode } from "./suites/decode.ts";
import { grpoStep } from "./suites/grpo-step.ts";
import { pretrain } from "./suites/pretrain.ts";
import { products } from "./suites/products.ts";
import { trainStep } from "./suites/train-step.ts";

/** The suites by name. */
export const SUITES: Record<string, Suite> = {
  "train-step": trainStep,
  "grpo-step": grpoStep,
  decode,
  pretrain,
  products,
};

async function gitCommit(): Promise<string> {
  try {
    const p = await new Deno.Command("git", { args: ["rev-parse", "--short", "HEAD"], stdout: "piped", stderr: "null" })
      .output();
    if (p.success) return new TextDecoder().decode(p.stdout).trim();
  } catch { /* no git here (the GPU machine's copy of the tree) */ }
  throw new Error("no commit: pass commit=HASH or BENCH_COMMIT (git is not available here)");
}

async function main(argv: readonly string[]) {
  const [name, ...rest] = argv;
  const suite = name ? SUITES[name] : undefined;
  if (!suite) {
    console.log("usage: deno run -A bench/run.ts SUITE [key=value ...]\nsuites:");
    for (const [n, s] of Object.entries(SUITES)) {
      console.log(`  ${n.padEnd(11)} ${s.about}\n  ${" ".repeat(11)} ${s.usage}`);
    }
    if (name) throw new Error(`unknown suite ${name}`);
    return;
  }
  const args = new Map<string, string>();
  for (const a of rest) {
    const at = a.indexOf("=");
    if (at < 1) throw new Error(`${a}: arguments are key=value`);
    args.set(a.slice(0, at), a.slice(at + 1));
  }
  const own = ["record", "commit", "torch", "out"];
  const suiteArgs = new Map([...args].filter(([k]) => !own.includes(k)));
  const commit = args.get("commit") ?? Deno.env.get("BENCH_COMMIT") ?? await gitCommit();
  let gpu: Promise<Gpu> | undefined;
  const ctx: SuiteContext = {
    args: suiteArgs,
    out: args.get("out") ?? await Deno.makeTempDir({ prefix: `bench-${name}-` }),
    gpu: () => (gpu ??= requestGpu()),
    reference: args.get("torch") !== "0",
  };
  await Deno.mkdir(ctx.out, { recursive: true });
  const date = new Date().toISOString();
  const results = await suite.run(ctx);
  const device = gpu ? deviceName((await gpu).info) : "cpu";
  // The Dawn settings a run had from the environment (bench/device.sh sets RLVR_DAWN_OPTIONS) are part of its command.
  const env = webgpu === "dawn"
    ? ["RLVR_DAWN_OPTIONS", "RLVR_DAWN_VALIDATION"].flatMap((k) => Deno.env.get(k) ? [`${k}='${Deno.env.get(k)}'`] : [])
    : [];
  const command = [...env, "deno run -A bench/run.ts", name, ...[...suiteArgs].map(([k, v]) => `${k}=${v}`)].join(" ");
  const records = ([] as SuiteResult[]).concat(results).map((r): Partial<BenchRecord> => ({
    suite: name,
    commit,
    date,
    device,
    engine: webgpu,
    command,
    ...r,
  }));
  const path = args.get("record") ?? "bench/results/records.jsonl";
  let failed = false;
  for (const r of records) {
    console.log(JSON.stringify(r));
    try {
      validateRecord(r);
    } catch (e) {
      console.log(`not recorded: ${(e as Error).message}`);
      failed = true;
    }
  }
  if (failed || path === "0") return failed && path !== "0" ? Deno.exit(1) : undefined;
  appendRecords(path, records);
  console.log(`appended ${records.length} record${records.length > 1 ? "s" : ""} to ${path}`);
}

await main(benchArgs);
