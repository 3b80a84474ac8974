// The page's notebook state: the saved document (changed only through notebook.ts's named
// actions), where it came from, autosave to localStorage, share links and file import/export.
// Runtime state (outputs, progress) is kept by the cell elements, never in the document.
import { formatIssues, type Notebook, parseNotebook } from "../core/notebook.ts";
import { decodeShareHash, encodeShareHash, fitsInLink, linkLength, SAFE_URL_LENGTH } from "../core/share.ts";

export const AUTOSAVE_KEY = "rlvr-notebook-autosave";

/** Where the open document came from. */
export type DocOrigin = "link" | "autosave" | "builtin" | "file";

/** A share link made for the current document, or the reason to offer a file instead. */
export type ShareResult =
  | { kind: "link"; url: string; length: number }
  | { kind: "too-long"; length: number; limit: number };

/** Holds the document and tells the page when it changes. */
export class NotebookController extends EventTarget {
  doc: Notebook;
  origin: DocOrigin;
  /** Problems met while loading (a broken link, a bad autosave), shown to the user. */
  notices: string[] = [];

  constructor(builtin: unknown, private readonly storage: Storage | null, hash: string) {
    super();
    const base = parseNotebook(builtin);
    if (!base.ok) throw new Error(`the built-in notebook is invalid: ${formatIssues(base.errors)}`);
    this.doc = base.doc;
    this.origin = "builtin";
    if (hash.startsWith("#nb=")) {
      const r = decodeShareHash(hash);
      if (r.ok) {
        this.doc = r.doc;
        this.origin = "link";
        if (r.warnings.length) this.notices.push(`The link's document had fields this build does not know; they were dropped (${formatIssues(r.warnings)}).`);
        return;
      }
      this.notices.push(`This link does not hold a valid notebook (${formatIssues(r.errors)}); showing your last notebook instead.`);
    }
    const saved = this.readAutosave();
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
      this.notices.push(`Your autosaved notebook could not be read (${formatIssues(r.errors)}); the built-in notebook is shown and the autosave is kept until you change something.`);
    } catch {
      this.notices.push("Your autosaved notebook was damaged; the built-in notebook is shown.");
    }
    return null;
  }

  /** Applies a named action (a pure function of the document); a thrown error leaves the document as it was. */
  apply(action: (doc: Notebook) => Notebook): void {
    const next = action(this.doc);
    this.doc = next;
    this.autosave();
    this.dispatchEvent(new Event("change"));
  }

  /** Replaces the whole document (import, reset); fires "replace" (another notebook's runs apply) and "change". */
  replace(doc: Notebook, origin: DocOrigin): void {
    this.doc = doc;
    this.origin = origin;
    this.autosave();
    this.dispatchEvent(new Event("replace"));
    this.dispatchEvent(new Event("change"));
  }

  private autosave(): void {
    try {
      this.storage?.setItem(AUTOSAVE_KEY, JSON.stringify(this.doc));
    } catch {
      // Storage full or disabled: the document still lives in the page; export keeps it.
    }
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

  /** Reads a notebook file; on error the open document stays and the returned message says why. */
  importText(text: string, fileName: string): string | null {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      return `${fileName} is not JSON (${e instanceof Error ? e.message : String(e)}); nothing was changed.`;
    }
    const r = parseNotebook(json);
    if (!r.ok) return `${fileName} is not a notebook this build can open: ${formatIssues(r.errors)}. Nothing was changed.`;
    this.replace(r.doc, "file");
    return null;
  }
}
