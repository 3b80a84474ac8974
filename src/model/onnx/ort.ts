// onnxruntime-web set-up shared by every session: the WebGPU build, where its .wasm lives under
// Deno, and the provider choice with a visible fallback to WASM.
import * as ort from "onnxruntime-web/webgpu";

export { ort };

/** Execution providers a policy session can run on. */
export const PROVIDERS = ["webgpu", "wasm"] as const;
export type Provider = (typeof PROVIDERS)[number];

let configured = false;

/** Points ORT at its .wasm files under Deno (node_modules) and keeps it single-threaded there. */
export function configureOrt(): void {
  if (configured) return;
  configured = true;
  if ("Deno" in globalThis) {
    // Deno has no page origin to resolve the wasm URL against; the package folder is a file URL.
    // Through a variable, so bundlers (Vite's `new URL(literal, import.meta.url)` asset handling)
    // leave this Deno-only path alone.
    const dist = "../../../node_modules/onnxruntime-web/dist/";
    const prefix = new URL(dist, import.meta.url).href;
    // onnxruntime's module through a stand-in that adds the session config entries of setWebgpuSessionEntries.
    ort.env.wasm.wasmPaths = {
      wasm: `${prefix}ort-wasm-simd-threaded.asyncify.wasm`,
      mjs: webgpuEntriesFactory(`${prefix}ort-wasm-simd-threaded.asyncify.mjs`),
    };
    ort.env.wasm.numThreads = 1;
    const pending = pendingDispatchesFromEnv() ?? DEFAULT_PENDING_DISPATCHES;
    if (webgpuSessionEntries() === null) setWebgpuSessionEntries({ [PENDING_DISPATCHES_KEY]: String(pending) });
  }
  ort.env.logLevel = "error";
}

/** The WebGPU EP's session config entry: dispatches recorded before a queue submit (onnxruntime's default 16, 1-4096). */
export const PENDING_DISPATCHES_KEY = "ep.webgpuexecutionprovider.maxNumPendingDispatches";

/**
 * The WebGPU EP's dispatches per submit under Deno (onnxruntime's own default is 16): a captured 0.5B decoding step then
 * goes to the queue in 2 submits instead of 32-47. On an H100 (Dawn, suite decode) 29.3 -> 23.1 ms a step at batch 8 and
 * 33.0 -> 22.4 at batch 64 (docs/performance.md).
 */
export const DEFAULT_PENDING_DISPATCHES = 1024;

/** RLVR_ORT_PENDING_DISPATCHES (Deno): the WebGPU EP's dispatches per submit, or null where unset (then the default). */
export function pendingDispatchesFromEnv(): number | null {
  const v = "Deno" in globalThis ? Deno.env.get("RLVR_ORT_PENDING_DISPATCHES") : undefined;
  if (v === undefined || v === "") return null;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 4096) {
    throw new Error(`RLVR_ORT_PENDING_DISPATCHES must be an integer 1..4096, got ${JSON.stringify(v)}`);
  }
  return n;
}

/** Where the stand-in module reads the entries when a session appends its execution provider (a global: it is a data: URL). */
const ENTRIES = Symbol.for("rlvr.ort.webgpuSessionEntries");
type EntriesHolder = { [ENTRIES]?: Record<string, string> };

/**
 * Session config entries that every session made from now on gets before its WebGPU execution provider is
 * appended (Deno; e.g. PENDING_DISPATCHES_KEY). onnxruntime-web forwards only a fixed list of WebGPU EP options, and
 * `SessionOptions.extra` lands after the EP was made, which reads its config then (docs/upstream.md).
 */
export function setWebgpuSessionEntries(entries: Record<string, string>): void {
  (globalThis as EntriesHolder)[ENTRIES] = { ...entries };
}

/** The entries of setWebgpuSessionEntries, or null before any. */
export function webgpuSessionEntries(): Record<string, string> | null {
  return (globalThis as EntriesHolder)[ENTRIES] ?? null;
}

/**
 * A module URL standing in for onnxruntime-web's wasm factory at `realMjs`: the same module, whose
 * `_OrtAppendExecutionProvider` first adds the entries of setWebgpuSessionEntries to the session's options.
 */
export function webgpuEntriesFactory(realMjs: string): string {
  const src = `import factory from ${JSON.stringify(realMjs)};
export default async function (config) {
  const m = await factory(config);
  const append = m._OrtAppendExecutionProvider;
  const str = (s) => { const n = m.lengthBytesUTF8(s) + 1; const p = m._malloc(n); m.stringToUTF8(s, p, n); return p; };
  m._OrtAppendExecutionProvider = (options, ...rest) => {
    for (const [k, v] of Object.entries(globalThis[Symbol.for("rlvr.ort.webgpuSessionEntries")] ?? {})) {
      const kp = str(k), vp = str(String(v));
      const rc = m._OrtAddSessionConfigEntry(options, kp, vp);
      m._free(kp); m._free(vp);
      if (rc !== 0) throw new Error("onnxruntime: cannot set session config entry " + k);
    }
    return append(options, ...rest);
  };
  return m;
}
`;
  // A data: URL (not a blob: one): inside an npm package Deno's loader takes file: and data: URLs only.
  return `data:text/javascript;base64,${btoa(src)}`;
}

/** True when `navigator.gpu` exists (the WebGPU EP can be tried). */
export function hasWebGpu(): boolean {
  const nav = (globalThis as { navigator?: { gpu?: unknown } }).navigator;
  return !!nav?.gpu;
}

/**
 * Session options every session gets: onnxruntime's session logger defaults to warnings, which its wasm build prints
 * as console errors — two lines of VerifyEachNodeIsAssignedToAnEp per session (shape ops placed on the CPU on
 * purpose), about ten per model load in the page. Errors (3) and fatal errors still print.
 */
export const QUIET_SESSION = { logSeverityLevel: 3 } as const;

/**
 * Creates a session from model bytes on `preferred`; when WebGPU is missing or fails, falls back to
 * WASM and reports why through `onNote` (the caller prints it), returning the provider used.
 * `webgpuOpts` apply to the WebGPU session only (such as outputs kept in GPU buffers); `device`
 * makes the session run on that GPUDevice (shared with the trainer) instead of its own.
 */
export async function createSession(
  bytes: Uint8Array,
  preferred: Provider,
  onNote: (msg: string) => void,
  opts: Omit<ort.InferenceSession.SessionOptions, "executionProviders"> = {},
  webgpuOpts: Omit<ort.InferenceSession.SessionOptions, "executionProviders"> = {},
  device?: GPUDevice,
): Promise<{ session: ort.InferenceSession; provider: Provider }> {
  configureOrt();
  if (preferred === "webgpu") {
    if (!hasWebGpu()) {
      onNote(
        "note: navigator.gpu is missing; the policy runs on onnxruntime-web's WASM (CPU) provider instead of WebGPU",
      );
    } else {
      try {
        // onnxruntime-web reads `device` from the WebGPU provider option (not in its typings yet):
        // the session then shares the caller's GPUDevice and accepts its buffers as tensors.
        const ep: { name: string; device?: GPUDevice } = device ? { name: "webgpu", device } : { name: "webgpu" };
        return {
          session: await ort.InferenceSession.create(bytes, {
            ...QUIET_SESSION,
            ...opts,
            ...webgpuOpts,
            executionProviders: [ep],
          }),
          provider: "webgpu",
        };
      } catch (e) {
        onNote(
          `note: the WebGPU provider failed (${
            e instanceof Error ? e.message : String(e)
          }); falling back to WASM (CPU)`,
        );
      }
    }
  }
  return {
    session: await ort.InferenceSession.create(bytes, { ...QUIET_SESSION, ...opts, executionProviders: ["wasm"] }),
    provider: "wasm",
  };
}
