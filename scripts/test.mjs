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
const perKind = [];

/**
 * Runs one kind's test files in one Deno process; its output is printed as one block when it ends. A process that
 * printed a passing summary and then died (lavapipe's process crashed in teardown, after every test had passed, in
 * 1 of 3 runs of the gpu kind on 2026-12-02: glibc's "corrupted size vs. prev_size in fastbins"; again on 2026-12-04,
 * "double free or corruption (fasttop)") counts with its summary: Deno prints that line after the last test has
 * finished, so the results are whole; the crash is printed and named in the kind's line. (It used to run the kind once
 * more: 11 more minutes for the gpu kind, which took the suite past 30.)
 */
function runDenoTests(kind, list, extraEnv, extraArgs = []) {
  if (!list.length) {
    console.log(`\n== ${kind}: no test files`);
    return Promise.resolve();
  }
  console.log(`\n== ${kind} tests (${list.length} files) started`);
  const started = Date.now();
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
      const text = Buffer.concat(out).toString();
      console.log(`\n== ${kind} tests (${list.length} files): output`);
      process.stdout.write(text);
      process.stderr.write(Buffer.concat(err));
      const m = text.match(
        /(ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed(?: \(\d+ steps?\))?(?: \| (\d+) ignored)?/,
      );
      const diedAfter = !!m && m[1] === "ok" && Number(m[3]) === 0 && status !== 0;
      if (diedAfter) {
        console.log(
          `\n== ${kind}: every test passed, then the Deno process died in teardown (exit ${status}${
            signal ? `, ${signal}` : ""
          }); its summary counts`,
        );
      }
      if (!m) {
        totals.failed++;
        failedKinds.push(`${kind} (no summary; exit ${status})`);
        return resolve();
      }
      totals.passed += Number(m[2]);
      totals.failed += Number(m[3]);
      totals.ignored += Number(m[4] ?? 0);
      perKind.push(
        `${kind}: ${m[2]} passed, ${m[3]} failed, ${m[4] ?? 0} skipped in ${
          ((Date.now() - started) / 60000).toFixed(1)
        } min${diedAfter ? " (the process died in teardown after its summary)" : ""}`,
      );
      if (status !== 0 && !diedAfter) failedKinds.push(kind);
      resolve();
    });
  });
}

ensureSystem();
if (!existsSync(deno)) fail(`Deno is missing at ${deno}: run npm ci first`);

if (wanted.includes("typecheck")) {
  console.log("\n== type check (tsc --noEmit)");
  const r = spawnSync(process.execPath, [
    join(root, "node_modules", "typescript", "bin", "tsc"),
    "--noEmit",
    "-p",
    root,
  ], { stdio: "inherit", cwd: root });
  if (r.status !== 0) {
    totals.failed++;
    failedKinds.push("typecheck");
  } else {
    totals.passed++;
    console.log("type check ok");
  }
  // The formatter's check (deno.json "fmt": line width 120) runs with the type check.
  console.log("\n== format check (deno fmt --check)");
  const f = spawnSync(process.execPath, [join(root, "scripts", "check-format.mjs")], { stdio: "inherit", cwd: root });
  if (f.status !== 0) {
    totals.failed++;
    failedKinds.push("format");
  } else {
    totals.passed++;
  }
}
if (wanted.includes("unit")) await runDenoTests("unit", files.unit, {});
// The two GPU kinds run side by side (RLVR_TEST_SERIAL=1: one after the other): much of a software
// GPU's test time is one thread compiling shaders or ORT's wasm, so two processes share the two
// cores of the CI machine better than one.
const gpuKinds = [];
if (wanted.includes("gpu")) {
  // Pin Mesa's lavapipe so results do not depend on whichever Vulkan driver the machine has.
  const env = existsSync(LAVAPIPE_ICD) && !process.env.RLVR_ANY_GPU
    ? { VK_DRIVER_FILES: LAVAPIPE_ICD, VK_ICD_FILENAMES: LAVAPIPE_ICD }
    : {};
  gpuKinds.push(() => runDenoTests("gpu", files.gpu, { ...env, RLVR_WEBGPU: "deno" }, ["--preload", PRELOAD]));
}
if (wanted.includes("dawn")) {
  if (!existsSync(SWIFTSHADER_ICD)) fail(`${SWIFTSHADER_ICD} is missing (Debian's chromium package ships it)`);
  gpuKinds.push(() =>
    runDenoTests("dawn", files.dawn, {
      VK_DRIVER_FILES: SWIFTSHADER_ICD,
      VK_ICD_FILENAMES: SWIFTSHADER_ICD,
      RLVR_WEBGPU: "dawn",
      RLVR_DAWN_OPTIONS: dawnTestOptions(process.env.RLVR_DAWN_OPTIONS),
    }, ["--preload", PRELOAD])
  );
}
if (process.env.RLVR_TEST_SERIAL) { for (const k of gpuKinds) await k(); }
else await Promise.all(gpuKinds.map((k) => k()));
if (wanted.includes("browser")) {
  if (files.browser.length) {
    console.log("\n== building the app for browser tests (vite build)");
    const r = spawnSync(process.execPath, [
      join(root, "node_modules", "vite", "bin", "vite.js"),
      "build",
      "--logLevel",
      "warn",
    ], { stdio: "inherit", cwd: root });
    if (r.status !== 0) fail("vite build failed");
  }
  await runDenoTests("browser", files.browser, { CHROME_PATH: process.env.CHROME_PATH || "/usr/bin/chromium" });
}

console.log(`\nsummary: ${failedKinds.length ? "failed in " + failedKinds.join(", ") : "all kinds passed"}`);
for (const line of perKind) console.log(`  ${line}`);
console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.ignored} skipped`);
process.exit(totals.failed > 0 || failedKinds.length ? 1 : 0);
