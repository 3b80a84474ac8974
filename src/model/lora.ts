// LoRA adapters in PEFT's naming: y = W x + (alpha / r) * B (A x), with A (r, in) and B (out, r).
import { Rng } from "../core/rng.ts";
import type { ModelConfig } from "./config.ts";
import type { Tensor } from "./tensor.ts";

/** Linear layers a LoRA adapter may target. */
export const LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] as const;
export type LoraTarget = (typeof LORA_TARGETS)[number];

/** A LoRA adapter: tensors keyed by PEFT names (`base_model.model.model.layers.{i}.self_attn.q_proj.lora_A.weight`). */
export interface LoraAdapter {
  r: number;
  alpha: number;
  targets: LoraTarget[];
  tensors: Map<string, Tensor>;
}

/** True for the names of LORA_TARGETS. */
export function isLoraTarget(x: unknown): x is LoraTarget {
  return typeof x === "string" && (LORA_TARGETS as readonly string[]).includes(x);
}

/** "self_attn" or "mlp": the HF sub-module holding a target. */
export function targetModule(t: LoraTarget): "self_attn" | "mlp" {
  return t === "gate_proj" || t === "up_proj" || t === "down_proj" ? "mlp" : "self_attn";
}

/** The PEFT tensor name of `lora_A` or `lora_B` for one layer and target. */
export function loraKey(layer: number, target: LoraTarget, which: "A" | "B"): string {
  return `base_model.model.model.layers.${layer}.${targetModule(target)}.${target}.lora_${which}.weight`;
}

/** The HF base weight name a target adapts in one layer. */
export function baseKey(layer: number, target: LoraTarget): string {
  return `model.layers.${layer}.${targetModule(target)}.${target}.weight`;
}

/** (out, in) of a target's base linear weight. */
export function targetDims(cfg: ModelConfig, target: LoraTarget): [number, number] {
  const H = cfg.hiddenSize;
  const qd = cfg.numHeads * cfg.headDim;
  const kvd = cfg.numKvHeads * cfg.headDim;
  switch (target) {
    case "q_proj":
      return [qd, H];
    case "k_proj":
      return [kvd, H];
    case "v_proj":
      return [kvd, H];
    case "o_proj":
      return [H, qd];
    case "gate_proj":
      return [cfg.intermediateSize, H];
    case "up_proj":
      return [cfg.intermediateSize, H];
    case "down_proj":
      return [H, cfg.intermediateSize];
  }
}

/** The scale applied to B(Ax): alpha / r (PEFT without rslora). */
export function loraScale(a: LoraAdapter): number {
  return a.alpha / a.r;
}

/**
 * Checks every target of every layer is present with shapes (r, in) and (out, r), and that no
 * tensor is left over (a layer the model lacks, a target not listed); errors name the tensor and
 * both shapes. The notebook's import and every CLI `--adapter` go through here.
 */
export function validateAdapter(cfg: ModelConfig, a: LoraAdapter): void {
  const expected = new Set<string>();
  for (let l = 0; l < cfg.numLayers; l++) {
    for (const t of a.targets) for (const w of ["A", "B"] as const) expected.add(loraKey(l, t, w));
  }
  const unused = [...a.tensors.keys()].filter((k) => !expected.has(k));
  if (unused.length) {
    const layer = /\.layers\.(\d+)\./.exec(unused[0])?.[1];
    const why = layer !== undefined && Number(layer) >= cfg.numLayers
      ? ` (layer ${layer}; the model has ${cfg.numLayers} layers: was it trained on a model with more?)`
      : "";
    throw new Error(`LoRA adapter: ${unused.length} tensor(s) have no place in this model, e.g. ${unused[0]}${why}`);
  }
  for (let l = 0; l < cfg.numLayers; l++) {
    for (const t of a.targets) {
      const [out, inp] = targetDims(cfg, t);
      for (const [which, shape] of [["A", [a.r, inp]], ["B", [out, a.r]]] as const) {
        const key = loraKey(l, t, which);
        const got = a.tensors.get(key);
        if (!got) throw new Error(`LoRA adapter: missing tensor ${key} (expected shape [${shape.join(", ")}])`);
        if (got.shape.length !== 2 || got.shape[0] !== shape[0] || got.shape[1] !== shape[1]) {
          throw new Error(
            `LoRA adapter: tensor ${key} has shape [${got.shape.join(", ")}], model expects [${shape.join(", ")}]`,
          );
        }
      }
    }
  }
}

/** A seeded adapter with uniform A (kaiming-like scale) and, unlike PEFT's init, non-zero B so tests see its effect. */
export function randomAdapter(
  cfg: ModelConfig,
  o: { r: number; alpha: number; targets: readonly LoraTarget[]; seed: number; bScale?: number; zeroB?: boolean },
): LoraAdapter {
  const rng = new Rng(o.seed);
  const tensors = new Map<string, Tensor>();
  const bScale = o.bScale ?? 0.05;
  for (let l = 0; l < cfg.numLayers; l++) {
    for (const t of o.targets) {
      const [out, inp] = targetDims(cfg, t);
      const aBound = 1 / Math.sqrt(inp);
      tensors.set(loraKey(l, t, "A"), { shape: [o.r, inp], data: rng.uniformArray(o.r * inp, -aBound, aBound) });
      const b = o.zeroB ? new Float32Array(out * o.r) : rng.uniformArray(out * o.r, -bScale, bScale);
      tensors.set(loraKey(l, t, "B"), { shape: [out, o.r], data: b });
    }
  }
  return { r: o.r, alpha: o.alpha, targets: [...o.targets], tensors };
}

/** Adapter with B = 0 (PEFT's initialisation: the adapted model equals the base model). */
export function zeroAdapter(
  cfg: ModelConfig,
  o: { r: number; alpha: number; targets: readonly LoraTarget[]; seed: number },
): LoraAdapter {
  return randomAdapter(cfg, { ...o, zeroB: true });
}
