// Fixtures of the browser tests that run cells: the text a tiny test model's tokenizer is trained on.
import { join } from "node:path";
import { ChatTemplate } from "../../src/core/chat-template.ts";
import { buildPrompt } from "../../src/core/prompts.ts";
import { introspectSchema, type SqlQueryable } from "../../src/core/schema.ts";
import { CHATML_TEMPLATE } from "../../src/model/tiny.ts";
import { loadSqlJsDeno } from "../../src/runtime/sql-wasm.ts";
import { ROOT } from "./harness.ts";

/**
 * Chat-rendered prompts (omnisql@1 unless `o.template`) of the first `n` questions of each demo split
 * (all four unless `o.splits`): the tiny tokenizer's BPE corpus, so prompts stay short.
 */
export async function demoCorpus(
  n: number,
  o: { template?: string; splits?: readonly string[] } = {},
): Promise<string[]> {
  const SQL = await loadSqlJsDeno();
  const chat = new ChatTemplate(CHATML_TEMPLATE);
  const out: string[] = [];
  const schemas = new Map<string, ReturnType<typeof introspectSchema>>();
  for (const split of o.splits ?? ["train", "test-concepts", "test-templates", "heldout-db"]) {
    const lines = (await Deno.readTextFile(join(ROOT, `public/demo/${split}.jsonl`))).split("\n").filter((l) =>
      l.trim()
    ).slice(0, n);
    for (const line of lines) {
      const t: { question: string; db_id: string; evidence?: string } = JSON.parse(line);
      let schema = schemas.get(t.db_id);
      if (!schema) {
        const db = new SQL.Database(await Deno.readFile(join(ROOT, `public/demo/${t.db_id}/${t.db_id}.sqlite`)));
        const q: SqlQueryable = { exec: (sql) => db.exec(sql).map((x) => ({ columns: x.columns, values: x.values })) };
        schema = introspectSchema(q, t.db_id);
        db.close();
        schemas.set(t.db_id, schema);
      }
      out.push(
        chat.render(
          buildPrompt({ question: t.question, evidence: t.evidence }, schema, { template: o.template ?? "omnisql@1" })
            .messages,
        ),
      );
    }
  }
  return out;
}
