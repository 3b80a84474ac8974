// Whether onnxruntime-web's GroupQueryAttention computes right on this WebGPU device, checked once
// per device and head layout against the explicit attention graph on a tiny model.
//
// Why: where the device has `subgroups`, ORT's WebGPU GQA takes a flash-attention path built on
// subgroup operations, and on SwiftShader (Dawn's CPU adapter, subgroup size 4) that path returns
// wrong attention for prompts longer than a few tokens, with no error: log-probabilities off by
// 0.5 at 40 tokens, while the same graph on a device without subgroups (Deno's wgpu) is exact
// (docs/policy.md, "OrtPolicy"). The policy then builds explicit attention instead.
import type { ModelConfig } from "./config.ts";
import { makeTinyModel } from "./tiny.ts";

/** The outcome of one check. */
export interface GqaCheck {
  ok: boolean;
  /** Largest |GQA - explicit| over the checked log-probabilities (prefill and one decoding step). */
  maxAbsDiff: number;
}

/** The least a policy needs for the check (kept apart from policy.ts to avoid an import cycle). */
interface CheckPolicy {
  logprobs(seqs: number[][]): Promise<number[][]>;
  step(
    input: { ids: number[][]; mask: number[][]; positions: number[][]; past: unknown; keep: number },
  ): Promise<{ logits: Float32Array; present: unknown }>;
  releaseCache?(c: unknown): void;
  release(): Promise<void>;
}

type Create = (
  cfg: ModelConfig,
  weights: Map<string, { shape: number[]; data: Float32Array }>,
  attention: "gqa" | "explicit",
) => Promise<CheckPolicy>;

const TOL = 1e-3;
/** Results per device (or per the ORT-owned device, keyed by null) and head layout. */
const cache = new Map<GPUDevice | null, Map<string, Promise<GqaCheck>>>();

/** Log-probabilities of a 40-token prompt, then the next-token logits after it from the cache. */
async function probe(p: CheckPolicy, ids: number[]): Promise<number[]> {
  const lp = (await p.logprobs([ids])).flat();
  const prefill = await p.step({
    ids: [ids.slice(0, -1)],
    mask: [ids.slice(0, -1).map(() => 1)],
    positions: [ids.slice(0, -1).map((_, i) => i)],
    past: null,
    keep: 1,
  });
  const next = await p.step({
    ids: [[ids[ids.length - 1]]],
    mask: [ids.map(() => 1)],
    positions: [[ids.length - 1]],
    past: prefill.present,
    keep: 1,
  });
  p.releaseCache?.(prefill.present);
  p.releaseCache?.(next.present);
  const z = next.logits;
  let m = -Infinity;
  for (const v of z) m = Math.max(m, v);
  let s = 0;
  for (const v of z) s += Math.exp(v - m);
  const lse = m + Math.log(s);
  return [...lp, ...Array.from(z, (v) => v - lse)];
}

/**
 * Runs (once per `device` and head layout of `cfg`) a tiny one-layer model with `cfg`'s heads
 * through a GQA graph and an explicit one made by `create`, and compares them.
 */
export function checkGqa(cfg: ModelConfig, device: GPUDevice | null, create: Create): Promise<GqaCheck> {
  const key = `${cfg.numHeads}/${cfg.numKvHeads}/${cfg.headDim}`;
  let byKey = cache.get(device);
  if (!byKey) cache.set(device, byKey = new Map());
  let hit = byKey.get(key);
  if (!hit) {
    hit = (async () => {
      const m = makeTinyModel("llama", {
        seed: 41,
        hidden: 32,
        layers: 1,
        heads: cfg.numHeads,
        kvHeads: cfg.numKvHeads,
        headDim: cfg.headDim,
        intermediate: 16,
      });
      const ids = Array.from({ length: 40 }, (_, i) => (i * 37 + 11) % m.config.vocabSize);
      const out: number[][] = [];
      for (const attention of ["gqa", "explicit"] as const) {
        const p = await create(m.config, m.weights, attention);
        try {
          out.push(await probe(p, ids));
        } finally {
          await p.release();
        }
      }
      let maxAbsDiff = 0;
      for (let i = 0; i < out[0].length; i++) maxAbsDiff = Math.max(maxAbsDiff, Math.abs(out[0][i] - out[1][i]));
      if (!Number.isFinite(maxAbsDiff)) maxAbsDiff = Infinity;
      return { ok: maxAbsDiff <= TOL, maxAbsDiff };
    })();
    byKey.set(key, hit);
  }
  return hit;
}
