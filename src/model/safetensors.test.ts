import { assert, assertClose, assertEquals, assertRejects } from "../../tests/assert.ts";
import { Rng } from "../core/rng.ts";
import { bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits, fromBf16, fromF16, toBf16 } from "./half.ts";
import {
  encodeTensor,
  parseSafetensors,
  parseShardIndex,
  type RawTensor,
  rawToF32,
  rawToInts,
  safetensorsToWeights,
  weightsToSafetensors,
  writeSafetensors,
  writeShardedSafetensors,
} from "./safetensors.ts";
import type { Weights } from "./tensor.ts";

Deno.test("half: every finite f16 bit pattern survives f16 -> f32 -> f16, and values match Math.f16round", () => {
  const rng = new Rng(1);
  for (let h = 0; h < 0x10000; h++) {
    const x = f16BitsToF32(h);
    if (Number.isNaN(x)) {
      assert(Number.isNaN(f16BitsToF32(f32ToF16Bits(x))), "NaN stays NaN");
      continue;
    }
    assertEquals(f32ToF16Bits(x), h, `bits ${h.toString(16)}`);
  }
  // Independent reference: V8's Math.f16round (round to nearest even), over random magnitudes.
  for (let i = 0; i < 20000; i++) {
    const x = Math.fround((rng.next() - 0.5) * 2 ** (rng.int(60) - 30));
    assertEquals(f16BitsToF32(f32ToF16Bits(x)), Math.f16round(x), `f16(${x})`);
  }
  for (const x of [65504, 65519.99, 65520, 1e6, 2 ** -24, 2 ** -25, 1.5 * 2 ** -25, 2 ** -14 - 2 ** -25]) {
    assertEquals(f16BitsToF32(f32ToF16Bits(x)), Math.f16round(x), `edge ${x}`);
    assertEquals(f16BitsToF32(f32ToF16Bits(-x)), Math.f16round(-x), `edge -${x}`);
  }
  assertEquals(f32ToF16Bits(1), 0x3c00);
  // The table-driven bulk conversion agrees with the scalar one on every pattern (NaN as NaN).
  const all = Uint16Array.from({ length: 0x10000 }, (_, i) => i);
  const bulk = fromF16(all);
  for (let i = 0; i < 0x10000; i++) {
    assert(
      Object.is(bulk[i], Math.fround(f16BitsToF32(i))) || (Number.isNaN(bulk[i]) && Number.isNaN(f16BitsToF32(i))),
      `pattern ${i}`,
    );
  }
  assertEquals(f32ToF16Bits(-0), 0x8000);
});

Deno.test("half: bf16 round trips every non-NaN pattern and rounds to nearest even", () => {
  for (let h = 0; h < 0x10000; h++) {
    const x = bf16BitsToF32(h);
    if (Number.isNaN(x)) assert(Number.isNaN(bf16BitsToF32(f32ToBf16Bits(x))));
    else assertEquals(f32ToBf16Bits(x), h, `bits ${h.toString(16)}`);
  }
  assertEquals(f32ToBf16Bits(1), 0x3f80);
  assertEquals(f32ToBf16Bits(1 + 2 ** -8), 0x3f80, "tie rounds down to even");
  assertEquals(f32ToBf16Bits(1 + 3 * 2 ** -8), 0x3f82, "tie rounds up to even");
  assertEquals(f32ToBf16Bits(1 + 2 ** -8 + 2 ** -20), 0x3f81, "above the tie rounds up");
  const rng = new Rng(2);
  const x = rng.uniformArray(1000, -100, 100);
  // bf16 keeps 8 significant bits: relative error at most half an ulp, 2^-8.
  assertClose(fromBf16(toBf16(x)), x, { atol: 0, rtol: 2 ** -8 });
});

Deno.test("safetensors: parses a file built by hand from the format description", () => {
  // Header written as an independent producer would: no alignment padding, unordered offsets.
  const header = JSON.stringify({
    b: { dtype: "I64", shape: [2], data_offsets: [12, 28] },
    a: { dtype: "F32", shape: [3], data_offsets: [0, 12] },
    __metadata__: { format: "pt" },
  });
  const h = new TextEncoder().encode(header);
  const buf = new Uint8Array(8 + h.length + 28);
  const dv = new DataView(buf.buffer);
  dv.setBigUint64(0, BigInt(h.length), true);
  buf.set(h, 8);
  const d = 8 + h.length;
  [1.5, -2, 3.25].forEach((v, i) => dv.setFloat32(d + 4 * i, v, true));
  dv.setBigInt64(d + 12, -7n, true);
  dv.setBigInt64(d + 20, 1n << 40n, true);
  const f = parseSafetensors(buf);
  assertEquals(f.metadata, { format: "pt" });
  assertEquals(Array.from(rawToF32(f.tensors.get("a")!)), [1.5, -2, 3.25]);
  assertEquals([...rawToInts(f.tensors.get("b")!)], [-7n, 1n << 40n]);
});

Deno.test("safetensors: write -> parse round trip of F32/F16/BF16/I64/I32/U8, data 8-byte aligned", () => {
  const rng = new Rng(3);
  const x = { shape: [3, 5], data: rng.uniformArray(15, -3, 3) };
  const raw = new Map<string, RawTensor>([
    ["f32", encodeTensor(x, "F32")],
    ["f16", encodeTensor(x, "F16")],
    ["bf16", encodeTensor(x, "BF16")],
    ["i64", { dtype: "I64", shape: [2], bytes: new Uint8Array(new BigInt64Array([5n, -9n]).buffer) }],
    ["i32", { dtype: "I32", shape: [1, 3], bytes: new Uint8Array(new Int32Array([1, -2, 3]).buffer) }],
    ["u8", { dtype: "U8", shape: [3], bytes: new Uint8Array([0, 7, 255]) }],
  ]);
  const bytes = writeSafetensors(raw, { note: "test" });
  const hlen = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  assertEquals((8 + hlen) % 8, 0, "data start aligned");
  const f = parseSafetensors(bytes);
  assertEquals(f.metadata, { note: "test" });
  assertEquals(rawToF32(f.tensors.get("f32")!), x.data);
  assertClose(rawToF32(f.tensors.get("f16")!), x.data, { atol: 0, rtol: 2 ** -11 });
  assertClose(rawToF32(f.tensors.get("bf16")!), x.data, { atol: 0, rtol: 2 ** -8 });
  assertEquals(Array.from(rawToF32(f.tensors.get("f16")!)), Array.from(x.data, (v) => Math.f16round(v)));
  assertEquals([...rawToInts(f.tensors.get("i64")!)], [5n, -9n]);
  assertEquals([...rawToInts(f.tensors.get("i32")!)], [1, -2, 3]);
  assertEquals([...rawToInts(f.tensors.get("u8")!)], [0, 7, 255]);
  assertEquals(f.tensors.get("i32")!.shape, [1, 3]);
  const w = safetensorsToWeights(f);
  assertEquals([...w.keys()].sort(), ["bf16", "f16", "f32"]);
});

Deno.test("safetensors: malformed files fail with messages naming the problem", async () => {
  await assertRejects(() => parseSafetensors(new Uint8Array(4)), /too short/);
  const ok = weightsToSafetensors(new Map([["t", { shape: [2], data: new Float32Array([1, 2]) }]]));
  await assertRejects(() => parseSafetensors(ok.subarray(0, ok.length - 4)), /tensor t .*offsets/);
});

Deno.test("safetensors: sharded write -> index -> parse gives the same weights in bf16", () => {
  const rng = new Rng(4);
  const w: Weights = new Map();
  for (let i = 0; i < 7; i++) w.set(`layer.${i}.weight`, { shape: [4, 3 + i], data: rng.uniformArray(4 * (3 + i)) });
  const { index, files } = writeShardedSafetensors(w, 120, "BF16");
  assert(files.size >= 3, `expected several shards, got ${files.size}`);
  const idx = parseShardIndex(JSON.stringify(index));
  assertEquals(idx.files.length, files.size);
  const back: Weights = new Map();
  for (const name of idx.files) safetensorsToWeights(parseSafetensors(files.get(name)!), back);
  assertEquals([...back.keys()].sort(), [...w.keys()].sort());
  for (const [k, t] of w) {
    assertEquals(back.get(k)!.shape, t.shape);
    assertEquals(back.get(k)!.data, fromBf16(toBf16(t.data)), k);
    assertEquals(idx.weight_map[k] !== undefined, true);
  }
});
