// The browser environment under Deno, against a local HTTP server: demo data, SQL, schemas and
// the demo model over HTTP with relative URLs; uploaded datasets.
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { defaultParams } from "../../core/notebook.ts";
import { randomAdapter } from "../../model/lora.ts";
import { peftFiles, readPeftAdapter } from "../../model/peft.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { writeHfFolder } from "../../model/tiny.deno.ts";
import { MemoryStore } from "../store.ts";
import { webEnv } from "./env.web.ts";
import { writeTinyDataset } from "./fixtures.deno.ts";

Deno.test({
  name: "recipe/env.web: demo data, SQL, schemas and the demo model over HTTP; uploads",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-web-" });
    await writeTinyDataset(`${dir}/data`);
    const tiny = makeTinyModel("qwen2", { seed: 4 });
    await writeHfFolder(`${dir}/model`, tiny);
    const demo = new URL("../../../public/demo/", import.meta.url).pathname;
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
      const path = decodeURIComponent(new URL(req.url).pathname).replace(/^\/app\//, "");
      if (path.includes("..")) return new Response("bad path", { status: 400 });
      const file = path.startsWith("demo/") ? demo + path.slice(5) : `${dir}/${path}`;
      try {
        const bytes = await Deno.readFile(file);
        return new Response(req.method === "HEAD" ? null : bytes, {
          headers: { "content-length": String(bytes.byteLength) },
        });
      } catch {
        return new Response("not found", { status: 404 });
      }
    });
    const env = webEnv({ baseUrl: `http://127.0.0.1:${server.addr.port}/app`, store: new MemoryStore() });
    try {
      const demoCell = { ...defaultParams("dataset"), source: "demo" as const, format: "rlvr" as const };
      const d = await env.loadDataset(demoCell);
      assertEquals(Object.fromEntries(Object.entries(d.splits).map(([k, v]) => [k, v.length])), {
        train: 240,
        "test-concepts": 96,
        "test-templates": 64,
        "heldout-db": 48,
        "test-written": 107,
      });
      const sql = env.sqlRunner(demoCell);
      try {
        const r = await sql.query("shop", "SELECT count(*) FROM customers");
        assert(r.ok, r.ok ? "" : r.error.message);
        assertEquals(r.result.rows, [[1500n]]);
      } finally {
        sql.close();
      }
      const schema = await env.schemaOf(demoCell, "shop");
      assertEquals(schema.tables.map((t) => t.name).sort(), [
        "customers",
        "order_items",
        "orders",
        "products",
        "returns",
      ]);

      const urlCell = {
        ...defaultParams("dataset"),
        source: "url" as const,
        format: "rlvr" as const,
        questionsUrl: "data/train.jsonl",
        dbRoot: "data",
      };
      assertEquals((await env.loadDataset(urlCell)).splits.train.length, 8);
      assertEquals((await env.schemaOf(urlCell, "pets")).tables.map((t) => t.name), ["pets"]);

      const m = await env.loadModel({ ...defaultParams("model"), source: "demo" });
      assertEquals([m.name, m.config], ["demo", tiny.config]);
      const u = await env.loadModel("model");
      assertEquals(u.config, tiny.config);

      const uploads = {
        questions: await Deno.readTextFile(`${dir}/data/test.jsonl`),
        databases: new Map([["pets", await Deno.readFile(`${dir}/data/pets/pets.sqlite`)]]),
      };
      const up = webEnv({ baseUrl: "http://127.0.0.1:9/", store: new MemoryStore(), uploads });
      const upCell = { ...defaultParams("dataset"), source: "upload" as const, split: "test" };
      assertEquals((await up.loadDataset(upCell)).splits.test.map((t) => t.id), ["s0", "s1", "s2", "s3"]);
      assertEquals((await up.schemaOf(upCell, "pets")).tables[0].columns.map((c) => c.name), [
        "id",
        "name",
        "kind",
        "age",
      ]);
      await assertRejects(() => up.schemaOf(upCell, "nope"), /database nope was not uploaded/);
    } finally {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "recipe/env.web: a missing demo model says so (a 404, or a server answering with the page)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    for (const answer of ["404", "page"] as const) {
      const server = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        () =>
          answer === "404"
            ? new Response("not found", { status: 404 })
            : new Response("<!doctype html><title>RLVR Lab</title>", { headers: { "content-type": "text/html" } }),
      );
      try {
        const env = webEnv({ baseUrl: `http://127.0.0.1:${server.addr.port}/app/`, store: new MemoryStore() });
        await assertRejects(
          () => env.loadModel({ ...defaultParams("model"), source: "demo" }),
          /the demo model is not in this build: nothing loadable at http:\/\/127\.0\.0\.1:\d+\/app\/model\//,
        );
        // Other sources keep their own errors.
        await assertRejects(
          () => env.loadModel({ ...defaultParams("model"), source: "url", url: "elsewhere" }),
          /^(?!the demo model)/,
        );
      } finally {
        await server.shutdown();
      }
    }
  },
});

Deno.test({
  name: "recipe/env.web: a model cell's adapter resolves against the app's base and reads over HTTP as a PEFT folder",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const cfg = makeTinyModel("qwen2", { seed: 1 }).config;
    const adapter = randomAdapter(cfg, { r: 2, alpha: 4, targets: ["q_proj", "up_proj"], seed: 5 });
    const files = peftFiles(adapter);
    const seen: string[] = [];
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
      const path = new URL(req.url).pathname;
      seen.push(path);
      const name = path.startsWith("/app/runs/r1/adapter/") ? path.slice("/app/runs/r1/adapter/".length) : "";
      const body = files.get(name);
      return body ? new Response(body.slice().buffer) : new Response("not found", { status: 404 });
    });
    try {
      const env = webEnv({ baseUrl: `http://127.0.0.1:${server.addr.port}/app/`, store: new MemoryStore() });
      const { source, where } = env.adapterSource("runs/r1/adapter/");
      assertEquals(where, `http://127.0.0.1:${server.addr.port}/app/runs/r1/adapter/`);
      const got = await readPeftAdapter(source, cfg);
      assertEquals([got.r, got.alpha, got.targets], [2, 4, ["q_proj", "up_proj"]]);
      for (const [k, t] of adapter.tensors) assertEquals(Array.from(got.tensors.get(k)!.data), Array.from(t.data), k);
      assert(
        seen.includes("/app/runs/r1/adapter/adapter_config.json") &&
          seen.includes("/app/runs/r1/adapter/adapter_model.safetensors"),
        seen.join(", "),
      );
      await assertRejects(
        () => readPeftAdapter(env.adapterSource("runs/none").source),
        /adapter_config\.json not found/,
      );
    } finally {
      await server.shutdown();
    }
  },
});
