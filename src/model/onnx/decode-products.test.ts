// The staticDecode graph's q4 products (decoder.ts decodeProducts): the K-split rule on the 0.5B shapes at the
// batch sizes the recipe decodes, the split view of a q4 weight (the same bytes as (N S, K / S) with its zero
// points repacked) dequantising to the slices of the original, stacked weights dequantising to the stacked rows,
// and the graph's nodes for each mode.
import { assert, assertEquals } from "../../../tests/assert.ts";
import onnxProto from "onnx-proto";
import { Rng } from "../../core/rng.ts";
import { dequantizeQ4, quantizeQ4 } from "../quant.ts";
import { makeTinyModel } from "../tiny.ts";
import {
  buildDecoder,
  type DecodeProducts,
  q4SplitK,
  SPLIT_ENOUGH_TILES,
  SPLIT_MAX_SLICES,
  SPLIT_MAX_TILES,
  SPLIT_MIN_ROWS,
  splitZeroPoints,
  stackQ4,
} from "./decoder.ts";

const { onnx } = onnxProto;

Deno.test("q4SplitK: the 0.5B shape's products at 8 and 64 decoding rows; none for prefill-sized M, K off the 32-block or too short to split", () => {
  // Qwen2.5-0.5B: q/k/v stacked 1152 x 896, o 896 x 896, gate/up stacked 9728 x 896, down 896 x 4864.
  const shapes = { qkv: [1152, 896], o: [896, 896], gateUp: [9728, 896], down: [896, 4864] } as const;
  const at = (M: number) => Object.fromEntries(Object.entries(shapes).map(([k, [N, K]]) => [k, q4SplitK(M, N, K)]));
  assertEquals(at(8), { qkv: 1, o: 1, gateUp: 1, down: 1 }); // under SPLIT_MIN_ROWS
  assertEquals(at(32), { qkv: 2, o: 2, gateUp: 1, down: 2 });
  assertEquals(at(64), { qkv: 2, o: 2, gateUp: 1, down: 2 });
  assertEquals(at(1024), { qkv: 1, o: 1, gateUp: 1, down: 1 });
  assertEquals(q4SplitK(64, 896, 900), 1); // K not a multiple of the 32-block
  assertEquals(q4SplitK(64, 128, 128), 1); // K / 2 < 128
  // The rule's bounds: never past SPLIT_MAX_TILES, never when SPLIT_ENOUGH_TILES already.
  const tiles = (M: number, N: number, s: number) => Math.ceil((N * s) / 128) * Math.ceil((M * s) / 16);
  for (const M of [1, 4, 8, 16, 32, 64]) {
    for (const [N, K] of Object.values(shapes)) {
      const s = q4SplitK(M, N, K);
      assert(
        s === 1 || (tiles(M, N, s) <= SPLIT_MAX_TILES && s <= SPLIT_MAX_SLICES && M >= SPLIT_MIN_ROWS),
        `M ${M} N ${N}: ${s} slices`,
      );
      if (tiles(M, N, 1) >= SPLIT_ENOUGH_TILES) assertEquals(s, 1);
      assertEquals((K / 32) % s, 0);
    }
  }
});

Deno.test("splitZeroPoints: a q4 weight's bytes read as (N S, K / S) dequantise to the slices of its rows, for odd and even blocks per slice", () => {
  const rng = new Rng(3);
  for (const [N, K, S] of [[5, 32 * 6, 2], [3, 32 * 6, 3], [4, 32 * 8, 8], [2, 32 * 10, 5]]) {
    const q = quantizeQ4({ shape: [N, K], data: rng.uniformArray(N * K).map((v) => v - 0.5) });
    const full = dequantizeQ4(q).data;
    const nb = K / 32;
    const view = dequantizeQ4({
      N: N * S,
      K: K / S,
      blockSize: 32,
      packed: q.packed,
      scales: q.scales,
      zeroPoints: splitZeroPoints(q.zeroPoints!, N, nb, S),
    }).data;
    // Row n S + t of the view is columns t K / S .. of row n: the same floats in the same order.
    assertEquals(Array.from(view), Array.from(full), `N ${N} K ${K} S ${S}`);
  }
});

Deno.test("stackQ4: stacked q4 weights dequantise to the stacked rows (q/k/v and gate/up as one product)", () => {
  const rng = new Rng(4);
  const parts = [7, 2, 2].map((n) => quantizeQ4({ shape: [n, 96], data: rng.uniformArray(n * 96) }));
  const st = stackQ4(parts);
  assertEquals([st.N, st.K], [11, 96]);
  assertEquals(Array.from(dequantizeQ4(st).data), parts.flatMap((p) => Array.from(dequantizeQ4(p).data)));
});

Deno.test("decodeProducts: plain keeps a MatMulNBits per projection; fused stacks q/k/v and gate/up (a Split each); split adds the K-split products where the rule says so; rows runs row groups", () => {
  const m = makeTinyModel("qwen2", {
    seed: 2,
    hidden: 256,
    layers: 2,
    heads: 8,
    kvHeads: 2,
    headDim: 32,
    intermediate: 512,
    vocabSize: 300,
  });
  const count = (p: DecodeProducts, batch: number) => {
    const built = buildDecoder(m.config, m.weights, {
      dtype: "q4",
      kvCache: true,
      maxPositions: 32,
      attention: "gqa",
      shaderF16: false,
      staticDecode: { batch, maxT: 32 },
      decodeProducts: p,
      externalMinBytes: Infinity,
    });
    const ops = new Map<string, number>();
    for (const n of onnx.ModelProto.decode(built.bytes).graph!.node ?? []) {
      ops.set(n.opType ?? "", (ops.get(n.opType ?? "") ?? 0) + 1);
    }
    return { nbits: ops.get("MatMulNBits") ?? 0, split: ops.get("Split") ?? 0, reduce: ops.get("ReduceSum") ?? 0 };
  };
  assertEquals(count("plain", 32), { nbits: 14, split: 0, reduce: 0 });
  assertEquals(count("fused", 32), { nbits: 8, split: 4, reduce: 0 });
  // At 32 rows, per layer: q/k/v stacked (N 384, K 256), o (256 x 256), gate/up (1024 x 256), down (256 x 512), each in 2 slices.
  assertEquals([q4SplitK(32, 384, 256), q4SplitK(32, 256, 256), q4SplitK(32, 1024, 256), q4SplitK(32, 256, 512)], [
    2,
    2,
    2,
    2,
  ]);
  assertEquals(count("split", 32), { nbits: 8, split: 4, reduce: 8 });
  assertEquals(count("split", 8), count("fused", 8)); // under SPLIT_MIN_ROWS: stacked only
  // rows at 8 rows: groups of 3, 3 and 2, so three MatMulNBits per product and a Split of the rows before each.
  assertEquals(count("rows", 8), { nbits: 24, split: 12, reduce: 0 });
  // auto (the default): rows up to ROWS_AUTO_MAX rows, split from there, stacked between.
  assertEquals(count("auto", 8), count("rows", 8));
  assertEquals(count("auto", 12), count("rows", 12));
  assertEquals(count("auto", 16), count("fused", 16));
  assertEquals(count("auto", 32), count("split", 32));
});
