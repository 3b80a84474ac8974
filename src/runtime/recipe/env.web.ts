// The run environment of the page's GPU worker: outputs in a FileStore (OPFS), datasets and
// models over HTTP (relative URLs against the app's base), uploaded files, SQL through the worker
// pool, schemas through sql.js in this worker, the GPU from navigator.gpu. No DOM and no Deno API:
// it runs in a worker, and under Deno for tests.
import { parseSpiderTables, type SpiderTablesEntry } from "../../core/descriptions.ts";
import { DEMO_SPLITS } from "../../core/demo.ts";
import { parseQuestions } from "../../core/loaders.ts";
import type { DatasetParams, ModelParams } from "../../core/notebook-params.ts";
import type { Task } from "../../core/types.ts";
import { requestGpu } from "../../gpu/device.ts";
import { loadHfModel } from "../../model/hf.ts";
import { type ByteCache, hubSource, UrlSource } from "../../model/source.web.ts";
import type { SqlJsModule } from "../sql-exec.ts";
import { SqlPool } from "../sql-pool.ts";
import { loadSqlJs } from "../sql-wasm.ts";
import type { FileStore } from "../store.ts";
import type { RunEnv } from "./context.ts";
import { loadSchema } from "./schema-load.ts";

/** Files the user gave the page for a dataset cell with source "upload". */
export interface UploadedDataset {
  /** The questions file's text (BIRD, Spider or own JSONL). */
  questions: string;
  /** Database bytes by db_id (the environment's own: its readers copy them, never change them). */
  databases: Map<string, Uint8Array>;
}

/** What a dataset cell with source "upload" says when it has no files (the page checks first: run-plan.ts). */
const NO_UPLOAD_MESSAGE = "upload a questions file and its databases in the dataset cell first";

/** How the browser environment is built. */
export interface WebEnvOptions {
  /** Base URL of the app's public files: the demo data at `demo/`, the demo model at `model/`. */
  baseUrl: string;
  store: FileStore;
  /** sql.js's wasm URL (the browser build); omitted under Deno. */
  wasmUrl?: string;
  sqlWorkers?: number;
  /**
   * Where files of "hub" and "url" model cells are kept between runs (OPFS in the page). The demo
   * model (same origin, rebuilt with the app) is left to the HTTP cache.
   */
  modelCache?: ByteCache;
  uploads?: UploadedDataset;
  fetch?: typeof fetch;
  /** The GPUDevice to train on (the GPU worker's one device); default: a device of its own. */
  gpuDevice?: () => Promise<GPUDevice>;
}

const isHttp = (s: string) => /^https?:\/\//i.test(s);

/** The environment of a run hosted by the page (or any worker with fetch and WebGPU). */
export function webEnv(o: WebEnvOptions): RunEnv {
  const doFetch = o.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const base = o.baseUrl.endsWith("/") ? o.baseUrl : o.baseUrl + "/";
  const resolve = (u: string) => new URL(u, base).href;
  const get = async (url: string): Promise<Response> => {
    const r = await doFetch(url);
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
    return r;
  };
  const tasksAt = async (url: string): Promise<Task[]> => {
    const q = parseQuestions(await (await get(url)).text());
    if (q.items.length === 0) throw new Error(`${url}: no questions`);
    return q.items.map((i) => i.task);
  };
  const dbLoader = (p: DatasetParams): (dbId: string) => Promise<Uint8Array> => {
    if (p.source === "upload") {
      // No copy here: the SQL pool copies when it posts to a worker, sql.js when it opens a file.
      return (dbId) => {
        const bytes = o.uploads?.databases.get(dbId);
        return bytes
          ? Promise.resolve(bytes)
          : Promise.reject(new Error(`database ${dbId} was not uploaded: ${NO_UPLOAD_MESSAGE}`));
      };
    }
    const root = p.source === "demo" ? resolve("demo") : resolve(p.dbRoot ?? "");
    return async (dbId) =>
      new Uint8Array(
        await (await get(`${root.replace(/\/+$/, "")}/${encodeURIComponent(dbId)}/${encodeURIComponent(dbId)}.sqlite`))
          .arrayBuffer(),
      );
  };
  let sqlJs: Promise<SqlJsModule> | null = null;
  let gpu: Promise<GPUDevice> | null = null;
  const tables = new Map<string, Promise<SpiderTablesEntry[]>>();
  const modelOf = (which: ModelParams | string) => {
    const cache = o.modelCache;
    const url = (u: string) => new UrlSource(u, { cache, fetch: doFetch, label: u });
    const demo = () => new UrlSource(resolve("model"), { fetch: doFetch, label: resolve("model") });
    if (typeof which !== "string") {
      switch (which.source) {
        case "demo":
          return { source: demo(), name: "demo" };
        case "hub":
          if (!which.repo) throw new Error("model cell: repo is required");
          return {
            source: hubSource(which.repo, { revision: which.revision, cache, fetch: doFetch }),
            name: which.repo,
          };
        case "url":
          if (!which.url) throw new Error("model cell: url is required");
          return { source: url(resolve(which.url)), name: which.url };
      }
    }
    if (which === "demo") return { source: demo(), name: "demo" };
    if (!isHttp(which) && /^[\w.-]+\/[\w.-]+$/.test(which)) {
      return { source: hubSource(which, { cache, fetch: doFetch }), name: which };
    }
    return { source: url(resolve(which)), name: which };
  };
  return {
    store: o.store,
    now: () => Date.now(),
    async loadDataset(p) {
      if (p.source === "demo") {
        const splits: Record<string, Task[]> = {};
        for (const s of DEMO_SPLITS) splits[s] = await tasksAt(resolve(`demo/${s}.jsonl`));
        return { splits, describe: "demo" };
      }
      if (p.source === "upload") {
        if (!o.uploads) throw new Error(`dataset cell (source "upload"): ${NO_UPLOAD_MESSAGE}`);
        return {
          splits: { [p.split]: parseQuestions(o.uploads.questions).items.map((i) => i.task) },
          describe: "uploaded files",
        };
      }
      if (!p.questionsUrl) throw new Error("dataset cell: questionsUrl is required");
      return { splits: { [p.split]: await tasksAt(resolve(p.questionsUrl)) }, describe: resolve(p.questionsUrl) };
    },
    sqlRunner(p) {
      return new SqlPool({ loadDatabase: dbLoader(p), wasmUrl: o.wasmUrl, workers: o.sqlWorkers ?? 2 });
    },
    async schemaOf(p, dbId) {
      sqlJs ??= loadSqlJs(o.wasmUrl);
      let entries: Promise<SpiderTablesEntry[]> | null = null;
      if (p.tablesUrl) {
        const where = resolve(p.tablesUrl);
        entries = tables.get(where) ?? get(where).then(async (r) => parseSpiderTables(await r.json()));
        tables.set(where, entries);
      }
      return loadSchema(await sqlJs, await dbLoader(p)(dbId), dbId, entries ? await entries : null);
    },
    async loadModel(which, lo) {
      const { source, name } = modelOf(which);
      const isDemo = which === "demo" || (typeof which !== "string" && which.source === "demo");
      try {
        return { ...(await loadHfModel(source, lo)), name };
      } catch (e) {
        if (!isDemo || lo?.signal?.aborted) throw e;
        // The demo model ships later (docs/demo-model.md); say so rather than a bare 404 or a
        // JSON error from a server that answers missing files with the page.
        const why = e instanceof Error ? e.message : String(e);
        throw new Error(
          `the demo model is not in this build: nothing loadable at ${
            resolve("model/")
          } (${why}). Use a model cell with source "url" or "hub", or add the demo model's files there`,
          { cause: e },
        );
      }
    },
    adapterSource(ref) {
      // Not through the model-file cache: an adapter is small, and a run folder's adapter/ changes.
      const where = resolve(ref);
      return { source: new UrlSource(where, { fetch: doFetch, label: where }), where };
    },
    gpuDevice() {
      if (o.gpuDevice) return o.gpuDevice();
      gpu ??= requestGpu().then((g) => g.device);
      return gpu;
    },
  };
}
