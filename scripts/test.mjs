#!/usr/bin/env node
// `npm test`: type check, then four kinds of tests, each under Deno from node_modules:
//   unit    — pure TypeScript (`*.test.ts` that are neither GPU nor browser tests)
//   gpu     — `*.gpu.test.ts` on Deno's own WebGPU (wgpu) over Mesa's lavapipe (CPU Vulkan, has shader-f16)
//   dawn    — the GPU tests where the engines differ (DAWN below) on Dawn, Chrome's engine (npm
//             `webgpu`), over SwiftShader's Vulkan driver from Debian's chromium (subgroups, no shader-f16)
//   browser — `tests/browser/*.test.ts`, Playwright driving the system Chromium (SwiftShader WebGPU)
// Missing system packages (chromium, mesa-vulkan-drivers) are installed with apt-get when this
// runs as root on Debian; otherwise it stops and says what to install.
// Usage: npm test [-- unit|gpu|dawn|browser ...] [-- --filter NAME]
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const filterAt = args.indexOf("--filter");
const filter = filterAt >= 0 ? args[filterAt + 1] : undefined;
const kinds = args.filter((a, i) => !a.startsWith("--") && (filterAt < 0 || i !== filterAt + 1));
const wanted = kinds.length ? kinds : ["typecheck", "unit", "gpu", "dawn", "browser"];
const deno = join(root, "node_modules", "deno", process.platform === "win32" ? "deno.exe" : "deno");
const LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
// Debian's chromium ships SwiftShader's Vulkan driver: Dawn starts on it (not on lavapipe).
const SWIFTSHADER_ICD = "/usr/lib/chromium/vk_swiftshader_icd.json";
const PRELOAD = join("src", "gpu", "engine.preload.ts");

// GPU tests that also run on Dawn: where the engines differ. Every WGSL kernel (Tint compiles it,
// not naga; SwiftShader's builtins are less precise: the RoPE fix), the trainer's whole-model
// forward and LoRA gradients, the ORT policy without shader-f16 and with subgroups (the GQA
// check), the sampler on a shared device, the engine switch through the CLI, and dawn.node's
// shared-memory guard. The rest (recipe stages, pretraining, CLI round trips, the buffer census)
// is engine-independent logic over those parts and runs on lavapipe only: on SwiftShader it
// would take another ~15 minutes of the 2-core CI machine.
const DAWN = [
  /^src\/gpu\/kernels\//,
  /^src\/gpu\/model\//,
  /^src\/gpu\/trainer\/(logprobs|grad)\.gpu\.test\.ts$/,
  /^src\/gpu\/shared-views\.gpu\.test\.ts$/,
  /^src\/model\//,
  /^src\/cli\/commands\/webgpu-cli\.gpu\.test\.ts$/,
];
// Of those, the ones that stay on lavapipe, and why.
const LAVAPIPE_ONLY = new Map([
  [
    "src/model/prefill-runs.gpu.test.ts",
    "the policy's row runs under a forced binding limit: engine-independent, 3 min on SwiftShader",
  ],
  [
    "src/model/policy.gpu.test.ts",
    "the ORT policy's graphs with f16 (lavapipe has shader-f16; Dawn's no-f16 graphs are no-f16.gpu.test.ts): 96 s on SwiftShader",
  ],
  [
    "src/model/sampler.gpu.test.ts",
    "the CPU sampler over the ORT policy, engine-independent (the GPU token choice and captured decoding, sampler-gpu.gpu.test.ts, run on Dawn): 50 s on SwiftShader",
  ],
]);

// Dawn zero-initializes workgroup memory (WGSL requires it) through VK_KHR_zero_initialize_workgroup_memory
// where the Vulkan driver has it: OpConstantNull initializers, which SwiftShader compiles into one
// store per element, so a pipeline's compile time grows with its workgroup arrays (the attention
// kernels at D 64-128: 8-10 s for the three pipelines of one head dim, 52 s of the kernel test's
// 55 s). With the toggle off Dawn zeroes the memory in the shader itself (Tint's
// ZeroInitWorkgroupMemory, as on drivers without the extension): the same WGSL semantics, and the
// attention test compiles in 3 s. The browser kind (Chromium's own Dawn on SwiftShader) turns off
// the same toggle through Chromium's --disable-dawn-features (CHROMIUM_TEST_DAWN_TOGGLES in
// tests/browser/harness.ts, so that one file run by hand gets it too).
const DAWN_TEST_TOGGLES = ["use_vulkan_zero_initialize_workgroup_memory_extension"];

/** RLVR_DAWN_OPTIONS for the dawn kind: the caller's options with DAWN_TEST_TOGGLES added to disable-dawn-features. */
function dawnTestOptions(given = "") {
  const opts = given.split(";").map((o) => o.trim()).filter(Boolean);
  const at = opts.findIndex((o) => o.startsWith("disable-dawn-features="));
  if (at < 0) return [...opts, `disable-dawn-features=${DAWN_TEST_TOGGLES.join(",")}`].join(";");
  const have = opts[at].slice("disable-dawn-features=".length).split(",").filter(Boolean);
  opts[at] = `disable-dawn-features=${[...new Set([...have, ...DAWN_TEST_TOGGLES])].join(",")}`;
  return opts.join(";");
}

function fail(msg) {
  console.error(`\nnpm test: ${msg}`);
  process.exit(1);
}

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith(".test.ts")) out.push(relative(root, p));
  }
  return out;
}

const all = ["src", "workers", "tests", "bench"].filter((d) => existsSync(join(root, d))).flatMap((d) =>
  walk(join(root, d))
);
const files = {
  unit: all.filter((f) => !f.endsWith(".gpu.test.ts") && !f.startsWith("tests/browser/")),
  gpu: all.filter((f) => f.endsWith(".gpu.test.ts")),
  dawn: all.filter((f) => f.endsWith(".gpu.test.ts") && DAWN.some((r) => r.test(f)) && !LAVAPIPE_ONLY.has(f)),
  browser: all.filter((f) => f.startsWith("tests/browser/")),
};

function isDebianRoot() {
  return process.getuid?.() === 0 && existsSync("/etc/debian_version") && existsSync("/usr/bin/apt-get");
}

function aptInstall(pkgs, why) {
  if (!isDebianRoot()) {
    fail(
      `${why}. Install it and run again: sudo apt-get install ${pkgs.join(" ")}` +
        (pkgs.includes("chromium") ? " (or set CHROME_PATH to a Chromium/Chrome binary with WebGPU)" : ""),
    );
  }
  console.log(`npm test: ${why}; installing ${pkgs.join(", ")} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  let r = spawnSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
  if (r.status === 0) r = spawnSync("apt-get", ["install", "-y", "-qq", ...pkgs], { stdio: "inherit", env });
  if (r.status !== 0) fail(`apt-get install ${pkgs.join(" ")} failed`);
}

function ensureSystem() {
  const need = [];
  if (wanted.includes("gpu") && files.gpu.length && !existsSync(LAVAPIPE_ICD)) need.push("mesa-vulkan-drivers");
  const chrome = process.env.CHROME_PATH || "/usr/bin/chromium";
  if (wanted.includes("dawn") && files.dawn.length && !existsSync(SWIFTSHADER_ICD) && !need.includes("chromium")) {
    need.push("chromium");
  }
  if (wanted.includes("browser") && files.browser.length && !existsSync(chrome) && !need.includes("chromium")) {
    if (process.env.CHROME_PATH) fail(`CHROME_PATH=${chrome} does not exist`);
    need.push("chromium");
  }
  if (need.length) aptInstall(need, `missing ${need.join(" and ")}`);
}

const totals = { passed: 0, failed: 0, ignored: 0 };
const failedKinds = [];
/** Per kind: its counts, when its first process started and its last ended, and notes for its summary line. */
const byKind = new Map();

function kindRecord(kind) {
  let r = byKind.get(kind);
  if (!r) {
    byKind.set(kind, r = { passed: 0, failed: 0, ignored: 0, processes: 0, started: Infinity, ended: 0, notes: [] });
  }
  return r;
}

/**
 * Runs test files of one kind in one Deno process; its output is printed as one block when it ends. A process that
 * printed a passing summary and then died (lavapipe's process crashed in teardown, after every test had passed, in
 * 1 of 3 runs of the gpu kind on 2026-12-02: glibc's "corrupted size vs. prev_size in fastbins"; again on 2026-12-04,
 * "double free or corruption (fasttop)") counts with its summary: Deno prints that line after the last test has
 * finished, so the results are whole; the crash is printed and named in the kind's line. (It used to run the kind once
 * more: 11 more minutes for the gpu kind, which took the suite past 30.)
 */
function runDenoTests(kind, list, extraEnv, extraArgs = []) {
  const what = list.length === 1 ? list[0] : `${list.length} files`;
  if (!list.length) {
    console.log(`\n== ${kind}: no test files`);
    return Promise.resolve();
  }
  console.log(`\n== ${kind} tests (${what}) started`);
  const rec = kindRecord(kind);
  const started = Date.now();
  rec.started = Math.min(rec.started, started);
  rec.processes++;
  const denoArgs = ["test", "-A", "--no-check", ...extraArgs, ...(filter ? ["--filter", filter] : []), ...list];
  return new Promise((resolve) => {
    const child = spawn(deno, denoArgs, {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR || "/tmp",
        NO_COLOR: "1",
        DENO_NO_UPDATE_CHECK: "1",
        ...extraEnv,
      },
    });
    const out = [], err = [];
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", (d) => err.push(d));
    child.on("close", (status, signal) => {
      rec.ended = Math.max(rec.ended, Date.now());
      const text = Buffer.concat(out).toString();
      console.log(`\n== ${kind} tests (${what}): output, ${((Date.now() - started) / 60000).toFixed(1)} min`);
      process.stdout.write(text);
      process.stderr.write(Buffer.concat(err));
      const m = text.match(
        /(ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed(?: \(\d+ steps?\))?(?: \| (\d+) ignored)?/,
      );
      const diedAfter = !!m && m[1] === "ok" && Number(m[3]) === 0 && status !== 0;
      if (diedAfter) {
        console.log(
          `\n== ${kind} (${what}): every test passed, then the Deno process died in teardown (exit ${status}${
            signal ? `, ${signal}` : ""
          }); its summary counts`,
        );
        rec.notes.push(`${what}: the process died in teardown after its summary`);
      }
      if (!m) {
        totals.failed++;
        rec.failed++;
        rec.notes.push(`${what}: no summary; exit ${status}`);
        failedKinds.push(`${kind} (${what}: no summary; exit ${status})`);
        return resolve();
      }
      for (const [key, v] of [["passed", m[2]], ["failed", m[3]], ["ignored", m[4] ?? 0]]) {
        totals[key] += Number(v);
        rec[key] += Number(v);
      }
      if (status !== 0 && !diedAfter) failedKinds.push(`${kind} (${what})`);
      resolve();
    });
  });
}

/** Runs Node with `args` (a script and its arguments); resolves with its exit status. Its output goes straight through. */
function runNode(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: "inherit", cwd: root });
    child.on("close", (status) => resolve(status ?? 1));
  });
}

async function typecheck() {
  console.log("\n== type check (tsc --noEmit) started");
  const started = Date.now();
  if (await runNode([join(root, "node_modules", "typescript", "bin", "tsc"), "--noEmit", "-p", root]) !== 0) {
    totals.failed++;
    failedKinds.push("typecheck");
  } else {
    totals.passed++;
    console.log(`type check ok (${((Date.now() - started) / 60000).toFixed(1)} min)`);
  }
  // The formatter's check (deno.json "fmt": line width 120) runs with the type check.
  console.log("\n== format check (deno fmt --check)");
  if (await runNode([join(root, "scripts", "check-format.mjs")]) !== 0) {
    totals.failed++;
    failedKinds.push("format");
  } else {
    totals.passed++;
  }
}

ensureSystem();
if (!existsSync(deno)) fail(`Deno is missing at ${deno}: run npm ci first`);

// Pin Mesa's lavapipe so results do not depend on whichever Vulkan driver the machine has.
const lavapipeEnv = existsSync(LAVAPIPE_ICD) && !process.env.RLVR_ANY_GPU
  ? { VK_DRIVER_FILES: LAVAPIPE_ICD, VK_ICD_FILENAMES: LAVAPIPE_ICD }
  : {};
const gpuJob = (list) => () =>
  runDenoTests("gpu", list, { ...lavapipeEnv, RLVR_WEBGPU: "deno" }, ["--preload", PRELOAD]);
// The gpu kind runs as two processes: the end-to-end runs (recipe stages and CLI round trips, each loading a model and
// compiling its shaders, often in a child process) and the engine's own tests (kernels, trainer, ORT policy).
const RUNS = /^src\/(runtime|cli)\//;
const dawnJob = () => {
  if (!existsSync(SWIFTSHADER_ICD)) fail(`${SWIFTSHADER_ICD} is missing (Debian's chromium package ships it)`);
  return runDenoTests("dawn", files.dawn, {
    VK_DRIVER_FILES: SWIFTSHADER_ICD,
    VK_ICD_FILENAMES: SWIFTSHADER_ICD,
    RLVR_WEBGPU: "dawn",
    RLVR_DAWN_OPTIONS: dawnTestOptions(process.env.RLVR_DAWN_OPTIONS),
  }, ["--preload", PRELOAD]);
};

// Browser test files that run longest start first (an ordering hint only: a file missing here runs after
// them, in name order), so that the last files to start are short ones and the lanes end close together.
const BROWSER_LONG_FIRST = [
  "demo-flow",
  "demo-model",
  "run-upload",
  "ask",
  "run-plan",
  "prm",
  "run",
  "q4-page",
  "run-viewer",
];
const longRank = (f) => {
  const i = BROWSER_LONG_FIRST.indexOf(f.replace(/^tests\/browser\/|\.test\.ts$/g, ""));
  return i < 0 ? BROWSER_LONG_FIRST.length : i;
};
const browserFiles = wanted.includes("browser")
  ? [...files.browser].sort((a, b) => longRank(a) - longRank(b) || a.localeCompare(b))
  : [];
if (browserFiles.length) {
  console.log("\n== building the app for browser tests (vite build)");
  const r = spawnSync(process.execPath, [
    join(root, "node_modules", "vite", "bin", "vite.js"),
    "build",
    "--logLevel",
    "warn",
  ], { stdio: "inherit", cwd: root });
  if (r.status !== 0) fail("vite build failed");
}
const browserEnv = { CHROME_PATH: process.env.CHROME_PATH || "/usr/bin/chromium" };

// Lanes: each runs one process at a time, taking the next job from one queue: the gpu kind's end-to-end runs, the type
// check, the dawn kind, the unit kind, the gpu kind's engine tests, then the browser test files one process each,
// longest first. Much of every kind's time on a software GPU is one thread working while the others wait (shader or
// wasm compilation, a page's main thread, Deno's wgpu sleeping 10 ms on every buffer mapping), so two processes share
// the CI machine's two cores better than one. RLVR_TEST_LANES=n sets the number of lanes; RLVR_TEST_SERIAL=1 runs
// everything in one lane, in the order typecheck, unit, gpu, dawn, browser.
const laneCount = process.env.RLVR_TEST_SERIAL ? 1 : Math.max(1, Number(process.env.RLVR_TEST_LANES) || 2);
const has = (k) => wanted.includes(k);
const gpuRuns = has("gpu") ? files.gpu.filter((f) => RUNS.test(f)) : [];
const gpuEngine = has("gpu") ? files.gpu.filter((f) => !RUNS.test(f)) : [];
const browserJobs = browserFiles.map((f) => () => runDenoTests("browser", [f], browserEnv));
const queue = (laneCount === 1
  ? [
    has("typecheck") && typecheck,
    has("unit") && (() => runDenoTests("unit", files.unit, {})),
    has("gpu") && gpuJob(files.gpu),
    has("dawn") && dawnJob,
  ]
  : [
    gpuRuns.length && gpuJob(gpuRuns),
    has("typecheck") && typecheck,
    has("dawn") && dawnJob,
    has("unit") && (() => runDenoTests("unit", files.unit, {})),
    gpuEngine.length && gpuJob(gpuEngine),
  ]).filter(Boolean).concat(browserJobs);
const suiteStarted = Date.now();
await Promise.all(Array.from({ length: laneCount }, async () => {
  for (let job = queue.shift(); job; job = queue.shift()) await job();
}));

console.log(`\nsummary: ${failedKinds.length ? "failed in " + failedKinds.join(", ") : "all kinds passed"}`);
for (const [kind, r] of byKind) {
  console.log(
    `  ${kind}: ${r.passed} passed, ${r.failed} failed, ${r.ignored} skipped in ${
      ((r.ended - r.started) / 60000).toFixed(1)
    } min${r.processes > 1 ? ` (${r.processes} processes, in lanes beside other kinds)` : ""}${
      r.notes.length ? ` (${r.notes.join("; ")})` : ""
    }`,
  );
}
console.log(`  all: ${((Date.now() - suiteStarted) / 60000).toFixed(1)} min in ${laneCount} lane(s)`);
console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.ignored} skipped`);
process.exit(totals.failed > 0 || failedKinds.length ? 1 : 0);
