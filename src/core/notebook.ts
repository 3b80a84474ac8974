// The notebook document: an ordered list of typed cells holding parameters only (never code, never
// results). Runtime state (outputs, progress, metrics) lives elsewhere, keyed by CellId. Documents
// change only through the named actions below, pure functions that return a new document.
import { CELL_TYPES, type CellParams, type CellType, type Issue } from "./notebook-params.ts";
import { isOneOf, isRecord, readParams, show } from "./notebook-read.ts";

export type { CellParams, CellType, Issue } from "./notebook-params.ts";
export { defaultParams, validateParams } from "./notebook-read.ts";

/** A cell's stable id (branded: a plain string is not a CellId until checked or made). */
export type CellId = string & { readonly __brand: "CellId" };

/** One cell of type K. */
export interface CellOf<K extends CellType> {
  id: CellId;
  type: K;
  /** Shown folded in the UI (saved with the document, as a reading aid). */
  collapsed: boolean;
  params: CellParams[K];
}

/** Any cell: a union discriminated by `type`. */
export type Cell = { [K in CellType]: CellOf<K> }[CellType];

/** The saved document. */
export interface Notebook {
  version: 1;
  title: string;
  cells: Cell[];
}

/** What `parseNotebook` returns: the typed document (with warnings about dropped fields) or the errors. */
export type ParseResult = { ok: true; doc: Notebook; warnings: Issue[] } | {
  ok: false;
  errors: Issue[];
  warnings: Issue[];
};

export const NOTEBOOK_VERSION = 1;
export const MAX_CELLS = 256;
const MAX_TITLE = 200;
const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** True for a string usable as a cell id: 1 to 64 letters, digits, "_" or "-". */
export function isCellId(x: unknown): x is CellId {
  return typeof x === "string" && ID_PATTERN.test(x);
}

/**
 * Validates untrusted JSON (a file, a share link) into a typed document, filling in defaults.
 * Never throws: bad values, unknown cell types, duplicate ids and a wrong version are errors with
 * their paths; unknown fields are dropped and reported as warnings; missing ids are assigned.
 */
export function parseNotebook(json: unknown): ParseResult {
  const errors: Issue[] = [];
  const warnings: Issue[] = [];
  if (!isRecord(json)) return { ok: false, errors: [{ path: "", message: "a notebook is a JSON object" }], warnings };
  if (json.version !== NOTEBOOK_VERSION) {
    errors.push({
      path: "version",
      message: `unsupported version ${show(json.version)} (this build reads version ${NOTEBOOK_VERSION})`,
    });
  }
  let title = "Untitled";
  if (typeof json.title === "string" && json.title.length <= MAX_TITLE) title = json.title;
  else if (json.title !== undefined) {
    errors.push({ path: "title", message: `expected a string of at most ${MAX_TITLE} characters` });
  }
  for (const k of Object.keys(json)) {
    if (!["version", "title", "cells"].includes(k)) warnings.push({ path: k, message: "unknown field, dropped" });
  }
  const cells: Cell[] = [];
  const rawCells = json.cells ?? [];
  if (!Array.isArray(rawCells)) errors.push({ path: "cells", message: "expected a list of cells" });
  else if (rawCells.length > MAX_CELLS) errors.push({ path: "cells", message: `more than ${MAX_CELLS} cells` });
  else {
    const seen = new Set<string>();
    // Ids are assigned after reading, so an assigned id never takes one a later cell names.
    const missing: number[] = [];
    rawCells.forEach((raw: unknown, i) => {
      const path = `cells[${i}]`;
      if (!isRecord(raw)) return void errors.push({ path, message: "expected a cell object" });
      if (!isOneOf(CELL_TYPES, raw.type)) {
        return void errors.push({
          path: `${path}.type`,
          message: `unknown cell type ${raw.type === undefined ? "(missing)" : show(raw.type)}; known: ${
            CELL_TYPES.join(", ")
          }`,
        });
      }
      let id = "";
      if (raw.id === undefined) missing.push(cells.length);
      else if (!isCellId(raw.id)) errors.push({ path: `${path}.id`, message: "expected 1-64 letters, digits, _ or -" });
      else if (seen.has(raw.id)) errors.push({ path: `${path}.id`, message: `duplicate id ${raw.id}` });
      else {
        seen.add(raw.id);
        id = raw.id;
      }
      let collapsed = false;
      if (typeof raw.collapsed === "boolean") collapsed = raw.collapsed;
      else if (raw.collapsed !== undefined) {
        errors.push({ path: `${path}.collapsed`, message: "expected true or false" });
      }
      for (const k of Object.keys(raw)) {
        if (!["id", "type", "collapsed", "params"].includes(k)) {
          warnings.push({ path: `${path}.${k}`, message: "unknown field, dropped" });
        }
      }
      cells.push(makeCell(raw.type, id, collapsed, raw.params, `${path}.params`, errors, warnings));
    });
    for (const i of missing) {
      const id = freshId(seen);
      seen.add(id);
      cells[i] = { ...cells[i], id };
    }
  }
  if (errors.length) return { ok: false, errors, warnings };
  return { ok: true, doc: { version: 1, title, cells }, warnings };
}

function makeCell(
  type: CellType,
  id: string,
  collapsed: boolean,
  raw: unknown,
  path: string,
  errors: Issue[],
  warnings: Issue[],
): Cell {
  const cid = isCellId(id) ? id : freshId(new Set());
  const read = <K extends CellType>(k: K) => readParams(k, raw, path, errors, warnings);
  // One case per type keeps the union exact without casts.
  switch (type) {
    case "markdown":
      return { id: cid, type, collapsed, params: read(type) };
    case "gpu":
      return { id: cid, type, collapsed, params: read(type) };
    case "dataset":
      return { id: cid, type, collapsed, params: read(type) };
    case "model":
      return { id: cid, type, collapsed, params: read(type) };
    case "prompt":
      return { id: cid, type, collapsed, params: read(type) };
    case "reward":
      return { id: cid, type, collapsed, params: read(type) };
    case "evaluate":
      return { id: cid, type, collapsed, params: read(type) };
    case "select":
      return { id: cid, type, collapsed, params: read(type) };
    case "warmup":
      return { id: cid, type, collapsed, params: read(type) };
    case "grpo":
      return { id: cid, type, collapsed, params: read(type) };
    case "selfconsistency":
      return { id: cid, type, collapsed, params: read(type) };
    case "prmdata":
      return { id: cid, type, collapsed, params: read(type) };
    case "prmtrain":
      return { id: cid, type, collapsed, params: read(type) };
    case "export":
      return { id: cid, type, collapsed, params: read(type) };
    case "ask":
      return { id: cid, type, collapsed, params: read(type) };
    default:
      return assertNever(type);
  }
}

/** The first id "c1", "c2", ... not in `taken`. */
function freshId(taken: ReadonlySet<string>): CellId {
  for (let i = 1;; i++) {
    const id = `c${i}`;
    if (!taken.has(id) && isCellId(id)) return id;
  }
}

/** A new, empty document. */
export function emptyNotebook(title = "Untitled"): Notebook {
  return { version: 1, title, cells: [] };
}

/** A fresh id for a new cell of `doc`. */
export function newCellId(doc: Notebook): CellId {
  return freshId(new Set(doc.cells.map((c) => c.id)));
}

function indexOf(doc: Notebook, id: CellId): number {
  const i = doc.cells.findIndex((c) => c.id === id);
  if (i < 0) throw new Error(`no cell with id ${id}`);
  return i;
}

/**
 * Adds a cell of `type` with default parameters overridden by `params` (validated; throws on
 * invalid values) at index `at` (default: the end).
 */
export function addCell(
  doc: Notebook,
  type: CellType,
  opts: { at?: number; id?: CellId; params?: Record<string, unknown> } = {},
): Notebook {
  const id = opts.id ?? newCellId(doc);
  if (doc.cells.some((c) => c.id === id)) throw new Error(`addCell: id ${id} is taken`);
  if (doc.cells.length >= MAX_CELLS) throw new Error(`addCell: a notebook holds at most ${MAX_CELLS} cells`);
  const errors: Issue[] = [];
  const cell = makeCell(type, id, false, opts.params ?? {}, "params", errors, []);
  if (errors.length) throw new Error(`addCell: ${formatIssues(errors)}`);
  const at = clampIndex(opts.at ?? doc.cells.length, doc.cells.length);
  return { ...doc, cells: [...doc.cells.slice(0, at), cell, ...doc.cells.slice(at)] };
}

/** Removes the cell `id`. */
export function removeCell(doc: Notebook, id: CellId): Notebook {
  const i = indexOf(doc, id);
  return { ...doc, cells: [...doc.cells.slice(0, i), ...doc.cells.slice(i + 1)] };
}

/** Moves the cell `id` so that it ends up at index `to` (clamped to the list). */
export function moveCell(doc: Notebook, id: CellId, to: number): Notebook {
  const i = indexOf(doc, id);
  const cells = [...doc.cells];
  const [cell] = cells.splice(i, 1);
  cells.splice(clampIndex(to, cells.length), 0, cell);
  return { ...doc, cells };
}

/**
 * Merges `patch` into the parameters of cell `id`, which must be of type `type`; the result is
 * validated like a loaded document (throws on invalid values; check forms with `validateParams`).
 */
export function updateParams<K extends CellType>(
  doc: Notebook,
  id: CellId,
  type: K,
  patch: Partial<CellParams[K]>,
): Notebook {
  const i = indexOf(doc, id);
  const old = doc.cells[i];
  if (old.type !== type) throw new Error(`updateParams: cell ${id} is a ${old.type} cell, not ${type}`);
  const merged: Record<string, unknown> = { ...old.params, ...patch };
  const errors: Issue[] = [];
  const cell = makeCell(type, id, old.collapsed, merged, "params", errors, []);
  if (errors.length) throw new Error(`updateParams: ${formatIssues(errors)}`);
  const cells = [...doc.cells];
  cells[i] = cell;
  return { ...doc, cells };
}

/** Folds or unfolds the cell `id`. */
export function setCollapsed(doc: Notebook, id: CellId, collapsed: boolean): Notebook {
  const i = indexOf(doc, id);
  const cells = [...doc.cells];
  cells[i] = { ...cells[i], collapsed };
  return { ...doc, cells };
}

/** Renames the document. */
export function setTitle(doc: Notebook, title: string): Notebook {
  if (title.length > MAX_TITLE) throw new Error(`setTitle: at most ${MAX_TITLE} characters`);
  return { ...doc, title };
}

/** The cell `id`, narrowed to type K when it is one (undefined otherwise). */
export function getCell<K extends CellType>(
  doc: Notebook,
  id: CellId,
  type: K,
): Extract<Cell, { type: K }> | undefined {
  const c = doc.cells.find((x) => x.id === id);
  return c && isCellOf(c, type) ? c : undefined;
}

/** Type guard: the cell is of type K. */
export function isCellOf<K extends CellType>(cell: Cell, type: K): cell is Extract<Cell, { type: K }> {
  return cell.type === type;
}

/** Issues as one line each, "path: message". */
export function formatIssues(issues: readonly Issue[]): string {
  return issues.map((e) => `${e.path || "(document)"}: ${e.message}`).join("; ");
}

function clampIndex(i: number, n: number): number {
  return Math.max(0, Math.min(n, Math.trunc(i)));
}

function assertNever(x: never): never {
  throw new Error(`unexpected value ${String(x)}`);
}
