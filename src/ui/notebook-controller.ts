// The page's notebook state: the saved document (changed only through notebook.ts's named
// actions), where it came from, autosave to localStorage, share links and file import/export.
// Runtime state (outputs, progress) is kept by the cell elements, never in the document.
//
// The user's own notebook is never overwritten without a way back. A notebook opened from a link
// stays apart: its edits are saved under LINK_DRAFT_KEY (a reload of the link restores them) and
// the user's autosave is left as it was until they choose "Keep as my notebook" or go back to
// theirs. Whenever another notebook takes the autosave's place (a built-in notebook, an import,
// keeping a link's), the one it displaces is kept under PREVIOUS_KEY and offered back.
import { formatIssues, type Notebook, parseNotebook } from "../core/notebook.ts";
import { decodeShareHash, encodeShareHash, fitsInLink, linkLength, SAFE_URL_LENGTH } from "../core/share.ts";

export const AUTOSAVE_KEY = "rlvr-notebook-autosave";
/** Edits to notebooks opened from links, apart from the user's own: `[{ hash, doc }]`, the newest first. */
export const LINK_DRAFT_KEY = "rlvr-notebook-link-draft";
/** Links whose edits are kept (opening a ninth link's notebook and editing it forgets the oldest's edits). */
const MAX_DRAFTS = 8;
/** The notebook that the last switch displaced from the autosave: the way back. */
export const PREVIOUS_KEY = "rlvr-notebook-previous";

/** Where the open document came from. */
export type DocOrigin = "link" | "autosave" | "builtin" | "file";

/** A share link made for the current document, or the reason to offer a file instead. */
export type ShareResult =
  | { kind: "link"; url: string; length: number }
  | { kind: "too-long"; length: number; limit: number };

/** What `importText` did: a notebook opened (with a confirmation to show), or why nothing changed. */
export type ImportResult = { ok: true; message: string } | { ok: false; message: string };

function same(a: Notebook, b: Notebook): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Holds the document and tells the page when it changes. */
export class NotebookController extends EventTarget {
  doc: Notebook;
  origin: DocOrigin;
  /** Problems met while loading (a broken link, a bad autosave), shown to the user. */
  notices: string[] = [];
  /** While a link's notebook is open: the share hash it came from. */
  linkHash: string | null = null;
  /** While a link's notebook is open: the user's own autosaved notebook, left untouched. */
  mine: Notebook | null = null;
  /** True when the open link's notebook carries the user's earlier edits to it (restored from LINK_DRAFT_KEY). */
  restoredDraft = false;
  /** The notebook the last switch displaced, kept in storage and offered back. */
  previous: Notebook | null = null;

  constructor(builtin: unknown, private readonly storage: Storage | null, hash: string) {
    super();
    const base = parseNotebook(builtin);
    if (!base.ok) throw new Error(`the built-in notebook is invalid: ${formatIssues(base.errors)}`);
    this.doc = base.doc;
    this.origin = "builtin";
    const saved = this.readAutosave();
    this.previous = this.readStored(PREVIOUS_KEY);
    if (hash.startsWith("#nb=")) {
      const r = decodeShareHash(hash);
      if (r.ok) {
        if (r.warnings.length) {
          this.notices.push(
            `The link's document had fields this build does not know; they were dropped (${formatIssues(r.warnings)}).`,
          );
        }
        if (saved && same(saved, r.doc)) {
          // The user's own notebook, shared and reopened: nothing to keep apart.
          this.doc = saved;
          this.origin = "autosave";
          return;
        }
        this.doc = r.doc;
        this.origin = "link";
        this.linkHash = hash;
        this.mine = saved;
        const draft = this.readDrafts().find((d) => d.hash === hash);
        if (draft) {
          this.doc = draft.doc;
          this.restoredDraft = true;
        }
        return;
      }
      this.notices.push(
        `This link does not hold a valid notebook (${formatIssues(r.errors)}); showing your last notebook instead.`,
      );
    }
    if (saved) {
      this.doc = saved;
      this.origin = "autosave";
    }
  }

  private readAutosave(): Notebook | null {
    let text: string | null = null;
    try {
      text = this.storage?.getItem(AUTOSAVE_KEY) ?? null;
    } catch {
      return null;
    }
    if (!text) return null;
    try {
      const r = parseNotebook(JSON.parse(text));
      if (r.ok) return r.doc;
      this.notices.push(
        `Your autosaved notebook could not be read (${
          formatIssues(r.errors)
        }); the built-in notebook is shown and the autosave is kept until you change something.`,
      );
    } catch {
      this.notices.push("Your autosaved notebook was damaged; the built-in notebook is shown.");
    }
    return null;
  }

  /** A stored notebook that is not the autosave (previous), or null when absent or unreadable. */
  private readStored(key: string): Notebook | null {
    try {
      const text = this.storage?.getItem(key);
      if (!text) return null;
      const r = parseNotebook(JSON.parse(text));
      return r.ok ? r.doc : null;
    } catch {
      return null;
    }
  }

  /** The stored link drafts that still parse. */
  private readDrafts(): { hash: string; doc: Notebook }[] {
    let list: unknown;
    try {
      list = JSON.parse(this.storage?.getItem(LINK_DRAFT_KEY) ?? "[]");
    } catch {
      return [];
    }
    const out: { hash: string; doc: Notebook }[] = [];
    for (const j of Array.isArray(list) ? list : []) {
      if (typeof j !== "object" || j === null || !("hash" in j) || typeof j.hash !== "string" || !("doc" in j)) {
        continue;
      }
      const r = parseNotebook(j.doc);
      if (r.ok) out.push({ hash: j.hash, doc: r.doc });
    }
    return out;
  }

  /** Stores the open link's draft first (or drops it: `doc` null), keeping other links' drafts. */
  private writeDraft(hash: string, doc: Notebook | null): void {
    const others = this.readDrafts().filter((d) => d.hash !== hash);
    this.write(LINK_DRAFT_KEY, (doc ? [{ hash, doc }, ...others] : others).slice(0, MAX_DRAFTS));
  }

  private write(key: string, value: unknown): void {
    try {
      if (value === null) this.storage?.removeItem(key);
      else this.storage?.setItem(key, JSON.stringify(value));
    } catch {
      // Storage full or disabled: the document still lives in the page; export keeps it.
    }
  }

  /** Applies a named action (a pure function of the document); a thrown error leaves the document as it was. */
  apply(action: (doc: Notebook) => Notebook): void {
    const next = action(this.doc);
    this.doc = next;
    this.autosave();
    this.dispatchEvent(new Event("change"));
  }

  /**
   * Replaces the whole document (import, a built-in notebook, back); fires "replace" (another
   * notebook's runs apply) and "change". The notebook it displaces from the autosave (the user's
   * own, also while a link's is open) becomes `previous`.
   */
  replace(doc: Notebook, origin: Exclude<DocOrigin, "link">): void {
    const displaced = this.origin === "link" ? this.mine : this.doc;
    this.setPrevious(displaced && !same(displaced, doc) ? displaced : this.previous);
    this.open(doc, origin);
  }

  /** Reopens `previous`; the open notebook becomes the new `previous` (so back and forth loses nothing). */
  back(): void {
    const p = this.previous;
    if (!p) return;
    if (this.origin === "link") {
      this.setPrevious(this.mine && !same(this.mine, p) ? this.mine : this.doc);
      this.open(p, "autosave");
    } else {
      this.replace(p, "autosave");
    }
  }

  /** Link only: the link's notebook becomes the user's (autosaved); their own one is kept as `previous`. */
  keepLink(): void {
    if (this.origin !== "link") return;
    if (this.linkHash) this.writeDraft(this.linkHash, null);
    this.replace(this.doc, "autosave");
  }

  /** Link only: back to the user's own notebook (or the built-in one); the link's stays in `previous` and its edits in the draft. */
  leaveLink(builtin: Notebook): void {
    if (this.origin !== "link") return;
    const link = this.doc;
    this.setPrevious(link);
    this.open(this.mine ?? builtin, this.mine ? "autosave" : "builtin");
  }

  private setPrevious(doc: Notebook | null): void {
    if (doc === this.previous) return;
    this.previous = doc;
    this.write(PREVIOUS_KEY, doc);
  }

  private open(doc: Notebook, origin: Exclude<DocOrigin, "link">): void {
    this.doc = doc;
    this.origin = origin;
    this.linkHash = null;
    this.mine = null;
    this.restoredDraft = false;
    this.autosave();
    this.dispatchEvent(new Event("replace"));
    this.dispatchEvent(new Event("change"));
  }

  private autosave(): void {
    if (this.origin === "link") {
      if (this.linkHash) this.writeDraft(this.linkHash, this.doc);
    } else this.write(AUTOSAVE_KEY, this.doc);
  }

  /** A share link for the document (parameters only), or why a file is the better way. */
  share(baseUrl: string): ShareResult {
    const hash = encodeShareHash(this.doc);
    const base = baseUrl.split("#")[0];
    if (!fitsInLink(hash, base)) return { kind: "too-long", length: linkLength(hash, base), limit: SAFE_URL_LENGTH };
    return { kind: "link", url: base + hash, length: linkLength(hash, base) };
  }

  /** The document as a pretty-printed JSON file's text. */
  exportText(): string {
    return JSON.stringify(this.doc, null, 2) + "\n";
  }

  /** Reads a notebook file; on error the open document stays and the message says why, else it confirms what opened. */
  importText(text: string, fileName: string): ImportResult {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      return {
        ok: false,
        message: `${fileName} is not JSON (${e instanceof Error ? e.message : String(e)}); nothing was changed.`,
      };
    }
    const r = parseNotebook(json);
    if (!r.ok) {
      return {
        ok: false,
        message: `${fileName} is not a notebook this build can open: ${formatIssues(r.errors)}. Nothing was changed.`,
      };
    }
    this.replace(r.doc, "file");
    const n = r.doc.cells.length;
    const back = this.previous
      ? ` The notebook open before, “${this.previous.title}”, is kept: “↩ Back to …” beside the Notebooks menu reopens it.`
      : "";
    const dropped = r.warnings.length
      ? ` Fields this build does not know were dropped (${formatIssues(r.warnings)}).`
      : "";
    return {
      ok: true,
      message: `Imported “${r.doc.title}” from ${fileName}: ${n} cell${n === 1 ? "" : "s"}.${back}${dropped}`,
    };
  }
}
