// The notebook controller's storage rules without a browser (issue 47 item 2): a link's notebook
// never overwrites the user's autosave; each link keeps its own edits; every switch keeps the
// notebook it displaces as `previous`.
import { assert, assertEquals } from "../../tests/assert.ts";
import { addCell, emptyNotebook, type Notebook, setTitle } from "../core/notebook.ts";
import { encodeShareHash } from "../core/share.ts";
import { AUTOSAVE_KEY, LINK_DRAFT_KEY, NotebookController, PREVIOUS_KEY } from "./notebook-controller.ts";

/** A Storage over a Map: what localStorage keeps across page loads. */
function memoryStorage(): Storage {
  const m = new Map<string, string>();
  return {
    get length() {
      return m.size;
    },
    clear: () => m.clear(),
    getItem: (k) => m.get(k) ?? null,
    key: (i) => [...m.keys()][i] ?? null,
    removeItem: (k) => void m.delete(k),
    setItem: (k, v) => void m.set(k, String(v)),
  };
}

const builtin = addCell(emptyNotebook("Built-in"), "markdown");
const nb = (title: string): Notebook => addCell(emptyNotebook(title), "grpo");
const titleOf = (s: Storage, key: string) => (JSON.parse(s.getItem(key) ?? "null") as Notebook | null)?.title ?? null;

Deno.test("notebook controller: editing a link's notebook leaves the user's autosave as it was; a reload restores the edits (issue 47 item 2)", () => {
  const s = memoryStorage();
  const own = new NotebookController(builtin, s, "");
  own.apply((d) => setTitle(d, "Mine"));
  assertEquals(titleOf(s, AUTOSAVE_KEY), "Mine");

  const hash = encodeShareHash(nb("Shared"));
  const link = new NotebookController(builtin, s, hash);
  assertEquals([link.origin, link.doc.title, link.mine?.title, link.restoredDraft], ["link", "Shared", "Mine", false]);
  link.apply((d) => setTitle(d, "Shared, edited"));
  assertEquals(titleOf(s, AUTOSAVE_KEY), "Mine", "the autosave is untouched");

  const again = new NotebookController(builtin, s, hash);
  assertEquals([again.origin, again.doc.title, again.restoredDraft], ["link", "Shared, edited", true]);
  again.leaveLink(builtin);
  assertEquals([again.origin, again.doc.title, again.previous?.title], ["autosave", "Mine", "Shared, edited"]);
  again.back();
  assertEquals([again.doc.title, again.previous?.title, titleOf(s, AUTOSAVE_KEY), titleOf(s, PREVIOUS_KEY)], [
    "Shared, edited",
    "Mine",
    "Shared, edited",
    "Mine",
  ]);
});

Deno.test("notebook controller: keep a link's notebook; each link its own draft; one's own link is one's own notebook", () => {
  const s = memoryStorage();
  new NotebookController(builtin, s, "").apply((d) => setTitle(d, "Mine"));
  const a = encodeShareHash(nb("A")), b = encodeShareHash(nb("B"));
  new NotebookController(builtin, s, a).apply((d) => setTitle(d, "A edited"));
  new NotebookController(builtin, s, b).apply((d) => setTitle(d, "B edited"));
  assertEquals((JSON.parse(s.getItem(LINK_DRAFT_KEY) ?? "[]") as unknown[]).length, 2);
  const ca = new NotebookController(builtin, s, a);
  assertEquals(ca.doc.title, "A edited");
  ca.keepLink();
  assertEquals([ca.origin, titleOf(s, AUTOSAVE_KEY), titleOf(s, PREVIOUS_KEY)], ["autosave", "A edited", "Mine"]);
  assertEquals(
    (JSON.parse(s.getItem(LINK_DRAFT_KEY) ?? "[]") as { hash: string }[]).map((d) => d.hash),
    [b],
    "the kept link's draft is dropped, B's stays",
  );

  // The user's own notebook, shared and reopened: nothing to keep apart.
  const own = new NotebookController(builtin, s, "");
  const mine = new NotebookController(builtin, s, encodeShareHash(own.doc));
  assertEquals([mine.origin, mine.doc.title], ["autosave", "A edited"]);

  // A built-in notebook or an import displaces the autosave into previous.
  mine.replace(builtin, "builtin");
  assertEquals([titleOf(s, AUTOSAVE_KEY), titleOf(s, PREVIOUS_KEY)], ["Built-in", "A edited"]);
  const r = mine.importText(JSON.stringify(nb("Imported")), "x.json");
  assert(
    r.ok && /Imported “Imported” from x\.json: 1 cell\. The notebook open before, “Built-in”, is kept/.test(r.message),
    r.message,
  );
  assertEquals(mine.importText("{", "bad.json").ok, false);
  assertEquals(titleOf(s, AUTOSAVE_KEY), "Imported");
});
