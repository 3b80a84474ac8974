// Hostile and careless model folders (issue 47 items 4, 5 and 13): each refused before any work,
// with a message naming the file, the folder and the tensor or field.
import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import { parseConfig } from "./config.ts";
import { loadHfModel } from "./hf.ts";
import { loraKey, randomAdapter } from "./lora.ts";
import { peftFiles, readPeftAdapter } from "./peft.ts";
import { encodeTensor, type RawTensor, weightsToSafetensors, writeSafetensors } from "./safetensors.ts";
import { MemorySource } from "./source.ts";
import { hfFolderFiles, makeTinyModel } from "./tiny.ts";
import type { Weights } from "./tensor.ts";

const m = makeTinyModel("qwen2", { seed: 47 });
const enc = new TextEncoder();

function folder(
  over: { config?: Record<string, unknown>; weights?: Uint8Array; tokenizer?: unknown } = {},
): MemorySource {
  const files = hfFolderFiles(m);
  if (over.config) files.set("config.json", enc.encode(JSON.stringify({ ...m.configJson, ...over.config })));
  if (over.weights) files.set("model.safetensors", over.weights);
  if (over.tokenizer !== undefined) files.set("tokenizer.json", enc.encode(JSON.stringify(over.tokenizer)));
  return new MemorySource(files, "hostile");
}

function poisoned(name: string, index: number, value: number): Weights {
  const w: Weights = new Map([...m.weights].map(([k, t]) => [k, { shape: t.shape, data: t.data.slice() }]));
  w.get(name)!.data[index] = value;
  return w;
}

Deno.test("config.json: sizes are positive integers within bounds and constants positive, refused before any weight is read (issue 47 item 5)", async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ num_hidden_layers: 1e8 }, /num_hidden_layers is 100000000; it must be an integer from 1 to 1024/],
    [{ num_hidden_layers: 2.5 }, /num_hidden_layers is 2\.5; it must be an integer/],
    [{ num_hidden_layers: 0 }, /num_hidden_layers is 0/],
    [{ hidden_size: -48 }, /hidden_size is -48/],
    [{ vocab_size: 1e12 }, /vocab_size is 1000000000000/],
    [{ intermediate_size: 1.5 }, /intermediate_size is 1\.5/],
    [{ num_key_value_heads: 12 }, /num_key_value_heads is 12; it must be an integer from 1 to 6/],
    [{ max_position_embeddings: 0 }, /max_position_embeddings is 0/],
    [{ rope_theta: 0 }, /rope_theta is 0; it must be a positive number/],
    [{ rope_theta: -10000 }, /rope_theta is -10000/],
    [{ rms_norm_eps: 0 }, /rms_norm_eps is 0/],
    [{ rope_scaling: { rope_type: "linear", factor: -2 } }, /factor is -2/],
  ];
  for (const [over, pattern] of cases) {
    await assertRejects(() => parseConfig({ ...m.configJson, ...over }), pattern);
    // Through the loader: refused with the folder named, and no weights read (they are poison here).
    const e = await assertRejects(
      () => loadHfModel(folder({ config: over, weights: new Uint8Array([1, 2, 3]) })),
      pattern,
    );
    assert(e.message.includes("memory folder hostile"), e.message);
  }
});

Deno.test("weights: tensors of layers past num_hidden_layers are refused, not silently dropped (issue 47 item 5)", async () => {
  await assertRejects(
    () => loadHfModel(folder({ config: { num_hidden_layers: 1 } })),
    /memory folder hostile: weights: tensor model\.layers\.1\.\S+ belongs to layer 1, but config\.json has num_hidden_layers 1/,
  );
});

Deno.test("weights: NaN or Inf in model weights and adapters is refused naming the tensor (issue 47 item 4)", async () => {
  const name = "model.layers.1.mlp.down_proj.weight";
  for (const [value, shown] of [[NaN, "NaN"], [Infinity, "Infinity"], [-Infinity, "-Infinity"]] as const) {
    for (const dtype of ["F32", "BF16", "F16"] as const) {
      const bytes = weightsToSafetensors(poisoned(name, 5, value), dtype);
      await assertRejects(
        () => loadHfModel(folder({ weights: bytes })),
        new RegExp(
          `memory folder hostile: model\\.safetensors: tensor ${
            name.replaceAll(".", "\\.")
          } holds ${shown} at element 5`,
        ),
      );
    }
  }
  // F64 beyond f32's range becomes Inf in float32: refused as well.
  const raw = new Map<string, RawTensor>([...m.weights].map(([k, t]) => [k, encodeTensor(t)]));
  const big = new Float64Array(4).fill(1e300);
  raw.set("model.norm.weight", { dtype: "F64", shape: [4], bytes: new Uint8Array(big.buffer) });
  await assertRejects(
    () => loadHfModel(folder({ weights: writeSafetensors(raw) })),
    /tensor model\.norm\.weight holds Infinity/,
  );
  // An adapter.
  const a = randomAdapter(m.config, { r: 2, alpha: 4, targets: ["q_proj", "v_proj"], seed: 1 });
  a.tensors.get(loraKey(0, "v_proj", "B"))!.data[3] = NaN;
  await assertRejects(
    () => readPeftAdapter(new MemorySource(peftFiles(a), "nan-adapter"), m.config),
    /nan-adapter: adapter_model\.safetensors: tensor .*layers\.0\.self_attn\.v_proj\.lora_B\.weight holds NaN at element 3/,
  );
});

Deno.test("messages: I32 tensors are not 'missing'; a broken tokenizer names its folder; an adapter for layers the model lacks is refused (issue 47 item 13)", async () => {
  const raw = new Map<string, RawTensor>([...m.weights].map(([k, t]) => [k, encodeTensor(t)]));
  const name = "model.layers.0.self_attn.q_proj.weight";
  const t = m.weights.get(name)!;
  raw.set(name, { dtype: "I32", shape: t.shape, bytes: new Uint8Array(new Int32Array(t.data.length).buffer) });
  await assertRejects(
    () => loadHfModel(folder({ weights: writeSafetensors(raw) })),
    new RegExp(`tensor ${name.replaceAll(".", "\\.")} is stored as I32; weights must be a floating type`),
  );
  const e = await assertRejects(
    () => loadHfModel(folder({ tokenizer: { model: { type: "Nonsense" } } })),
    /tokenizer\.json in memory folder hostile cannot be used/,
  );
  assert(e.message.length < 400, e.message);
  // An adapter trained on a deeper model: `rlvr sample --adapter` reads it with readPeftAdapter(src, cfg).
  const deeper = makeTinyModel("qwen2", { seed: 47, layers: 3 });
  const a = randomAdapter(deeper.config, { r: 2, alpha: 4, targets: ["q_proj"], seed: 2 });
  await assertRejects(
    () => readPeftAdapter(new MemorySource(peftFiles(a), "deep"), m.config),
    /deep: LoRA adapter: 2 tensor\(s\) have no place in this model, e\.g\. .*layers\.2\..* \(layer 2; the model has 2 layers/,
  );
  assertEquals((await readPeftAdapter(new MemorySource(peftFiles(a), "deep"), deeper.config)).tensors.size, 6);
});
