// The model cell's load summary: checkpoint facts counted from a tiny model's tensors against the
// parameter count worked out by hand from its config, the rows the page shows and the log line of
// `rlvr run`, and the bytes a load downloaded vs took from the cache.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { loadHfModel } from "../../model/hf.ts";
import { memoryCache, UrlSource } from "../../model/source.web.ts";
import { hfFolderFiles, makeTinyModel } from "../../model/tiny.ts";
import {
  checkpointFacts,
  formatBytes,
  formatCount,
  type ModelSummary,
  summaryLine,
  summaryRows,
} from "./model-summary.ts";

/** Parameters of a Qwen2/Llama decoder from its config alone. */
function byHand(c: ReturnType<typeof makeTinyModel>["config"]): number {
  const H = c.hiddenSize, q = c.numHeads * c.headDim, kv = c.numKvHeads * c.headDim;
  const attn = H * q + 2 * H * kv + q * H + (c.attentionBias ? q + 2 * kv : 0) + (c.qkNorm ? 2 * c.headDim : 0);
  const mlp = 3 * H * c.intermediateSize;
  const layer = attn + mlp + 2 * H;
  return c.vocabSize * H * (c.tieWordEmbeddings ? 1 : 2) + c.numLayers * layer + H;
}

Deno.test("model summary: checkpoint facts of tiny qwen2 (tied, biases), llama (untied) and qwen3 (qk-norm)", () => {
  for (const arch of ["qwen2", "llama", "qwen3"] as const) {
    const m = makeTinyModel(arch, { seed: 1, layers: 3 });
    const f = checkpointFacts(m.config, m.weights);
    assertEquals(f, {
      arch,
      layers: 3,
      hidden: m.config.hiddenSize,
      parameters: byHand(m.config),
      vocab: m.config.vocabSize,
      maxPositionEmbeddings: m.config.maxPositionEmbeddings,
    }, arch);
  }
});

Deno.test("model summary: rows and log line carry every fact", () => {
  const m = makeTinyModel("qwen2", { seed: 1 });
  const s: ModelSummary = {
    name: "demo",
    source: "http://x/model",
    ...checkpointFacts(m.config, m.weights),
    dtype: "q4",
    lora: { rank: 8, alpha: 16, targets: ["q_proj", "v_proj"] },
    policyProvider: "webgpu",
    trainerProjections: "q4",
    contextLength: 2048,
    loadMs: 1234,
    transferred: { downloadedBytes: 3 << 20, cachedBytes: 2048, viaCache: true },
  };
  const rows = Object.fromEntries(summaryRows(s));
  assertEquals(rows["model"], "demo (http://x/model)");
  assertEquals(rows["architecture"], `qwen2, 2 layers, hidden ${m.config.hiddenSize}`);
  assertEquals(rows["parameters"], formatCount(byHand(m.config)));
  assertEquals(rows["weights as run"], "q4");
  assertEquals(rows["LoRA"], "rank 8, alpha 16 on q_proj, v_proj");
  assertEquals(rows["adapter"], "fresh (B = 0: the policy starts as the base model)");
  const imported = { ...s, lora: { ...s.lora, imported: { from: "/runs/a/adapter", targets: ["q_proj"] } } };
  assertEquals(
    Object.fromEntries(summaryRows(imported))["adapter"],
    "imported from /runs/a/adapter (on q_proj; v_proj start fresh, B = 0)",
  );
  assertEquals(
    Object.fromEntries(
      summaryRows({ ...s, lora: { ...s.lora, imported: { from: "u", targets: ["q_proj", "v_proj"] } } }),
    )["adapter"],
    "imported from u",
  );
  assert(summaryLine(imported).includes("on 2 targets imported from /runs/a/adapter"), summaryLine(imported));
  assertEquals(rows["policy runs on"], "webgpu");
  assertEquals(rows["trainer projections"], "q4");
  assertEquals(rows["context length"], "2048 tokens (max positions 2048)");
  assertEquals(rows["load time"], "1.2 s");
  assertEquals(rows["files"], "3.0 MB downloaded, 2 KB from the browser's model-file cache");
  const line = summaryLine(s);
  assert(line.startsWith("model demo: qwen2, 2 layers, policy on webgpu ("), line);
  for (
    const part of [
      "weights as run q4,",
      "LoRA r=8 alpha=16 on 2 targets",
      "trainer q4 projections",
      "context 2048",
      "3.0 MB downloaded / 2 KB cached",
    ]
  ) assert(line.includes(part), `${part} in ${line}`);
  // The demo model (no model-file cache): what came over HTTP, without claiming a cache split.
  assert(
    Object.fromEntries(
      summaryRows({ ...s, transferred: { downloadedBytes: 4096, cachedBytes: 0, viaCache: false } }),
    )["files"].startsWith("4 KB fetched over HTTP (this source has no model-file cache"),
  );
  // A folder on disk: no bytes row.
  assertEquals(summaryRows({ ...s, transferred: null }).some(([k]) => k === "files"), false);
  assertEquals([formatCount(494_032_768), formatCount(1_543_714_304), formatCount(812), formatBytes(512)], [
    "494.0M",
    "1.54B",
    "812",
    "512 B",
  ]);
});

Deno.test("model summary: a load over HTTP counts bytes downloaded, then bytes from the cache", async () => {
  const files = hfFolderFiles(makeTinyModel("qwen2", { seed: 2 }));
  const base = "https://models.example/tiny";
  const fetchFn = ((input: RequestInfo | URL, init?: RequestInit) => {
    const f = files.get(String(input).slice(base.length + 1));
    if (!f) return Promise.resolve(new Response("no", { status: 404 }));
    const headers = { "content-length": String(f.byteLength), etag: `"${f.byteLength}"` };
    return Promise.resolve(new Response(init?.method === "HEAD" ? null : f.slice(), { headers }));
  }) as typeof fetch;
  const total = [...files.values()].reduce((n, b) => n + b.byteLength, 0);
  const cache = memoryCache();
  const first = await loadHfModel(new UrlSource(base, { cache, fetch: fetchFn }));
  assertEquals(first.transferred, { downloadedBytes: total, cachedBytes: 0, viaCache: true });
  const second = await loadHfModel(new UrlSource(base, { cache, fetch: fetchFn }));
  assertEquals(second.transferred, { downloadedBytes: 0, cachedBytes: total, viaCache: true });
  console.log(`tiny qwen2: ${total} bytes downloaded, then ${total} from the cache`);
});
