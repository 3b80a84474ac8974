// The decoder's attention pads keys and values to a multiple of ATTN_ALIGN columns (masked) so that
// onnxruntime-web's WebGPU MatMul runs its vec4 kernel. Regression test for that change: decoding
// with the KV cache over every key length mod ATTN_ALIGN (1 .. 13 keys, two rows, one left-padded)
// gives the float64 reference's logits, and the cache handed back is not padded.
import { assertClose, assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { OrtPolicy } from "../policy.ts";
import { referenceLogits } from "../reference.ts";
import { makeTinyModel } from "../tiny.ts";
import { ATTN_ALIGN } from "./decoder.ts";

Deno.test("attention padded to ATTN_ALIGN keys: KV-cache decoding equals the float64 reference at every key length mod 4", async () => {
  const m = makeTinyModel("qwen2", { seed: 11 });
  const cfg = m.config, V = cfg.vocabSize;
  const policy = await OrtPolicy.create(cfg, m.weights, { maxPositions: 32 });
  try {
    const rng = new Rng(4);
    const a = Array.from({ length: 13 }, () => rng.int(V));
    const b = Array.from({ length: 11 }, () => rng.int(V));
    const refA = referenceLogits(cfg, m.weights, a), refB = referenceLogits(cfg, m.weights, b);
    // Row b is left-padded by 2: its keys include two masked columns at the start.
    let out = await policy.step({ ids: [[a[0]], [0]], mask: [[1], [0]], positions: [[0], [0]], past: null, keep: 1 });
    const mask: number[][] = [[1], [0]];
    const seen = new Set<number>();
    for (let t = 1; t < 13; t++) {
      const bt = t - 2; // row b's own position at column t
      mask[0].push(1);
      mask[1].push(bt >= 0 ? 1 : 0);
      const next = await policy.step({
        ids: [[a[t]], [bt >= 0 ? b[bt] : 0]],
        mask,
        positions: [[t], [Math.max(0, bt)]],
        past: out.present,
        keep: 1,
      });
      policy.releaseCache(out.present);
      out = next;
      const T = t + 1;
      seen.add(T % ATTN_ALIGN);
      assertEquals(out.present.tensors[0].dims, [2, cfg.numKvHeads, T, cfg.headDim]);
      assertClose(out.logits.subarray(0, V), refA[t], { atol: 2e-4, rtol: 1e-4, name: `row a, ${T} keys` });
      if (bt >= 0) {
        assertClose(out.logits.subarray(V, 2 * V), refB[bt], {
          atol: 2e-4,
          rtol: 1e-4,
          name: `row b (left-padded), ${T} keys`,
        });
      }
    }
    assertEquals(seen.size, ATTN_ALIGN);
    policy.releaseCache(out.present);
  } finally {
    await policy.release();
  }
});
