// The decoder graph's structure, read back from its protobuf bytes: inputs and outputs by name,
// no LoRA operators without an adapter, MatMulNBits exactly on the linear layers at q4, no operators the
// WebGPU EP lacks or fails on (LogSoftmax, Pad), attention keys aligned.
import { assert, assertEquals } from "../../../tests/assert.ts";
import onnxProto from "onnx-proto";
import { fromF16, toF16 } from "../half.ts";
import { makeTinyModel, type TinyOptions } from "../tiny.ts";
import { LORA_TARGETS } from "../lora.ts";
import { buildDecoder, type DecoderOptions, LORA_K_SLICE, loraSplitK } from "./decoder.ts";

const { onnx } = onnxProto;

function decode(cfgArch: "qwen2" | "llama" | "qwen3", o: Partial<DecoderOptions>, sizes: Partial<TinyOptions> = {}) {
  const m = makeTinyModel(cfgArch, { seed: 1, ...sizes });
  const built = buildDecoder(m.config, m.weights, { dtype: "f32", kvCache: true, maxPositions: 16, ...o });
  const g = onnx.ModelProto.decode(built.bytes).graph;
  if (!g) throw new Error("no graph");
  const graph = {
    node: (g.node ?? []).map((n) => ({
      opType: n.opType ?? "",
      domain: n.domain ?? "",
      input: n.input ?? [],
      output: n.output ?? [],
      attrs: Object.fromEntries((n.attribute ?? []).map((a) => [a.name ?? "", Number(a.i ?? 0)])),
    })),
    input: (g.input ?? []).map((v) => ({
      name: v.name ?? "",
      dims: (v.type?.tensorType?.shape?.dim ?? []).map((d) => d.dimParam || Number(d.dimValue ?? 0)),
    })),
    output: (g.output ?? []).map((v) => ({ name: v.name ?? "" })),
    initializer: (g.initializer ?? []).map((t) => ({
      name: t.name ?? "",
      dataType: t.dataType ?? 0,
      dataLocation: t.dataLocation ?? 0,
      location: t.externalData?.find((e) => e.key === "location")?.value ?? null,
    })),
  };
  const ops = new Map<string, number>();
  for (const n of graph.node) ops.set(n.opType, (ops.get(n.opType) ?? 0) + 1);
  return { m, built, graph, ops };
}

Deno.test("decoder graph: inputs, outputs, and no LoRA operators without LoRA targets", () => {
  const plain = decode("qwen3", {});
  const L = plain.m.config.numLayers;
  const kv = Array.from({ length: L }, (_, i) => [`past_key_values.${i}.key`, `past_key_values.${i}.value`]).flat();
  assertEquals(plain.graph.input.map((v) => v.name), [
    "input_ids",
    "attention_mask",
    "position_ids",
    "num_logits_to_keep",
    ...kv,
    "target_ids",
  ]);
  assertEquals(plain.graph.output.map((v) => v.name), [
    "logits",
    "target_logprobs",
    ...kv.map((n) => n.replace("past_key_values", "present")),
  ]);
  assertEquals(plain.built.inputNames, plain.graph.input.map((v) => v.name));
  // logprobs: false, for transformers.js's generate (bench/suites/decode-tjs.ts): the standard inputs and outputs alone.
  const std = decode("qwen2", { dtype: "q4", attention: "gqa", logprobs: false });
  assertEquals(std.graph.input.map((v) => v.name), [
    "input_ids",
    "attention_mask",
    "position_ids",
    "num_logits_to_keep",
    ...kv,
  ]);
  assertEquals(std.graph.output.map((v) => v.name), [
    "logits",
    ...kv.map((n) => n.replace("past_key_values", "present")),
  ]);
  assertEquals([std.built.inputNames, std.built.outputNames], [
    std.graph.input.map((v) => v.name),
    std.graph.output.map((v) => v.name),
  ]);
  assert(!std.graph.node.some((n) => n.opType === "GatherElements"), "no log-probability nodes");
  const lora = decode("qwen3", { loraTargets: ["q_proj", "down_proj"] });
  const loraInputs = lora.graph.input.map((v) => v.name).filter((n) => n.startsWith("lora"));
  assertEquals(loraInputs, [
    "lora_scale",
    ...Array.from({ length: L }, (_, i) => [`lora.${i}.q.A`, `lora.${i}.q.B`, `lora.${i}.down.A`, `lora.${i}.down.B`])
      .flat(),
  ]);
  // Each adapted linear (f32) adds 3 Reshapes, a Shape, 2 Gemms and a Mul (the sum is the second
  // Gemm's C input, no Add); nothing else changes.
  const pairs = 2 * L;
  assertEquals(lora.graph.node.length - plain.graph.node.length, 7 * pairs);
  // Linears sharing an input share its LoRA scaling: q/k/v one Mul, gate/up one, o and down one each.
  const all = decode("qwen2", { loraTargets: LORA_TARGETS });
  assertEquals(all.ops.get("Mul")! - (decode("qwen2", {}).ops.get("Mul") ?? 0), 4 * L);
  assertEquals((lora.ops.get("Gemm") ?? 0) - (plain.ops.get("Gemm") ?? 0), 2 * pairs);
  assertEquals(lora.ops.get("Transpose"), plain.ops.get("Transpose"));
  assert(
    !plain.graph.node.some((n) => n.input.some((i) => i.startsWith("lora"))),
    "a LoRA input is used without LoRA targets",
  );
});

Deno.test("decoder graph: q4 puts every linear layer and the head on MatMulNBits, f16 stores half weights", () => {
  const q4 = decode("llama", { dtype: "q4", externalMinBytes: Infinity });
  const L = q4.m.config.numLayers;
  assertEquals(q4.ops.get("MatMulNBits"), 7 * L + 1);
  const nbits = q4.graph.node.find((n) => n.opType === "MatMulNBits");
  assertEquals(nbits?.domain, "com.microsoft");
  const f32 = decode("llama", { externalMinBytes: Infinity });
  assertEquals(f32.ops.get("MatMulNBits") ?? 0, 0);
  const f16 = decode("llama", { dtype: "f16", externalMinBytes: Infinity });
  const types = new Set(f16.graph.initializer.filter((t) => t.name.endsWith("weight_t")).map((t) => t.dataType));
  assertEquals([...types], [10]);
  assert(
    f16.built.bytes.length < 0.6 * f32.built.bytes.length,
    `f16 model ${f16.built.bytes.length} B vs f32 ${f32.built.bytes.length} B`,
  );
  assertEquals(f16.built.kvType, "float16");
});

Deno.test("decoder graph: q4 qwen2 takes the q/k/v biases as MatMulNBits' bias input (no Add of a bias), with and without shader-f16", () => {
  for (const shaderF16 of [false, true]) {
    const q4 = decode("qwen2", { dtype: "q4", externalMinBytes: Infinity, shaderF16 });
    const L = q4.m.config.numLayers;
    const withBias = q4.graph.node.filter((n) =>
      n.opType === "MatMulNBits" && n.input.length === 6 && n.input[5].endsWith(".bias")
    );
    assertEquals(withBias.length, 3 * L, `shaderF16 ${shaderF16}`);
    assertEquals(q4.graph.node.filter((n) => n.opType === "Add" && n.input.some((x) => x.endsWith(".bias"))).length, 0);
  }
});

Deno.test("decoder graph: q4Accuracy 4 sets accuracy_level 4 on every MatMulNBits (ORT's int8-activation kernel), the default leaves it unset", () => {
  const levels = (o: Partial<DecoderOptions>) =>
    decode("qwen2", { dtype: "q4", externalMinBytes: Infinity, ...o }).graph.node.filter((n) =>
      n.opType === "MatMulNBits"
    ).map((n) => n.attrs.accuracy_level);
  const four = levels({ q4Accuracy: 4 });
  assert(four.length > 0);
  assertEquals(new Set(four), new Set([4]));
  assertEquals(new Set(levels({})), new Set([undefined]));
  assertEquals(new Set(levels({ q4Accuracy: 0 })), new Set([undefined]));
});

Deno.test("decoder graph: large initializers go to external data files, integer constants stay inline", () => {
  const ext = decode("qwen2", { externalMinBytes: 1024 });
  assert(ext.built.external.length > 0, "no external files");
  const externalNames = ext.graph.initializer.filter((t) => t.dataLocation === 1);
  assertEquals(externalNames.length, ext.built.external.length);
  for (const t of externalNames) {
    assert(t.dataType !== 7, `int64 ${t.name} went external`);
    assert(ext.built.external.some((f) => f.path === t.location), `${t.name} names a missing file ${t.location}`);
  }
});

Deno.test("decoder graph: f16 initializers carry exactly half.ts's bits (native Float16Array or not)", () => {
  const f16 = decode("qwen2", { dtype: "f16", externalMinBytes: 0 });
  const bits = new Uint16Array(
    f16.built.external.find((f) => f.data.byteLength === f16.m.config.vocabSize * f16.m.config.hiddenSize * 2)?.data
      .slice().buffer ?? new ArrayBuffer(0),
  );
  const embed = f16.m.weights.get("model.embed_tokens.weight");
  assert(embed !== undefined && bits.length === embed.data.length, "embedding initializer not found");
  assertEquals(bits, toF16(embed.data));
});

Deno.test("decoder graph: only operators the WebGPU EP runs on the hot path (no LogSoftmax, no Pad), attention on aligned keys", () => {
  for (const dtype of ["f32", "f16"] as const) {
    const { m, graph, ops } = decode("qwen2", { dtype });
    const L = m.config.numLayers;
    // LogSoftmax has no WebGPU kernel (ORT copied the logits to the host for it); Pad's f16
    // shader failed to compile on lavapipe.
    assertEquals(ops.get("LogSoftmax") ?? 0, 0, `${dtype}: LogSoftmax`);
    assertEquals(ops.get("Pad") ?? 0, 0, `${dtype}: Pad`);
    // Two Expands: the zero keys/values and the bias's hidden columns. Every layer's keys and
    // values, and the bias once, are extended by them before attention.
    const expanded = new Set(graph.node.filter((n) => n.opType === "Expand").flatMap((n) => n.output));
    assertEquals(expanded.size, 2, `${dtype}: Expand outputs`);
    const aligned = graph.node.filter((n) => n.opType === "Concat" && expanded.has(n.input[1]));
    assertEquals(aligned.length, 2 * L + 1, `${dtype}: Concats onto the alignment`);
  }
});

Deno.test("decoder graph: f32 RMSNorms are one SimplifiedLayerNormalization each and RoPE one com.microsoft RotaryEmbedding for q and k (fewer dispatches per decoding step), f16 keeps the explicit ops", () => {
  for (const arch of ["qwen2", "qwen3"] as const) {
    const f32 = decode(arch, {});
    const L = f32.m.config.numLayers;
    // Two per layer and the final norm; Qwen3 adds q_norm and k_norm per layer. In f32 the norms
    // after a residual sum (all but the first layer's input norm) take the Add too.
    const norms = 2 * L + 1 + (arch === "qwen3" ? 2 * L : 0);
    assertEquals(
      f32.ops.get("SkipSimplifiedLayerNormalization") ?? 0,
      2 * L,
      `${arch} f32 norms with the residual add`,
    );
    assertEquals((f32.ops.get("SimplifiedLayerNormalization") ?? 0) + 2 * L, norms, `${arch} f32 norms`);
    // Left: the attention scores + mask bias per layer, and one int64 Add of the mask shape arithmetic.
    assertEquals(f32.ops.get("Add") ?? 0, L + 1, `${arch} f32 Adds: no residual or q/k/v bias Adds`);
    assertEquals(f32.ops.get("ReduceMean") ?? 0, 0, `${arch} f32 ReduceMean`);
    const f16 = decode(arch, { dtype: "f16" });
    assertEquals(f16.ops.get("SimplifiedLayerNormalization") ?? 0, 0, `${arch} f16 fused norms`);
    assertEquals(f16.ops.get("ReduceMean") ?? 0, norms, `${arch} f16 ReduceMean`);
    const rope = f32.graph.node.filter((n) => n.opType === "RotaryEmbedding");
    assertEquals(rope.length, 2 * L, `${arch} f32 RotaryEmbedding`);
    assert(
      rope.every((n) => n.domain === "com.microsoft" && n.input[1] === "position_ids"),
      `${arch}: RotaryEmbedding domain or positions`,
    );
    assertEquals(f16.ops.get("RotaryEmbedding") ?? 0, 0, `${arch} f16 RotaryEmbedding`);
  }
});

Deno.test("decoder graph: attention \"gqa\" is one com.microsoft GroupQueryAttention per layer with the explicit graph's inputs and outputs; explicit where ORT's GQA does not apply (head dim not a multiple of 8, f16)", () => {
  const explicit = decode("qwen2", {});
  const gqa = decode("qwen2", { attention: "gqa" });
  const L = gqa.m.config.numLayers;
  assertEquals([explicit.built.attention, gqa.built.attention], ["explicit", "gqa"]);
  assertEquals(gqa.ops.get("GroupQueryAttention"), L);
  assert(
    gqa.graph.node.filter((n) => n.opType === "GroupQueryAttention").every((n) => n.domain === "com.microsoft"),
    "GQA domain",
  );
  // No attention products, softmax or cache Concats left: MatMuls are the seven linears per layer.
  assertEquals(gqa.ops.get("Softmax") ?? 0, 0);
  // Qwen2's q/k/v have biases: those three are Gemms with the bias as C.
  assertEquals([gqa.ops.get("MatMul"), gqa.ops.get("Gemm")], [4 * L, 3 * L + 1]);
  assertEquals(gqa.ops.get("RotaryEmbedding"), 2 * L);
  assertEquals(gqa.graph.input.map((v) => v.name), explicit.graph.input.map((v) => v.name));
  assertEquals(gqa.graph.output.map((v) => v.name), explicit.graph.output.map((v) => v.name));
  assert(
    gqa.graph.node.length < explicit.graph.node.length - 10 * L,
    `${gqa.graph.node.length} nodes vs ${explicit.graph.node.length}`,
  );
  for (const [arch, dtype] of [["llama", "f32"], ["qwen3", "q4"], ["qwen2", "f16"]] as const) {
    const d = decode(arch, { attention: "gqa", dtype });
    assertEquals([d.built.attention, d.ops.get("GroupQueryAttention") ?? 0], ["explicit", 0], `${arch} ${dtype}`);
  }
  assertEquals(decode("qwen2", { attention: "gqa", dtype: "q4" }).built.attention, "gqa");
});

Deno.test("decoder graph: loraScale fixes alpha / r in the LoRA Gemms: no lora_scale input and no scaling Muls", () => {
  const L = 2;
  const input = decode("qwen2", { loraTargets: LORA_TARGETS });
  const fixed = decode("qwen2", { loraTargets: LORA_TARGETS, loraScale: 2 });
  assert(
    input.built.inputNames.includes("lora_scale") && !fixed.built.inputNames.includes("lora_scale"),
    "lora_scale input",
  );
  assertEquals(input.ops.get("Mul")! - fixed.ops.get("Mul")!, 4 * L);
  assertEquals(fixed.ops.get("Mul"), decode("qwen2", {}).ops.get("Mul"));
  assertEquals(fixed.ops.get("Gemm"), input.ops.get("Gemm"));
});

/** Every tensor type the graph declares or stores: initializers, inputs, outputs and Cast targets. */
function tensorTypes(bytes: Uint8Array): Set<number> {
  const g = onnx.ModelProto.decode(bytes).graph;
  if (!g) throw new Error("no graph");
  const types = new Set<number>();
  for (const t of g.initializer ?? []) types.add(t.dataType ?? 0);
  for (const v of [...(g.input ?? []), ...(g.output ?? []), ...(g.valueInfo ?? [])]) {
    types.add(v.type?.tensorType?.elemType ?? 0);
  }
  for (const n of g.node ?? []) {
    for (const a of n.attribute ?? []) {
      if (n.opType === "Cast" && a.name === "to") types.add(Number(a.i));
      if (a.t) types.add(a.t.dataType ?? 0);
    }
  }
  return types;
}

const FLOAT16 = 10;

Deno.test("decoder graph without shader-f16: no f16 tensor anywhere at f16 and q4; q4 keeps MatMulNBits on the projections, f32 embedding and head", () => {
  for (const arch of ["qwen2", "llama", "qwen3"] as const) {
    for (const dtype of ["f16", "q4"] as const) {
      const withF16 = decode(arch, { dtype, externalMinBytes: Infinity });
      assert(
        tensorTypes(withF16.built.bytes).has(FLOAT16),
        `${arch} ${dtype}: the f16 graph has f16 tensors (the check would prove nothing otherwise)`,
      );
      const noF16 = decode(arch, {
        dtype,
        externalMinBytes: Infinity,
        shaderF16: false,
        loraTargets: ["q_proj", "down_proj"],
      });
      const types = tensorTypes(noF16.built.bytes);
      assert(!types.has(FLOAT16), `${arch} ${dtype} without shader-f16: f16 tensors in the graph`);
      assertEquals(noF16.built.kvType, "float32");
      assert(noF16.built.precision.includes("no shader-f16"), noF16.built.precision);
      if (dtype === "q4") {
        const L = noF16.m.config.numLayers;
        assertEquals(noF16.ops.get("MatMulNBits"), 7 * L, `${arch}: the head is not q4 without f16`);
        const embed = noF16.graph.initializer.find((t) => t.name === "embed_tokens");
        assertEquals(embed?.dataType, 1);
      } else {
        // f16 weights are rounded to f16 values and stored as f32: every stored value is an f16 value.
        const g = onnx.ModelProto.decode(noF16.built.bytes).graph!;
        const wt = g.initializer!.find((t) => (t.name ?? "").endsWith("q_proj.weight_t"))!;
        const raw = wt.rawData!;
        const vals = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
        assert(vals.length > 0, "no q_proj weight");
        // Rounding an f16 value to f16 again changes nothing.
        assertEquals(Array.from(fromF16(toF16(vals))), Array.from(vals));
        assertEquals(noF16.ops.get("MatMulNBits") ?? 0, 0);
      }
    }
  }
});

Deno.test("decoder graph, staticDecode: fixed shapes, no Shape operator, GQA writes the present outputs and the head the logits (no copy node before an output), RoPE inside GQA at head sizes of 16s; the prefill form; needs GQA", () => {
  for (const dtype of ["f32", "q4"] as const) {
    for (const shaderF16 of [true, false]) {
      const st = decode("qwen2", {
        dtype,
        attention: "gqa",
        loraTargets: LORA_TARGETS,
        loraScale: 2,
        staticDecode: { batch: 5, maxT: 24 },
        shaderF16,
      });
      const L = st.m.config.numLayers;
      const kv = Array.from({ length: L }, (_, i) => [`past_key_values.${i}.key`, `past_key_values.${i}.value`]).flat();
      const names = st.graph.input.map((v) => v.name);
      assertEquals(names.filter((n) => !n.startsWith("lora.")), [
        "input_ids",
        "position_ids",
        ...kv,
        "seqlens_k",
        "total_sequence_length",
      ]);
      assertEquals(st.graph.output.map((v) => v.name), [
        "logits",
        ...kv.map((n) => n.replace("past_key_values", "present")),
      ]);
      assertEquals(st.ops.get("Shape") ?? 0, 0, `${dtype}: no Shape operator (nothing on the CPU)`);
      assertEquals(st.ops.get("Identity") ?? 0, 0, `${dtype}: no Identity`);
      const producer = (out: string) => st.graph.node.find((n) => n.output.includes(out))?.opType;
      assertEquals(
        producer("logits"),
        dtype === "q4" && shaderF16 ? "MatMulNBits" : "Gemm",
        `${dtype} f16 ${shaderF16}: logits`,
      );
      for (let i = 0; i < L; i++) assertEquals(producer(`present.${i}.key`), "GroupQueryAttention");
      // Past and present of a layer are the same GQA node's input and output (one buffer at run time).
      const gqa = st.graph.node.filter((n) => n.opType === "GroupQueryAttention");
      assertEquals(
        gqa.map((n) => [n.input[3], n.output[1]]),
        Array.from({ length: L }, (_, i) => [`past_key_values.${i}.key`, `present.${i}.key`]),
      );
    }
  }
  // RoPE: inside GQA (do_rotary, the cos / sin tables as its inputs 7 and 8) where the head size is a multiple of 16,
  // else RotaryEmbedding for q and k; the dynamic graph always rotates by the fed positions.
  for (const headDim of [8, 16]) {
    const m = makeTinyModel("qwen2", {
      seed: 1,
      hidden: 64,
      heads: 64 / headDim,
      kvHeads: 2,
      headDim,
      intermediate: 64,
    });
    for (const staticDecode of [{ batch: 3, maxT: 16 }, undefined]) {
      const g = onnx.ModelProto.decode(
        buildDecoder(m.config, m.weights, {
          dtype: "q4",
          kvCache: true,
          maxPositions: 16,
          attention: "gqa",
          staticDecode,
          externalMinBytes: Infinity,
        }).bytes,
      ).graph!;
      const inGqa = headDim === 16 && !!staticDecode;
      const rope = (g.node ?? []).filter((n) => n.opType === "RotaryEmbedding").length;
      const gqa = (g.node ?? []).filter((n) => n.opType === "GroupQueryAttention");
      assertEquals(rope, inGqa ? 0 : 2 * m.config.numLayers, `head dim ${headDim}, static ${!!staticDecode}`);
      for (const n of gqa) {
        assertEquals(Number(n.attribute?.find((a) => a.name === "do_rotary")?.i ?? 0), inGqa ? 1 : 0);
        assertEquals((n.input ?? [])[7] !== "" && (n.input ?? [])[7] !== undefined, inGqa);
      }
    }
  }
  // The prefill form (seq > 1): ids and positions (B, seq), `last_index` after the cache inputs, the head over the
  // Gather of each row's last token, still no Shape / Identity; seq outside 1..maxT is refused.
  for (const dtype of ["f32", "q4"] as const) {
    const pf = decode("qwen2", {
      dtype,
      attention: "gqa",
      loraTargets: LORA_TARGETS,
      loraScale: 2,
      staticDecode: { batch: 3, maxT: 12, seq: 12 },
      shaderF16: false,
    });
    const L = pf.m.config.numLayers;
    const kv = Array.from({ length: L }, (_, i) => [`past_key_values.${i}.key`, `past_key_values.${i}.value`]).flat();
    assertEquals(pf.graph.input.filter((v) => !v.name.startsWith("lora.")).map((v) => v.name), [
      "input_ids",
      "position_ids",
      ...kv,
      "seqlens_k",
      "total_sequence_length",
      "last_index",
    ]);
    const raw = onnx.ModelProto.decode(
      buildDecoder(pf.m.config, pf.m.weights, {
        dtype,
        kvCache: true,
        maxPositions: 16,
        attention: "gqa",
        staticDecode: { batch: 3, maxT: 12, seq: 12 },
        shaderF16: false,
        externalMinBytes: Infinity,
      }).bytes,
    ).graph!;
    const dims = (name: string) =>
      (raw.input ?? []).find((v) => v.name === name)!.type!.tensorType!.shape!.dim!.map((d) => Number(d.dimValue));
    assertEquals([dims("input_ids"), dims("position_ids"), dims("last_index"), dims("past_key_values.0.key")], [
      [3, 12],
      [3, 12],
      [3],
      [3, pf.m.config.numKvHeads, 12, pf.m.config.headDim],
    ]);
    assertEquals(
      [pf.ops.get("Shape") ?? 0, pf.ops.get("Identity") ?? 0],
      [0, 0],
      `${dtype} prefill: no Shape, no Identity`,
    );
    const head = pf.graph.node.find((n) => n.output.includes("logits"))!;
    assertEquals(
      pf.graph.node.find((n) => n.output.includes(head.input[0]))?.opType,
      "Gather",
      `${dtype} prefill: the head reads the gathered last tokens`,
    );
  }
  // headMatMul: the f32 head as MatMul over the transposed (C, V) copy, writing the logits itself.
  const hm = decode("qwen2", { dtype: "f32", attention: "gqa", staticDecode: { batch: 2, maxT: 8 }, headMatMul: true });
  assertEquals(hm.graph.node.find((n) => n.output.includes("logits"))?.opType, "MatMul");
  for (const seq of [0, 13, 2.5]) {
    let refused = false;
    try {
      decode("qwen2", { attention: "gqa", staticDecode: { batch: 2, maxT: 12, seq } });
    } catch (e) {
      refused = e instanceof Error && /seq must be an integer 1\.\.maxT/.test(e.message);
    }
    assert(refused, `seq ${seq} is refused`);
  }
  let threw = false;
  try {
    decode("llama", { attention: "gqa", staticDecode: { batch: 2, maxT: 8 } }); // head dim 6: no GQA
  } catch (e) {
    threw = e instanceof Error && /staticDecode needs attention "gqa"/.test(e.message);
  }
  assert(threw, "staticDecode without GQA is refused");
});

/** Gemms of layer i that read its LoRA inputs. */
const loraGemms = (d: ReturnType<typeof decode>, i: number) =>
  d.graph.node.filter((n) => n.opType === "Gemm" && n.input.some((x) => x.startsWith(`lora.${i}.`))).length;

/** A qwen2 decoding graph with q, v, gate and up adapted, k not: q/k/v partly adapted, gate/up wholly. */
const decodePartlyAdapted = (dtype: "q4" | "f32") =>
  decode("qwen2", {
    dtype,
    attention: "gqa",
    loraTargets: ["q_proj", "v_proj", "gate_proj", "up_proj"],
    loraScale: 2,
    staticDecode: { batch: 3, maxT: 16 },
  });

/** A graph with LoRA on every target stacks q/k/v and gate/up in every layer: layer 0's two stacks as LoraStack says. */
function assertLoraStacks(st: ReturnType<typeof decode>) {
  const { numLayers: L, hiddenSize: C, intermediateSize: I, numHeads: H, numKvHeads: K, headDim: D } = st.m.config;
  assertEquals(st.built.loraStacks?.[0], {
    name: "lora.0.qkv",
    fin: C,
    parts: [{ name: "lora.0.q", fout: H * D }, { name: "lora.0.k", fout: K * D }, { name: "lora.0.v", fout: K * D }],
    slices: 1,
  });
  assertEquals(st.built.loraStacks?.[1], {
    name: "lora.0.gate_up",
    fin: C,
    parts: [{ name: "lora.0.gate", fout: I }, { name: "lora.0.up", fout: I }],
    slices: 1,
  });
  assertEquals(st.built.loraStacks?.length, 2 * L);
}

Deno.test("decoder graph, staticDecode q4 stacking q/k/v and gate/up: with LoRA on every part, one stacked A and one block-diagonal B per group (2 LoRA Gemms a group, 8 a layer instead of 14); a partly adapted group keeps per-part inputs; other graphs keep per-target inputs", () => {
  for (const loraScale of [2, undefined]) {
    const o: Partial<DecoderOptions> = {
      dtype: "q4",
      attention: "gqa",
      loraTargets: LORA_TARGETS,
      loraScale,
      staticDecode: { batch: 3, maxT: 16 },
    };
    const st = decode("qwen2", o);
    const L = st.m.config.numLayers;
    for (let i = 0; i < L; i++) assertEquals(loraGemms(st, i), 8, `layer ${i}, loraScale ${loraScale}`);
    assertEquals(
      st.graph.input.map((v) => v.name).filter((n) => n.startsWith("lora.")),
      Array.from(
        { length: L },
        (_, i) => ["qkv", "gate_up", "o", "down"].flatMap((t) => [`lora.${i}.${t}.A`, `lora.${i}.${t}.B`]),
      )
        .flat(),
    );
    assertLoraStacks(st);
    // The graph without stacked products (decodeProducts "plain") and the dynamic graph: two Gemms per target.
    const plain = decode("qwen2", { ...o, decodeProducts: "plain" });
    const dyn = decode("qwen2", { ...o, staticDecode: undefined });
    for (const d of [plain, dyn]) {
      for (let i = 0; i < L; i++) assertEquals(loraGemms(d, i), 14);
      assert(d.graph.input.some((v) => v.name === "lora.0.q.A") && !d.graph.input.some((v) => v.name.includes("qkv")));
      assertEquals(d.built.loraStacks ?? [], []);
    }
  }
  // q and v adapted, k not: q/k/v keeps a pair of Gemms per adapted part; gate/up (both adapted) is stacked.
  const part = decodePartlyAdapted("q4");
  assertEquals(loraGemms(part, 0), 6);
  assertEquals(
    part.graph.input.map((v) => v.name).filter((n) => n.startsWith("lora.0.")),
    ["lora.0.gate_up.A", "lora.0.gate_up.B", "lora.0.q.A", "lora.0.q.B", "lora.0.v.A", "lora.0.v.B"],
  );
});

Deno.test("decoder graph, staticDecode f32 stacking q/k/v and gate/up: one product per group (Gemm with the stacked bias where the model has q/k/v biases), the stacked LoRA (8 Gemms a layer); per-part products for a partly adapted group, decodeProducts plain and the dynamic graph", () => {
  const weightOf = (n: { input: string[] }) =>
    n.input.find((x) => x.startsWith("model.layers.") && x.endsWith(".weight_t"));
  /** The product nodes of layer i, by the weight they read: `q_k_v`, `gate_up`, `o`, `down` or per part. */
  const products = (d: ReturnType<typeof decode>, i: number) =>
    d.graph.node.filter((n) =>
      (n.opType === "MatMul" || n.opType === "Gemm") && weightOf(n)?.startsWith(`model.layers.${i}.`)
    )
      .map((n) =>
        weightOf(n)!.slice(`model.layers.${i}.`.length, -".weight_t".length).replace(/^(mlp|self_attn)\./, "")
      );
  // qwen2 has q/k/v biases, llama none (head dim 8 there, so that GQA applies).
  const sizes = { llama: { hidden: 48, heads: 6, kvHeads: 2, headDim: 8, intermediate: 64 }, qwen2: {} };
  for (const arch of ["qwen2", "llama"] as const) {
    for (const loraScale of [2, undefined]) {
      const o: Partial<DecoderOptions> = {
        dtype: "f32",
        attention: "gqa",
        loraTargets: LORA_TARGETS,
        loraScale,
        staticDecode: { batch: 3, maxT: 16 },
      };
      const st = decode(arch, o, sizes[arch]);
      const L = st.m.config.numLayers;
      for (let i = 0; i < L; i++) {
        assertEquals(loraGemms(st, i), 8, `${arch} layer ${i}, loraScale ${loraScale}`);
        assertEquals(products(st, i).sort(), ["down_proj", "gate_up", "o_proj", "q_k_v"], `${arch} layer ${i}`);
      }
      // The stacked weight replaces the per-part ones (one copy in the graph), the bias goes in as Gemm's C.
      const inits = st.graph.initializer.map((t) => t.name);
      assert(inits.includes("model.layers.0.q_k_v.weight_t") && inits.includes("model.layers.0.gate_up.weight_t"));
      assert(!inits.some((n) => /\.(q|k|v|gate|up)_proj\.weight_t$/.test(n)), `${arch}: no per-part weight`);
      const qkv = st.graph.node.find((n) => n.input.includes("model.layers.0.q_k_v.weight_t"))!;
      assertEquals(qkv.opType, arch === "qwen2" ? "Gemm" : "MatMul", `${arch}: the q/k/v product`);
      if (arch === "qwen2") assertEquals(qkv.input[2], "model.layers.0.q_k_v.bias");
      assertEquals(
        st.graph.input.map((v) => v.name).filter((n) => n.startsWith("lora.0.")),
        ["qkv", "gate_up", "o", "down"].flatMap((t) => [`lora.0.${t}.A`, `lora.0.${t}.B`]),
      );
      assertLoraStacks(st);
      // decodeProducts "plain" and the dynamic graph (the policy's): a product and two Gemms per target.
      for (
        const d of [
          decode(arch, { ...o, decodeProducts: "plain" }, sizes[arch]),
          decode(arch, { ...o, staticDecode: undefined }, sizes[arch]),
        ]
      ) {
        for (let i = 0; i < L; i++) {
          assertEquals(loraGemms(d, i), 14);
          assertEquals(products(d, i).length, 7);
        }
        assertEquals(d.built.loraStacks ?? [], []);
      }
    }
  }
  // q and v adapted, k not: q/k/v keeps one product and a pair of Gemms per part; gate/up is stacked.
  const part = decodePartlyAdapted("f32");
  assertEquals(loraGemms(part, 0), 6);
  assertEquals(products(part, 0).sort(), ["down_proj", "gate_up", "k_proj", "o_proj", "q_proj", "v_proj"]);
  // No LoRA: both groups stacked.
  const none = decode("qwen2", { dtype: "f32", attention: "gqa", staticDecode: { batch: 3, maxT: 16 } });
  assertEquals(products(none, 0).sort(), ["down_proj", "gate_up", "o_proj", "q_k_v"]);
});

Deno.test("loraSplitK: the slice count whose width is a multiple of 4 nearest the slice width", () => {
  assertEquals(LORA_K_SLICE, 128);
  // Qwen2.5 0.5B (hidden 896, MLP 4864), 1.5B (1536, 8960), the demo model (384, 1024): 128 columns a slice.
  for (const [K, S] of [[896, 7], [4864, 38], [1536, 12], [8960, 70], [384, 3], [1024, 8]]) {
    assertEquals(loraSplitK(K), S, `K ${K}`);
  }
  // Narrower than a slice, or not a multiple of 4: one slice (the Gemm of x A^T as before).
  for (const K of [4, 64, 72, 128, 130, 897]) assertEquals(loraSplitK(K), 1, `K ${K}`);
  assertEquals(loraSplitK(192), 2); // 96 columns nearer 128 than 192
  // The tests' small slices: the tiny models' inputs split too.
  assertEquals([loraSplitK(48, 16), loraSplitK(64, 16), loraSplitK(72, 16)], [3, 4, 6]);
});

Deno.test("decoder graph, staticDecode decoding (seq 1): every LoRA A product split along K as one broadcast MatMul over packed inputs, the repeated B in the second Gemm (8 LoRA MatMul/Gemm nodes a layer, no ReduceSum, no Transpose); the prefill keeps one slice", () => {
  const slice = 16;
  for (const dtype of ["q4", "f32"] as const) {
    for (const loraScale of [2, undefined]) {
      const o: Partial<DecoderOptions> = {
        dtype,
        attention: "gqa",
        loraTargets: LORA_TARGETS,
        loraScale,
        staticDecode: { batch: 3, maxT: 16 },
        loraKSlice: slice,
      };
      const what = `${dtype}, loraScale ${loraScale}`;
      const st = decode("qwen2", o);
      const none = decode("qwen2", { ...o, loraTargets: [] });
      const { numLayers: L, hiddenSize: C, intermediateSize: I, numHeads: H, numKvHeads: K, headDim: D } = st.m.config;
      const [Sc, Si] = [loraSplitK(C, slice), loraSplitK(I, slice)];
      assertEquals([Sc, Si], [3, 6]);
      const names = ["qkv", "gate_up", "o", "down"];
      for (let i = 0; i < L; i++) {
        const reads = st.graph.node.filter((n) => n.input.some((x) => x.startsWith(`lora.${i}.`)));
        // x A^T: one MatMul over the packed A; then the B Gemm: 2 nodes a group or target, 8 a layer.
        assertEquals(reads.map((n) => n.opType).sort(), [...new Array(4).fill("Gemm"), ...new Array(4).fill("MatMul")]);
        for (const n of reads.filter((n) => n.opType === "MatMul")) assert(n.input[1].endsWith(".split.A"), what);
        for (const n of reads.filter((n) => n.opType === "Gemm")) {
          assert(n.input[1].endsWith(".split.B") && n.attrs.transB === 1, `${what}: the B Gemm with transB`);
        }
      }
      // Against the graph without LoRA: 8 products a layer, the Muls of lora_scale (one per linear input: q/k/v,
      // o, gate/up, down) where it is fed; the rest are Reshapes (views). No ReduceSum, no Transpose.
      const added = (op: string) => (st.ops.get(op) ?? 0) - (none.ops.get(op) ?? 0);
      assertEquals([added("MatMul"), added("Gemm")], [4 * L, 4 * L], what);
      assertEquals(added("Mul"), loraScale === undefined ? 4 * L : 0, what);
      const other = [...st.ops.keys()].filter((op) => !["MatMul", "Gemm", "Mul", "Reshape"].includes(op));
      for (const op of other) assertEquals(added(op), 0, `${what}: ${op}`);
      assertEquals(st.ops.get("ReduceSum") ?? 0, 0, what);
      assertEquals(st.ops.get("Transpose") ?? 0, 0, what);
      // Inputs: A (S, in / S, r), B (out, S r) per group or target, in the order groups, then o and down.
      const lora = st.graph.input.filter((v) => v.name.startsWith("lora.0."));
      assertEquals(lora.map((v) => v.name), names.flatMap((t) => [`lora.0.${t}.split.A`, `lora.0.${t}.split.B`]));
      const dims = Object.fromEntries(lora.map((v) => [v.name, v.dims]));
      assertEquals(dims["lora.0.qkv.split.A"], [Sc, C / Sc, "r_0_qkv"]);
      assertEquals(dims["lora.0.qkv.split.B"], [(H + 2 * K) * D, `${Sc}r_0_qkv`]);
      assertEquals(dims["lora.0.down.split.A"], [Si, I / Si, "r_0_down"]);
      assertEquals(dims["lora.0.down.split.B"], [C, `${Si}r_0_down`]);
      assertEquals(st.built.loraStacks?.length, 4 * L);
      assertEquals(st.built.loraStacks?.slice(0, 4), [
        {
          name: "lora.0.qkv.split",
          fin: C,
          parts: [{ name: "lora.0.q", fout: H * D }, { name: "lora.0.k", fout: K * D }, {
            name: "lora.0.v",
            fout: K * D,
          }],
          slices: Sc,
        },
        {
          name: "lora.0.gate_up.split",
          fin: C,
          parts: [{ name: "lora.0.gate", fout: I }, { name: "lora.0.up", fout: I }],
          slices: Sc,
        },
        { name: "lora.0.o.split", fin: H * D, parts: [{ name: "lora.0.o", fout: C }], slices: Sc },
        { name: "lora.0.down.split", fin: I, parts: [{ name: "lora.0.down", fout: C }], slices: Si },
      ]);
      // Unstacked products ("plain"): a packed pair per target, still 2 nodes each.
      const plain = decode("qwen2", { ...o, decodeProducts: "plain" });
      assertEquals(plain.built.loraStacks?.length, 7 * L);
      assertEquals(plain.graph.node.filter((n) => n.input.some((x) => x.endsWith(".split.A"))).length, 7 * L);
      // The prefill (seq > 1) and the policy's own graph: one slice, as before (stacked groups, per-target o and down).
      const pf = decode("qwen2", { ...o, staticDecode: { batch: 3, maxT: 16, seq: 16 } });
      assertEquals(
        pf.graph.input.map((v) => v.name).filter((n) => n.startsWith("lora.0.")),
        names.flatMap((t) => [`lora.0.${t}.A`, `lora.0.${t}.B`]),
      );
      assert(pf.built.loraStacks?.every((s) => s.slices === 1), "prefill: one slice");
      assertEquals(loraGemms(pf, 0), 8);
      const dyn = decode("qwen2", { ...o, staticDecode: undefined });
      assertEquals(dyn.built.loraStacks ?? [], []);
      assertEquals(loraGemms(dyn, 0), 14);
    }
  }
});
