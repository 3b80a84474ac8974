// The run environment under Deno: outputs in a directory, datasets and models from the demo, a
// URL or a local path (relative paths resolve against the notebook's folder), SQL through the
// worker pool, schemas through sql.js in process, and the GPU from navigator.gpu.
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseSpiderTables, type SpiderTablesEntry } from "../../core/descriptions.ts";
import { DEMO_SPLITS } from "../../core/demo.ts";
import { parseQuestions, requireQuestions } from "../../core/loaders.ts";
import type { DatasetParams, ModelParams } from "../../core/notebook-params.ts";
import type { Task } from "../../core/types.ts";
import { requestGpu } from "../../gpu/device.ts";
import { FileRefusedError, readTextBounded } from "../../model/files.deno.ts";
import { type HfModel, loadHfModel } from "../../model/hf.ts";
import { DirSource } from "../../model/source.deno.ts";
import type { ModelSource } from "../../model/source.ts";
import { hubSource, UrlSource } from "../../model/source.web.ts";
import { fileDatabaseLoader } from "../sql-files.deno.ts";
import { SqlPool } from "../sql-pool.ts";
import { loadSqlJs } from "../sql-wasm.ts";
import type { SqlJsModule } from "../sql-exec.ts";
import { DirStore } from "../store.deno.ts";
import type { DatasetSource, RunEnv } from "./context.ts";
import { loadSchema } from "./schema-load.ts";

/** Where the repository's public/ folder is (the demo data and, once built, the demo model). */
export const PUBLIC_DIR = fileURLToPath(new URL("../../../public/", import.meta.url));

/** Options of the Deno environment. */
export interface DenoEnvOptions {
  /** Output directory. */
  out: string;
  /** Folder that relative dataset/model paths resolve against (the notebook's folder). */
  base: string;
  /** SQL worker count (default 2). */
  sqlWorkers?: number;
  /** Per-query timeout in ms (default 30000). */
  sqlTimeoutMs?: number;
  onLog?: (msg: string) => void;
}

const isHttp = (s: string) => /^https?:\/\//i.test(s);

/** The Deno environment of `rlvr run`. */
export function denoEnv(o: DenoEnvOptions): RunEnv {
  const resolve = (p: string) => (isHttp(p) || isAbsolute(p) ? p : join(o.base, p));
  let sqlJs: Promise<SqlJsModule> | null = null;
  const tables = new Map<string, Promise<SpiderTablesEntry[]>>();
  let gpu: Promise<GPUDevice> | null = null;
  const dbLoader = (p: DatasetParams): (dbId: string) => Promise<Uint8Array> => {
    if (p.source === "demo") return fileDatabaseLoader(join(PUBLIC_DIR, "demo"));
    if (!p.dbRoot) throw new Error("dataset cell: dbRoot is required");
    const root = resolve(p.dbRoot);
    if (!isHttp(root)) return fileDatabaseLoader(root);
    return async (dbId) => {
      const r = await fetch(
        `${root.replace(/\/+$/, "")}/${encodeURIComponent(dbId)}/${encodeURIComponent(dbId)}.sqlite`,
      );
      if (!r.ok) throw new Error(`database ${dbId}: HTTP ${r.status}`);
      return new Uint8Array(await r.arrayBuffer());
    };
  };
  return {
    store: new DirStore(o.out),
    now: () => Date.now(),
    async loadDataset(p) {
      if (p.source === "demo") {
        const splits: Record<string, Task[]> = {};
        for (const s of DEMO_SPLITS) splits[s] = await readTasks(join(PUBLIC_DIR, "demo", `${s}.jsonl`));
        return { splits, describe: "demo (public/demo)" } satisfies DatasetSource;
      }
      if (p.source === "upload") {
        throw new Error('dataset source "upload" needs the browser; headless, use source "url" with a path or URL');
      }
      if (!p.questionsUrl) throw new Error("dataset cell: questionsUrl is required");
      const where = resolve(p.questionsUrl);
      return { splits: { [p.split]: await readTasks(where) }, describe: where };
    },
    sqlRunner(p) {
      return new SqlPool({
        loadDatabase: dbLoader(p),
        workers: o.sqlWorkers ?? 2,
        timeoutMs: o.sqlTimeoutMs ?? 30_000,
      });
    },
    async schemaOf(p, dbId) {
      sqlJs ??= loadSqlJs();
      let entries: Promise<SpiderTablesEntry[]> | null = null;
      if (p.tablesUrl) {
        // Spider/BIRD tables.json: natural table and column names, shown when the prompt cell asks for descriptions.
        const where = resolve(p.tablesUrl);
        entries = tables.get(where) ?? readText(where).then((t) => parseSpiderTables(JSON.parse(t)));
        tables.set(where, entries);
      }
      return loadSchema(await sqlJs, await dbLoader(p)(dbId), dbId, entries ? await entries : null);
    },
    async loadModel(which, lo) {
      const { source, name } = modelSource(which, resolve);
      o.onLog?.(`loading model ${name} from ${source.describe()}`);
      const hf: HfModel = await loadHfModel(source, lo);
      return { ...hf, name };
    },
    adapterSource(ref) {
      const where = resolve(ref);
      return { source: isHttp(where) ? new UrlSource(where) : new DirSource(where), where };
    },
    gpuDevice() {
      gpu ??= requestGpu().then((g) => g.device);
      return gpu;
    },
  };
}

async function readText(where: string): Promise<string> {
  if (isHttp(where)) {
    const r = await fetch(where);
    if (!r.ok) throw new Error(`${where}: HTTP ${r.status}`);
    return await r.text();
  }
  try {
    return await readTextBounded(where);
  } catch (e) {
    if (e instanceof FileRefusedError) throw e;
    throw new Error(`cannot read ${where}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

async function readTasks(where: string): Promise<Task[]> {
  const text = await readText(where);
  const q = parseQuestions(text);
  requireQuestions(q, where);
  return q.items.map((i) => i.task);
}

/** The model source of a model cell or a candidate string ("demo", "owner/name", an http(s) URL, or a folder). */
export function modelSource(
  which: ModelParams | string,
  resolve: (p: string) => string,
): { source: ModelSource; name: string } {
  const demo = () => {
    const dir = join(PUBLIC_DIR, "model");
    try {
      Deno.statSync(join(dir, "config.json"));
    } catch {
      throw new Error(
        `the demo model is not built (${dir} has no config.json); headless, pass --model DIR or use a "url"/"hub" model cell`,
      );
    }
    return { source: new DirSource(dir), name: "demo" };
  };
  if (typeof which !== "string") {
    switch (which.source) {
      case "demo":
        return demo();
      case "hub":
        if (!which.repo) throw new Error("model cell: repo is required");
        return { source: hubSource(which.repo, { revision: which.revision }), name: which.repo };
      case "url": {
        if (!which.url) throw new Error("model cell: url is required");
        const u = resolve(which.url);
        return { source: isHttp(u) ? new UrlSource(u) : new DirSource(u), name: which.url };
      }
    }
  }
  if (which === "demo") return demo();
  if (isHttp(which)) return { source: new UrlSource(which), name: which };
  const local = resolve(which);
  let isDir = false;
  try {
    isDir = Deno.statSync(local).isDirectory;
  } catch {
    isDir = false;
  }
  if (isDir) return { source: new DirSource(local), name: which };
  if (/^[\w.-]+\/[\w.-]+$/.test(which)) return { source: hubSource(which), name: which };
  throw new Error(`model "${which}" is neither a folder, an http(s) URL nor a Hugging Face repo id`);
}
