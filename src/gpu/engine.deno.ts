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

/** RLVR_DAWN_VALIDATION: whether Dawn validates every WebGPU call (on), not (off), or auto (off on a GPU, on on a CPU adapter). */
export type DawnValidation = "on" | "off" | "auto";

export function parseDawnValidation(v: string | undefined): DawnValidation {
  const s = (v ?? "").trim().toLowerCase();
  if (s === "") return "auto";
  if (s === "on" || s === "off" || s === "auto") return s;
  throw new Error(`RLVR_DAWN_VALIDATION must be on, off or auto, got ${JSON.stringify(v)}`);
}

/** dawn.node options with Dawn's `skip_validation` toggle added to `enable-dawn-features` (merged into one given there). */
export function withSkipValidation(options: readonly string[]): string[] {
  const key = "enable-dawn-features=";
  const at = options.findIndex((o) => o.startsWith(key));
  if (at < 0) return [...options, `${key}skip_validation`];
  const have = options[at].slice(key.length).split(",").filter(Boolean);
  const out = [...options];
  out[at] = key + [...new Set([...have, "skip_validation"])].join(",");
  return out;
}

async function tryDawn(): Promise<{ choice: EngineChoice } | { why: string }> {
  const loaded = await loadDawn();
  if ("error" in loaded) return { why: loaded.error };
  // Vulkan on Linux (the GPU machine, SwiftShader in CI); elsewhere Dawn picks the platform's backend.
  // RLVR_DAWN_OPTIONS adds dawn.node options, ';'-separated (benchmarks:
  // "disable-dawn-features=timestamp_quantization" for unrounded timestamp queries).
  const extra = (Deno.env.get("RLVR_DAWN_OPTIONS") ?? "").split(";").map((o) => o.trim()).filter(Boolean);
  const options = [...(Deno.build.os === "linux" ? ["backend=vulkan"] : []), ...extra];
  // Validation: checking every call is most of a captured decoding step's host time on a GPU (docs/performance.md), so
  // a GPU adapter runs without it; a CPU adapter (SwiftShader: the tests) keeps it, so that a misuse throws there.
  const validation = parseDawnValidation(Deno.env.get("RLVR_DAWN_VALIDATION"));
  let gpu = loaded.mod.create(validation === "off" ? withSkipValidation(options) : options);
  let adapter = await gpu.requestAdapter({ powerPreference: "high-performance" }).catch(() => null);
  if (!adapter) {
    return {
      why:
        `Dawn found no Vulkan adapter${vkDriver()}: it does not start on Mesa's lavapipe; on a CPU machine use SwiftShader's driver, VK_DRIVER_FILES=/usr/lib/chromium/vk_swiftshader_icd.json`,
    };
  }
  const info = adapter.info;
  const name = [info.vendor, info.architecture, info.description].filter(Boolean).join(" ");
  // On a GPU, the first millisecond of a wait through MessageChannel turns; on a CPU adapter setTimeout(0) from the
  // first turn, since any spin takes the core the "GPU" computes on (docs/webgpu.md, "Polling").
  const cpuAdapter = /swiftshader|llvmpipe|lavapipe/i.test(name);
  let validating = validation !== "off";
  if (validation === "auto" && !cpuAdapter) {
    // Toggles are the instance's: a second one without validation, the first left to the collector.
    const fast = loaded.mod.create(withSkipValidation(options));
    const a = await fast.requestAdapter({ powerPreference: "high-performance" }).catch(() => null);
    if (a) (gpu = fast, adapter = a, validating = false);
  }
  // Dawn's GPU* classes and constants replace Deno's, so instanceof checks and GPUBufferUsage agree
  // with the objects navigator.gpu hands out.
  Object.assign(globalThis, loaded.mod.globals);
  Object.defineProperty(navigator, "gpu", { value: gpu, configurable: true, enumerable: true, writable: false });
  const queueProto = (loaded.mod.globals.GPUQueue as { prototype?: object } | undefined)?.prototype;
  if (!queueProto) throw new Error("dawn.node exports no GPUQueue: cannot guard writeBuffer against shared memory");
  copySharedViewsOn(queueProto);
  const polling = throttleDawnPolling(cpuAdapter ? 0 : 1);
  const checks = validating ? "validation on" : "validation off (RLVR_DAWN_VALIDATION=on keeps it)";
  return {
    choice: {
      engine: "dawn",
      note: `webgpu: dawn (Chrome's engine, dawn.node) on ${name || "an adapter"}; ${checks}; ${polling}`,
    },
  };
}

/**
 * Turns through MessageChannel messages: `schedule(f, args)` runs f(...args) in a later task, after
 * microtasks and other ready tasks, without the timer clamping of setTimeout. The channel exists only
 * while turns are queued (an open port keeps Deno's event loop alive, and `unref` does not release it
 * in Deno 2.9), so it is closed when a batch of turns queues no next one.
 */
export function channelScheduler(): (f: (...a: unknown[]) => void, args: unknown[]) => void {
  let ch: MessageChannel | null = null;
  let queue: [(...a: unknown[]) => void, unknown[]][] = [];
  const run = () => {
    const batch = queue;
    queue = [];
    try {
      for (const [f, a] of batch) f(...a);
    } finally {
      if (queue.length === 0 && ch) {
        ch.port1.close();
        ch = null;
      }
    }
  };
  return (f, args) => {
    queue.push([f, args]);
    if (!ch) {
      ch = new MessageChannel();
      ch.port1.onmessage = run;
    }
    if (queue.length === 1) ch.port2.postMessage(0);
  };
}

/**
 * dawn.node waits on the GPU by calling `setImmediate` from the JS global in a loop (each turn polls Dawn's events and
 * queues the next), which under Deno takes a core (docs/webgpu.md, "Polling"). This sends the turns of the first
 * `channelMs` of one continuous wait through MessageChannel messages (no timer clamping) and the later ones through
 * setTimeout(0), which leaves the process's other work its turn. Returns the engine note's words for it.
 */
function throttleDawnPolling(channelMs: number): string {
  const g = globalThis as unknown as { setImmediate?: (f: (...a: unknown[]) => void, ...a: unknown[]) => unknown };
  if (typeof g.setImmediate !== "function") return "Dawn's event polling by its own setImmediate loop";
  const fast = channelScheduler();
  // A streak is one continuous wait: it starts at a turn queued when none was pending and ends at a
  // turn that queues no next one (the wait is over), or after a gap of 5 ms.
  let streakStart = -Infinity, last = -Infinity, requeued = false;
  g.setImmediate = (f: (...a: unknown[]) => void, ...args: unknown[]) => {
    const now = performance.now();
    if (now - last > 5) streakStart = now;
    last = now;
    requeued = true;
    const turn = (...a: unknown[]) => {
      requeued = false;
      f(...a);
      if (!requeued) last = -Infinity;
    };
    if (now - streakStart < channelMs) {
      fast(turn, args);
      return undefined;
    }
    return setTimeout(turn, 0, ...args);
  };
  return channelMs === 0
    ? "Dawn's event polling through setTimeout(0)"
    : `Dawn's event polling through MessageChannel turns for ${channelMs} ms of a wait, then setTimeout(0)`;
}

/**
 * Installs the requested engine as navigator.gpu, once per process (later calls return the first
 * choice; asking for another engine afterwards is an error). "auto": Dawn where it finds an
 * adapter, else Deno's own, and the note says why.
 */
export function selectWebGpu(request: WebGpuRequest = "auto"): Promise<EngineChoice> {
  if (pending) {
    return pending.then((c) => {
      if (request !== "auto" && c.engine !== request) {
        throw new Error(`webgpu engine already chosen: ${c.engine}, cannot switch to ${request} in the same process`);
      }
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
export async function selectWebGpuFromArgs(
  argv: string[],
  quiet = false,
): Promise<{ choice: EngineChoice; rest: string[] }> {
  const { request, rest } = takeWebGpuFlag(argv);
  const choice = await selectWebGpu(request);
  if (!quiet) console.error(choice.note);
  return { choice, rest };
}
