// Float64 reference of the PRM: the decoder's last hidden state (src/model/reference.ts's
// referenceHidden, after model.norm) through the scalar head, and the weighted mean BCE that
// prmGradients minimises. A pure function of its inputs, so it also serves finite differences.
import type { ModelConfig } from "../../src/model/config.ts";
import type { LoraAdapter } from "../../src/model/lora.ts";
import { referenceHidden } from "../../src/model/reference.ts";
import type { Weights } from "../../src/model/tensor.ts";
import { softplus } from "./prm_head.ref.ts";
import type { PrmExample } from "../../src/gpu/trainer/prm-step.ts";

/** z = h_t w + b at each example's rows, in float64. */
export function referencePrmLogits(
  cfg: ModelConfig,
  w: Weights,
  examples: readonly PrmExample[],
  adapter: LoraAdapter | undefined,
  wb: ArrayLike<number>,
): number[][] {
  const C = cfg.hiddenSize;
  return examples.map((e) => {
    const hs = referenceHidden(cfg, w, e.ids, adapter);
    return e.rows.map((t) => {
      let z = wb[C];
      for (let c = 0; c < C; c++) z += hs[t][c] * wb[c];
      return z;
    });
  });
}

/** (1 / sum weights) * sum_j weight_j (softplus(z_j) - y_j z_j) over every labelled row, in float64. */
export function referencePrmLoss(
  cfg: ModelConfig,
  w: Weights,
  examples: readonly PrmExample[],
  adapter: LoraAdapter | undefined,
  wb: ArrayLike<number>,
): number {
  const z = referencePrmLogits(cfg, w, examples, adapter, wb);
  let num = 0, den = 0;
  examples.forEach((e, i) =>
    e.rows.forEach((_, j) => {
      const wt = e.weights?.[j] ?? 1;
      const y = e.labels?.[j];
      if (y === undefined) throw new Error(`referencePrmLoss: example ${i} has no label for row ${j}`);
      num += wt * (softplus(z[i][j]) - y * z[i][j]);
      den += wt;
    })
  );
  return den > 0 ? num / den : 0;
}
