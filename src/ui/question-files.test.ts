// loadQuestionFiles: the splits come back in the order they were asked for, whatever order the
// responses arrive in (the dataset view shows the first one), and a file that fails is a problem
// named by its URL, not a failure.
import { assertEquals } from "../../tests/assert.ts";
import { loadQuestionFiles } from "./question-files.ts";

Deno.test("loadQuestionFiles keeps the order of the splits asked for when later files answer first", async () => {
  const line = (q: string) => JSON.stringify({ id: q, db_id: "shop", question: q, gold_sql: "SELECT 1" });
  const bodies: Record<string, { text: string; delay: number; status?: number }> = {
    "/train.jsonl": { text: [line("a"), line("b"), line("c")].join("\n"), delay: 60 },
    "/test.jsonl": { text: line("d"), delay: 20 },
    "/missing.jsonl": { text: "", delay: 0, status: 404 },
    "/heldout.jsonl": { text: line("e"), delay: 0 },
  };
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (input: RequestInfo | URL) => {
    const b = bodies[String(input)];
    await new Promise((r) => setTimeout(r, b.delay));
    return new Response(b.text, { status: b.status ?? 200 });
  }) as typeof fetch;
  try {
    const got = await loadQuestionFiles({
      train: "/train.jsonl",
      test: "/test.jsonl",
      gone: "/missing.jsonl",
      heldout: "/heldout.jsonl",
    });
    assertEquals(Object.keys(got.splits), ["train", "test", "heldout"]);
    assertEquals(got.splits.train.map((t) => t.question), ["a", "b", "c"]);
    assertEquals(got.problems, ["/missing.jsonl: HTTP 404"]);
  } finally {
    globalThis.fetch = realFetch;
  }
});
