// Whether captured decoding (captured.ts) computes right on this WebGPU device, checked once per device
// and head layout: a tiny one-layer model's captured steps against the policy's own graph with explicit
// attention, teacher-forced on ragged rows.
//
// Why: the captured graph decodes with ORT's GroupQueryAttention (its graph-capture path: per-row key
// counts, indirect dispatch), which no other check covers: gqa-check.ts tests GQA's uncaptured prefill
// and decode, and on SwiftShader that check fails (its prefill path) while the captured decode path
// is right (docs/policy.md, "Captured decoding"). Where this check fails the sampler
// decodes without capture. The check with prefill "captured" prefills the prompts with CapturedPrefill
// (GQA's prefill path under capture) as well and compares the first token's log-probabilities too;
// where only that one fails the sampler prefills with the policy's own graph.
import type { ModelConfig } from "./config.ts";
import { makeTinyModel } from "./tiny.ts";

/** The outcome of one check. */
export interface CapturedCheck {
  ok: boolean;
  /** Largest |captured - explicit| over the checked log-probabilities (every step, row and token). */
  maxAbsDiff: number;
  /** Why it could not run, if it threw. */
  error?: string;
}

/** What the check drives (kept apart from policy.ts to avoid an import cycle). */
export interface CheckDecoder {
  /**
   * Prefill of `prompts` then `steps` teacher-forced steps of `tokens[step][row]`, both ways; the
   * log-softmax rows of each step (with prefill "captured", the prefill's first, from both prefills).
   */
  compare(
    prompts: number[][],
    tokens: number[][],
    prefill: CheckPrefill,
  ): Promise<{ captured: Float32Array[]; explicit: Float32Array[] }>;
  release(): Promise<void>;
}

/** How the captured side prefills: the policy's own graph, or CapturedPrefill. */
export type CheckPrefill = "policy" | "captured";

type Create = (
  cfg: ModelConfig,
  weights: Map<string, { shape: number[]; data: Float32Array }>,
) => Promise<CheckDecoder>;

const TOL = 1e-3;
const cache = new Map<GPUDevice, Map<string, Promise<CapturedCheck>>>();

/** Runs (once per `device`, head layout of `cfg` and `prefill`) the tiny model through `create`'s two decoders and compares them. */
export function checkCaptured(
  cfg: ModelConfig,
  device: GPUDevice,
  create: Create,
  prefill: CheckPrefill = "policy",
): Promise<CapturedCheck> {
  const key = `${cfg.numHeads}/${cfg.numKvHeads}/${cfg.headDim}/${prefill}`;
  let byKey = cache.get(device);
  if (!byKey) cache.set(device, byKey = new Map());
  let hit = byKey.get(key);
  if (!hit) {
    hit = (async (): Promise<CapturedCheck> => {
      const m = makeTinyModel("llama", {
        seed: 43,
        hidden: 32,
        layers: 1,
        heads: cfg.numHeads,
        kvHeads: cfg.numKvHeads,
        headDim: cfg.headDim,
        intermediate: 16,
      });
      const V = m.config.vocabSize;
      // Ragged rows: one longer than a 64-key tile, one of a single token.
      const prompts = [70, 1, 23].map((n, r) => Array.from({ length: n }, (_, i) => (i * 37 + r * 11 + 5) % V));
      const tokens = Array.from({ length: 4 }, (_, s) => prompts.map((_, r) => (s * 53 + r * 29 + 7) % V));
      let d: CheckDecoder | null = null;
      try {
        d = await create(m.config, m.weights);
        const { captured, explicit } = await d.compare(prompts, tokens, prefill);
        let maxAbsDiff = 0;
        for (let s = 0; s < captured.length; s++) {
          for (let i = 0; i < captured[s].length; i++) {
            maxAbsDiff = Math.max(maxAbsDiff, Math.abs(captured[s][i] - explicit[s][i]));
          }
        }
        if (!Number.isFinite(maxAbsDiff)) maxAbsDiff = Infinity;
        return { ok: maxAbsDiff <= TOL, maxAbsDiff };
      } catch (e) {
        return { ok: false, maxAbsDiff: Infinity, error: e instanceof Error ? e.message : String(e) };
      } finally {
        await d?.release();
      }
    })();
    byKey.set(key, hit);
  }
  return hit;
}
