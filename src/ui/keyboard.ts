// The notebook's keyboard shortcuts as pure functions: which command a key press means (given
// whether the user is typing in a field and a pending "d" of "d d"), the list the help overlay
// shows, and the document actions the commands need that notebook.ts does not have (putting a
// deleted cell back). No DOM here: notebook-keys.ts wires these to the page.
import { type Cell, newCellId, type Notebook } from "../core/notebook.ts";

/** What a key press asks for. */
export const KEY_COMMANDS = [
  "next",
  "prev",
  "edit",
  "leave",
  "run",
  "run-next",
  "add-above",
  "add-below",
  "delete",
  "undo",
  "move-up",
  "move-down",
  "export",
  "help",
] as const;
export type KeyCommand = (typeof KEY_COMMANDS)[number];

/** The parts of a KeyboardEvent the mapping reads. */
export interface KeyPress {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
}

/** Where the key was pressed. */
export interface KeyContext {
  /** In a text field, a select, a textarea or contenteditable: the keys belong to the field. */
  typing: boolean;
  /** On a button or link: Enter and Space activate it and are left alone. */
  onControl: boolean;
}

/** State carried between presses: the first "d" of "d d" and when it came. */
export interface KeyState {
  pendingD: number | null;
}

/** How long the second "d" of "d d" may wait (ms). */
export const DD_WINDOW_MS = 800;

export const INITIAL_KEY_STATE: KeyState = { pendingD: null };

/** A shortcut as the help overlay lists it. */
export interface KeyBinding {
  keys: string[];
  command: KeyCommand;
  description: string;
}

/** Every shortcut, in the order the help overlay shows them. */
export const KEY_BINDINGS: readonly KeyBinding[] = [
  { keys: ["J", "↓"], command: "next", description: "select the next cell" },
  { keys: ["K", "↑"], command: "prev", description: "select the previous cell" },
  {
    keys: ["Enter"],
    command: "edit",
    description: "edit the selected cell (its first field; a note opens its editor)",
  },
  {
    keys: ["Esc"],
    command: "leave",
    description: "leave the field you are typing in (back to the cell); close a menu or this help",
  },
  { keys: ["Shift+Enter"], command: "run-next", description: "run the selected cell and select the next one" },
  { keys: ["Ctrl+Enter"], command: "run", description: "run the selected cell and stay on it" },
  { keys: ["A"], command: "add-above", description: "add a cell above (choose its type in a menu)" },
  { keys: ["B"], command: "add-below", description: "add a cell below (choose its type in a menu)" },
  { keys: ["D", "D"], command: "delete", description: "delete the selected cell (press D twice)" },
  { keys: ["Z"], command: "undo", description: "bring back the last cell deleted with D D" },
  { keys: ["Alt+↑"], command: "move-up", description: "move the selected cell up" },
  { keys: ["Alt+↓"], command: "move-down", description: "move the selected cell down" },
  { keys: ["Ctrl+S", "⌘S"], command: "export", description: "export the notebook file (works while typing too)" },
  { keys: ["?"], command: "help", description: "show or hide this list" },
];

/** True for an element whose keys belong to it (text inputs, selects, textareas, contenteditable). */
export function isTypingTarget(el: { tagName: string; type?: string; isContentEditable?: boolean } | null): boolean {
  if (!el) return false;
  if (el.isContentEditable) return true;
  const tag = el.tagName.toUpperCase();
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag !== "INPUT") return false;
  return !["checkbox", "radio", "button", "submit", "reset", "file", "color", "image"].includes(
    (el.type ?? "text").toLowerCase(),
  );
}

/** True for an element Enter or Space activates (a button, a link, a summary, a file/checkbox input). */
export function isControlTarget(el: { tagName: string; type?: string } | null): boolean {
  if (!el) return false;
  const tag = el.tagName.toUpperCase();
  return tag === "BUTTON" || tag === "A" || tag === "SUMMARY" || (tag === "INPUT" && !isTypingTarget(el));
}

/** The command a key press means, and the state for the next press. */
export function resolveKey(
  k: KeyPress,
  ctx: KeyContext,
  state: KeyState,
  now: number,
): { command: KeyCommand | null; state: KeyState } {
  const none = { command: null, state: INITIAL_KEY_STATE };
  const mod = k.ctrlKey || k.metaKey;
  if (mod && !k.altKey && !k.shiftKey && k.key.toLowerCase() === "s") {
    return { command: "export", state: INITIAL_KEY_STATE };
  }
  if (k.key === "Escape") return { command: "leave", state: INITIAL_KEY_STATE };
  if (ctx.typing) return none;
  if (k.altKey && !mod && !k.shiftKey) {
    if (k.key === "ArrowUp") return { command: "move-up", state: INITIAL_KEY_STATE };
    if (k.key === "ArrowDown") return { command: "move-down", state: INITIAL_KEY_STATE };
    return none;
  }
  if (k.key === "Enter" && !k.altKey && !ctx.onControl) {
    if (k.shiftKey && !mod) return { command: "run-next", state: INITIAL_KEY_STATE };
    if (mod && !k.shiftKey) return { command: "run", state: INITIAL_KEY_STATE };
    if (!mod && !k.shiftKey) return { command: "edit", state: INITIAL_KEY_STATE };
    return none;
  }
  if (k.key === "?" && !mod && !k.altKey) return { command: "help", state: INITIAL_KEY_STATE };
  if (mod || k.altKey) return none;
  const plain = k.shiftKey ? null : k.key;
  switch (plain) {
    case "j":
    case "ArrowDown":
      return { command: "next", state: INITIAL_KEY_STATE };
    case "k":
    case "ArrowUp":
      return { command: "prev", state: INITIAL_KEY_STATE };
    case "a":
      return { command: "add-above", state: INITIAL_KEY_STATE };
    case "b":
      return { command: "add-below", state: INITIAL_KEY_STATE };
    case "z":
      return { command: "undo", state: INITIAL_KEY_STATE };
    case "d":
      if (state.pendingD !== null && now - state.pendingD <= DD_WINDOW_MS) {
        return { command: "delete", state: INITIAL_KEY_STATE };
      }
      return { command: null, state: { pendingD: now } };
    default:
      return none;
  }
}

/** The index `delta` away from `i` in a list of `n`, kept inside it; -1 for an empty list, 0 from nowhere (i < 0). */
export function stepIndex(i: number, n: number, delta: number): number {
  if (n === 0) return -1;
  if (i < 0) return delta < 0 ? n - 1 : 0;
  return Math.max(0, Math.min(n - 1, i + delta));
}

/** A deleted cell as undo keeps it. */
export interface DeletedCell {
  cell: Cell;
  index: number;
}

/** Puts a deleted cell back at its index (clamped), under a fresh id when its old one was taken since. */
export function restoreCell(doc: Notebook, d: DeletedCell): Notebook {
  const cell = doc.cells.some((c) => c.id === d.cell.id) ? { ...d.cell, id: newCellId(doc) } : d.cell;
  const at = Math.max(0, Math.min(doc.cells.length, d.index));
  return { ...doc, cells: [...doc.cells.slice(0, at), cell, ...doc.cells.slice(at)] };
}
