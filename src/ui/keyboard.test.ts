// The keyboard mapping: commands in command mode, nothing stolen while typing, "d d" timing,
// and undo of a deleted cell.
import { assert, assertEquals } from "../../tests/assert.ts";
import { addCell, type CellId, emptyNotebook, removeCell } from "../core/notebook.ts";
import {
  DD_WINDOW_MS,
  INITIAL_KEY_STATE,
  isControlTarget,
  isTypingTarget,
  KEY_BINDINGS,
  KEY_COMMANDS,
  type KeyPress,
  resolveKey,
  restoreCell,
  stepIndex,
} from "./keyboard.ts";

const press = (key: string, mods: Partial<Omit<KeyPress, "key">> = {}): KeyPress => ({
  key,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  shiftKey: false,
  ...mods,
});
const cmd = (k: KeyPress, typing = false, onControl = false) =>
  resolveKey(k, { typing, onControl }, INITIAL_KEY_STATE, 0).command;

Deno.test("keyboard: command-mode keys map to their commands", () => {
  assertEquals([cmd(press("j")), cmd(press("ArrowDown")), cmd(press("k")), cmd(press("ArrowUp"))], [
    "next",
    "next",
    "prev",
    "prev",
  ]);
  assertEquals([
    cmd(press("Enter")),
    cmd(press("Enter", { shiftKey: true })),
    cmd(press("Enter", { ctrlKey: true })),
    cmd(press("Enter", { metaKey: true })),
  ], ["edit", "run-next", "run", "run"]);
  assertEquals([
    cmd(press("a")),
    cmd(press("b")),
    cmd(press("z")),
    cmd(press("?", { shiftKey: true })),
    cmd(press("Escape")),
  ], ["add-above", "add-below", "undo", "help", "leave"]);
  assertEquals([cmd(press("ArrowUp", { altKey: true })), cmd(press("ArrowDown", { altKey: true }))], [
    "move-up",
    "move-down",
  ]);
  assertEquals([
    cmd(press("s", { ctrlKey: true })),
    cmd(press("s", { metaKey: true })),
    cmd(press("S", { ctrlKey: true })),
  ], ["export", "export", "export"]);
  // Modified letters are the browser's (Ctrl+A selects all, Ctrl+J opens downloads, Shift+J types).
  assertEquals([
    cmd(press("a", { ctrlKey: true })),
    cmd(press("j", { metaKey: true })),
    cmd(press("J", { shiftKey: true })),
    cmd(press("k", { altKey: true })),
  ], [null, null, null, null]);
  assertEquals(cmd(press("x")), null);
});

Deno.test("keyboard: nothing is taken from a field the user types in, except Esc and Ctrl/Cmd+S", () => {
  for (const k of ["j", "k", "a", "b", "d", "z", "?", "Enter", "ArrowUp", "ArrowDown"]) {
    assertEquals(cmd(press(k), true), null, k);
  }
  assertEquals([cmd(press("Enter", { shiftKey: true }), true), cmd(press("ArrowUp", { altKey: true }), true)], [
    null,
    null,
  ]);
  assertEquals([cmd(press("Escape"), true), cmd(press("s", { ctrlKey: true }), true)], ["leave", "export"]);
  // Enter on a button presses the button; letters still work there.
  assertEquals([
    cmd(press("Enter"), false, true),
    cmd(press("Enter", { shiftKey: true }), false, true),
    cmd(press("j"), false, true),
  ], [null, null, "next"]);
  assert(
    isTypingTarget({ tagName: "input" }) && isTypingTarget({ tagName: "INPUT", type: "search" }) &&
      isTypingTarget({ tagName: "TEXTAREA" }) && isTypingTarget({ tagName: "SELECT" }),
  );
  assert(isTypingTarget({ tagName: "DIV", isContentEditable: true }));
  assert(
    !isTypingTarget({ tagName: "INPUT", type: "checkbox" }) && !isTypingTarget({ tagName: "BUTTON" }) &&
      !isTypingTarget({ tagName: "LI" }) && !isTypingTarget(null),
  );
  assert(
    isControlTarget({ tagName: "BUTTON" }) && isControlTarget({ tagName: "INPUT", type: "checkbox" }) &&
      !isControlTarget({ tagName: "LI" }),
  );
});

Deno.test("keyboard: d d deletes only when the second d comes in time, and any other key cancels it", () => {
  const ctx = { typing: false, onControl: false };
  const first = resolveKey(press("d"), ctx, INITIAL_KEY_STATE, 1000);
  assertEquals(first, { command: null, state: { pendingD: 1000 } });
  assertEquals(resolveKey(press("d"), ctx, first.state, 1000 + DD_WINDOW_MS).command, "delete");
  const late = resolveKey(press("d"), ctx, first.state, 1001 + DD_WINDOW_MS);
  assertEquals(late, { command: null, state: { pendingD: 1001 + DD_WINDOW_MS } }, "a late second d starts a new pair");
  const other = resolveKey(press("j"), ctx, first.state, 1100);
  assertEquals(other.command, "next");
  assertEquals(resolveKey(press("d"), ctx, other.state, 1200).command, null, "j in between cancels the pair");
  assertEquals(
    resolveKey(press("d"), { typing: true, onControl: false }, first.state, 1100).command,
    null,
    "d typed in a field never deletes",
  );
});

Deno.test("keyboard: every command has a help line; stepIndex stays in the list", () => {
  assertEquals([...new Set(KEY_BINDINGS.map((b) => b.command))].sort(), [...KEY_COMMANDS].sort());
  assertEquals([
    stepIndex(0, 3, -1),
    stepIndex(2, 3, 1),
    stepIndex(1, 3, 1),
    stepIndex(-1, 3, 1),
    stepIndex(-1, 3, -1),
    stepIndex(0, 0, 1),
  ], [0, 2, 2, 0, 2, -1]);
});

Deno.test("keyboard: undo puts a deleted cell back where it was, parameters intact, under a fresh id if its id was reused", () => {
  let doc = emptyNotebook("t");
  for (const t of ["markdown", "dataset", "grpo"] as const) doc = addCell(doc, t);
  const grpo = doc.cells[2];
  doc = { ...doc, cells: doc.cells.map((c) => (c.type === "dataset" ? { ...c, collapsed: true } : c)) };
  const del = { cell: doc.cells[1], index: 1 };
  const after = removeCell(doc, del.cell.id);
  assertEquals(restoreCell(after, del), doc);
  const reused = addCell(after, "evaluate", { id: del.cell.id as CellId });
  const back = restoreCell(reused, del);
  assertEquals(back.cells.map((c) => c.type), ["markdown", "dataset", "grpo", "evaluate"]);
  assert(back.cells[1].id !== del.cell.id && new Set(back.cells.map((c) => c.id)).size === 4, "fresh id");
  assertEquals(back.cells[1].params, del.cell.params);
  assertEquals(back.cells[2], grpo);
});
