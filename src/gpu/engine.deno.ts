// Which WebGPU implementation a headless process runs on: Dawn (Chrome's engine, through the npm
// package `webgpu`, dawn.node) or Deno's own (wgpu). One place decides, before anything asks for a
// GPU: `--webgpu dawn|deno` on every `rlvr` command and bench, or RLVR_WEBGPU; by default Dawn where
// it finds an adapter, else Deno's own, with a one-line note saying which and why.

import { copySharedViewsOn } from "./shared-views.ts";

export const WEBGPU_ENGINES = ["dawn", "deno"] as const;
/** A WebGPU implementation a headless process can run on. */
export type WebGpuEngine = (typeof WEBGPU_ENGINES)[number];
/** What the user asked for: an engine, or the default choice. */
export type WebGpuRequest = WebGpuEngine | "auto";

/** The engine in use and why. */
export interface EngineChoice {
  engine: WebGpuEngine;
  /** One line for the log: which engine and why. */
  note: string;
  /** Where dawn.node was loaded from (Dawn only). */
  dawnModule?: string;
}

let chosen: EngineChoice | null = null;
let pending: Promise<EngineChoice> | null = null;

function isRequest(s: string): s is WebGpuRequest {
  return s === "auto" || (WEBGPU_ENGINES as readonly string[]).includes(s);
}

/** Parses a request ("dawn", "deno" or "auto"); anything else is an error naming the choices. */
export function parseWebGpuRequest(s: string, from: string): WebGpuRequest {
  const v = s.trim().toLowerCase();
  if (!isRequest(v)) throw new Error(`${from} must be dawn, deno or auto, got ${JSON.stringify(s)}`);
  return v;
}

/**
 * Removes `--webgpu X` / `--webgpu=X` / `webgpu=X` (benches' key=value style) from `argv` and
 * returns the request it names, else RLVR_WEBGPU's, else "auto".
 */
export function takeWebGpuFlag(argv: string[]): { request: WebGpuRequest; rest: string[] } {
  const rest: string[] = [];
  let request: WebGpuRequest | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--webgpu") {
      if (i + 1 >= argv.length) throw new Error("--webgpu needs a value: dawn, deno or auto");
      request = parseWebGpuRequest(argv[++i], "--webgpu");
    } else if (a.startsWith("--webgpu=")) request = parseWebGpuRequest(a.slice(9), "--webgpu");
    else if (a.startsWith("webgpu=")) request = parseWebGpuRequest(a.slice(7), "webgpu=");
    else rest.push(a);
  }
  if (request === null) {
    const env = Deno.env.get("RLVR_WEBGPU");
    request = env ? parseWebGpuRequest(env, "RLVR_WEBGPU") : "auto";
  }
  return { request, rest };
}

/** The engine chosen by selectWebGpu, or null before. */
export function currentEngine(): EngineChoice | null {
  return chosen;
}

interface DawnModule {
  create(options: string[]): GPU;
  globals: Record<string, unknown>;
}

/** Candidate locations of the `webgpu` package's index.js: RLVR_DAWN_DIR, then node_modules beside the sources. */
function dawnCandidates(): string[] {
  const out: string[] = [];
  const dir = Deno.env.get("RLVR_DAWN_DIR");
  if (dir) out.push(new URL(`file://${dir.replace(/\/$/, "")}/index.js`).href);
  // Through a variable so a bundler leaves this path (and dawn.node's require) alone.
  const rel = "../../node_modules/webgpu/index.js";
  out.push(new URL(rel, import.meta.url).href);
  return out;
}

async function loadDawn(): Promise<{ mod: DawnModule; href: string } | { error: string }> {
  const errors: string[] = [];
  for (const href of dawnCandidates()) {
    try {
      const mod = (await import(href)) as DawnModule;
      if (typeof mod.create === "function") return { mod, href };
      errors.push(`${href}: no create()`);
    } catch (e) {
      errors.push(`${href}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`);
    }
  }
  return { error: `the npm package "webgpu" (dawn.node) did not load (${errors.join("; ")})` };
}

function vkDriver(): string {
  const f = Deno.env.get("VK_DRIVER_FILES") ?? Deno.env.get("VK_ICD_FILENAMES");
  return f ? ` (VK_DRIVER_FILES=${f})` : "";
}

async function tryDawn(): Promise<{ choice: EngineChoice } | { why: string }> {
  const loaded = await loadDawn();
  if ("error" in loaded) return { why: loaded.error };
  // Vulkan on Linux (the GPU machine, SwiftShader in CI); elsewhere Dawn picks the platform's backend.
  // RLVR_DAWN_OPTIONS adds dawn.node options, ';'-separated (benchmarks:
  // "disable-dawn-features=timestamp_quantization" for unrounded timestamp queries).
  const extra = (Deno.env.get("RLVR_DAWN_OPTIONS") ?? "").split(";").map((o) => o.trim()).filter(Boolean);
  const gpu = loaded.mod.create([...(Deno.build.os === "linux" ? ["backend=vulkan"] : []), ...extra]);
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" }).catch(() => null);
  if (!adapter) return { why: `Dawn found no Vulkan adapter${vkDriver()}: it does not start on Mesa's lavapipe; on a CPU machine use SwiftShader's driver, VK_DRIVER_FILES=/usr/lib/chromium/vk_swiftshader_icd.json` };
  // Dawn's GPU* classes and constants replace Deno's, so instanceof checks and GPUBufferUsage agree
  // with the objects navigator.gpu hands out.
  Object.assign(globalThis, loaded.mod.globals);
  Object.defineProperty(navigator, "gpu", { value: gpu, configurable: true, enumerable: true, writable: false });
  const queueProto = (loaded.mod.globals.GPUQueue as { prototype?: object } | undefined)?.prototype;
  if (!queueProto) throw new Error("dawn.node exports no GPUQueue: cannot guard writeBuffer against shared memory");
  copySharedViewsOn(queueProto);
  const info = adapter.info;
  const name = [info.vendor, info.architecture, info.description].filter(Boolean).join(" ");
  // Polling through setTimeout(0) from the first turn on every adapter: on the H200 the spin stalled
  // every other 0.5B GRPO step by 3-6 s and left batch-64 decoding at 90 ms a step instead of 22
  // (docs/webgpu.md, "Polling").
  const spin = throttleDawnPolling(0);
  const polling = spin === Infinity ? "" : spin === 0 ? "; Dawn's event polling through setTimeout(0)" : `; Dawn's event polling throttled after ${spin} ms of a wait`;
  return { choice: { engine: "dawn", note: `webgpu: dawn (Chrome's engine, dawn.node) on ${name || "an adapter"}${polling}`, dawnModule: loaded.href } };
}

/**
 * dawn.node waits on the GPU by calling `setImmediate` from the JS global in a loop (each turn
 * polls Dawn's events and queues the next) while any promise of it is pending. Under Deno that loop
 * runs hundreds of thousands of times a second (262k calls in 12 s of a 2-core test) and takes a
 * core; on a CPU adapter that core is the GPU's: a 0.35 s SwiftShader dispatch then took 0.4-1.9 s
 * instead (Node's setImmediate, 0.35-0.45 s). On the H200 the spin was worse than a lost core: with
 * it, one of every two 0.5B GRPO steps took 3-6 s longer (waits that ended seconds after the GPU
 * had finished) and captured decoding at batch 64 waited 77 ms a step. After `spinMs` of one
 * continuous wait the next turns go through setTimeout(0); 0 (the default on every adapter) means
 * always. RLVR_DAWN_SPIN_MS overrides (Infinity: the plain spin). Returns the value in use.
 */
function throttleDawnPolling(spinMs: number): number {
  const env = Deno.env.get("RLVR_DAWN_SPIN_MS");
  const spin = env !== undefined && env !== "" && !Number.isNaN(Number(env)) && Number(env) >= 0 ? Number(env) : spinMs;
  if (spin === Infinity) return spin;
  const g = globalThis as unknown as { setImmediate?: (f: (...a: unknown[]) => void, ...a: unknown[]) => unknown };
  const real = g.setImmediate;
  if (typeof real !== "function") return Infinity;
  let streakStart = 0, last = -Infinity;
  g.setImmediate = (f: (...a: unknown[]) => void, ...args: unknown[]) => {
    const now = performance.now();
    // A gap means the previous wait ended: a new streak of polls starts.
    if (now - last > 5) streakStart = now;
    last = now;
    return now - streakStart < spin ? real(f, ...args) : setTimeout(f, 0, ...args);
  };
  return spin;
}

/**
 * Installs the requested engine as navigator.gpu, once per process (later calls return the first
 * choice; asking for another engine afterwards is an error). "auto": Dawn where it finds an
 * adapter, else Deno's own, and the note says why.
 */
export function selectWebGpu(request: WebGpuRequest = "auto"): Promise<EngineChoice> {
  if (pending) {
    return pending.then((c) => {
      if (request !== "auto" && c.engine !== request) throw new Error(`webgpu engine already chosen: ${c.engine}, cannot switch to ${request} in the same process`);
      return c;
    });
  }
  pending = (async () => {
    if (request === "deno") {
      return { engine: "deno", note: "webgpu: deno (Deno's own WebGPU, wgpu), as asked" } as EngineChoice;
    }
    const dawn = await tryDawn();
    if ("choice" in dawn) return dawn.choice;
    if (request === "dawn") throw new Error(`--webgpu dawn: ${dawn.why}`);
    return { engine: "deno", note: `webgpu: deno (Deno's own WebGPU, wgpu), because ${dawn.why}` } as EngineChoice;
  })();
  return pending.then((c) => (chosen = c));
}

/** Reads the request from `argv` (removing the flag) and the environment, selects, prints the note to stderr. */
export async function selectWebGpuFromArgs(argv: string[], quiet = false): Promise<{ choice: EngineChoice; rest: string[] }> {
  const { request, rest } = takeWebGpuFlag(argv);
  const choice = await selectWebGpu(request);
  if (!quiet) console.error(choice.note);
  return { choice, rest };
}
