import { num, parseFlags, SEED } from "../args.ts";
import { buildDemo } from "../../runtime/demo/build.ts";
import { loadSqlJsDeno } from "../../runtime/sql-wasm.ts";
import type { Command } from "./index.ts";

/** One JSON object per line, a newline at the end. */
export function jsonl(xs: readonly unknown[]): string {
  return xs.map((x) => JSON.stringify(x)).join("\n") + "\n";
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const h = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(h), (b) => b.toString(16).padStart(2, "0")).join("");
}

export const command: Command = {
  name: "make-demo",
  summary:
    "generate the built-in demo: databases, concept questions per split, generic questions, definitions (deterministic)",
  usage: "rlvr make-demo [--out DIR (default public/demo)] [--seed N (default 20261129)]",
  async run(argv) {
    const { values } = parseFlags(argv, { out: { type: "string" }, seed: { type: "string" } });
    const out = typeof values.out === "string" ? values.out : "public/demo";
    const seed = num(values, "seed", 20261129, SEED);
    const demo = buildDemo(await loadSqlJsDeno(), seed);
    const manifest: Record<string, unknown> = { seed, databases: {}, splits: {} };
    for (const d of demo.databases) {
      await Deno.mkdir(`${out}/${d.id}`, { recursive: true });
      await Deno.writeFile(`${out}/${d.id}/${d.id}.sqlite`, d.bytes);
      (manifest.databases as Record<string, unknown>)[d.id] = {
        bytes: d.bytes.length,
        sha256: await sha256(d.bytes),
        rows: d.rows,
      };
    }
    for (const [name, tasks] of Object.entries(demo.splits)) {
      await Deno.writeTextFile(`${out}/${name}.jsonl`, jsonl(tasks));
      (manifest.splits as Record<string, unknown>)[name] = {
        questions: tasks.length,
        databases: [...new Set(tasks.map((t) => t.db_id))],
      };
    }
    // Not splits: the generic questions only the pretraining corpus reads, and the concepts' definitions.
    await Deno.writeTextFile(`${out}/generic.jsonl`, jsonl(demo.generic));
    await Deno.writeTextFile(`${out}/concepts.json`, JSON.stringify(demo.definitions, null, 1) + "\n");
    manifest.generic = { questions: demo.generic.length, databases: [...new Set(demo.generic.map((t) => t.db_id))] };
    manifest.concepts = demo.definitions.length;
    await Deno.writeTextFile(`${out}/manifest.json`, JSON.stringify(manifest, null, 2) + "\n");
    console.log(
      `wrote ${demo.databases.length} databases and ${
        Object.values(demo.splits).reduce((s, t) => s + t.length, 0)
      } questions to ${out}`,
    );
    return { out, ...manifest };
  },
};
