// Keyboard use of <rl-notebook>: a Lit reactive controller that maps key presses (keyboard.ts)
// to the notebook's named actions, keeps the selected cell, and renders the help overlay, the
// "add which cell?" menu and the undo note. Running a cell dispatches `rl-run-cell` on the
// notebook element (see RunCellEvent); when nobody cancels it and the page has a run controller
// (`host.runs.run("cell", id)`), that is called.
import { css, html, nothing, type ReactiveController, type ReactiveControllerHost } from "lit";
import { addCell, type Cell, type CellId, moveCell, removeCell } from "../core/notebook.ts";
import { CELL_TYPES, type CellType } from "../core/notebook-params.ts";
import {
  type DeletedCell,
  INITIAL_KEY_STATE,
  isControlTarget,
  isTypingTarget,
  KEY_BINDINGS,
  type KeyCommand,
  type KeyState,
  resolveKey,
  restoreCell,
  stepIndex,
} from "./keyboard.ts";
import type { NotebookController } from "./notebook-controller.ts";

/**
 * Fired on <rl-notebook> (bubbles, composed, cancelable) when the keyboard asks to run a cell
 * (Shift+Enter, Ctrl+Enter). A listener that runs the cell itself calls preventDefault(); otherwise
 * the notebook's run controller, when it has one, runs it.
 */
export class RunCellEvent extends CustomEvent<{ cellId: CellId }> {
  constructor(cellId: CellId) {
    super("rl-run-cell", { detail: { cellId }, bubbles: true, composed: true, cancelable: true });
  }
}

/** What the controller needs of the notebook element. */
export type KeysHost = ReactiveControllerHost & HTMLElement & {
  controller: NotebookController | null;
  readonly renderRoot: HTMLElement | DocumentFragment;
  /** The page's run controller, when in-page runs exist. */
  runs?: { run(mode: "cell", cellId: string): unknown } | null;
};

/** Callbacks into the element for what only it does. */
export interface KeysOptions {
  exportFile: () => void;
  titles: Record<CellType, string>;
}

/** Keyboard state and wiring of one notebook element. */
export class NotebookKeys implements ReactiveController {
  /** The cell the keys act on. */
  selected: CellId | null = null;
  helpOpen = false;
  /** The "add which cell?" menu: where the new cell goes. */
  menu: { at: number; where: string } | null = null;
  /** Cells deleted with d d, newest last (z brings them back). */
  private readonly deleted: DeletedCell[] = [];
  private note: string | null = null;
  private state: KeyState = INITIAL_KEY_STATE;

  constructor(private readonly host: KeysHost, private readonly opts: KeysOptions) {
    host.addController(this);
  }

  hostConnected(): void {
    globalThis.addEventListener("keydown", this.onKey);
    this.host.addEventListener("focusin", this.onFocus);
  }

  hostDisconnected(): void {
    globalThis.removeEventListener("keydown", this.onKey);
    this.host.removeEventListener("focusin", this.onFocus);
  }

  hostUpdated(): void {
    for (const li of this.cells()) {
      if (!li.hasAttribute("tabindex")) li.tabIndex = 0;
      li.classList.toggle("kbd-selected", li.dataset.cellId === this.selected);
    }
  }

  /** The toolbar button that opens the help. */
  renderButton() {
    return html`
      <button class="secondary" data-testid="keys-help" title="Keyboard shortcuts (?)" aria-label="Keyboard shortcuts"
        @click=${() => this.toggleHelp()}>?</button>
    `;
  }

  /** The help overlay, the add-cell menu and the undo note (each only when open). */
  renderOverlays() {
    return html`
      ${this.note
        ? html`<div class="kbd-note" role="status" data-testid="undo-note">${this.note}
        <button class="secondary" data-testid="undo-delete" @click=${() => this.run("undo")}>Undo (Z)</button>
        <button class="secondary" aria-label="Dismiss" @click=${() => this.setNote(null)}>✕</button></div>`
        : nothing}
      ${this.menu
        ? html`
          <div class="kbd-layer" @click=${(e: Event) => e.target === e.currentTarget && this.closeMenu()}>
            <div class="kbd-menu" role="menu" aria-label="Type of the new cell" data-testid="add-menu">
                    <div class="kbd-title">Add a cell ${this.menu.where}</div>
                    ${CELL_TYPES.map((t) =>
                      html`<button role="menuitem" class="secondary" data-type=${t} @click=${() => this.addAt(t)}>${
                        this.opts.titles[t]
                      }</button>`
                    )}
                  </div>
          </div>
        `
        : nothing}
      ${this.helpOpen
        ? html`
          <div class="kbd-layer" @click=${(e: Event) => e.target === e.currentTarget && this.toggleHelp()}>
            <div class="kbd-help" role="dialog" aria-modal="true" aria-label="Keyboard shortcuts" data-testid="keys-overlay">
              <div
                class="kbd-title">Keyboard shortcuts <button class="secondary" data-testid="keys-close" @click=${() =>
                  this.toggleHelp()}>Close</button></div>
              <p
                class="muted">Keys act on the selected cell (outlined) when you are not typing in a field; Esc leaves a field.</p>
              <table>${KEY_BINDINGS.map((b) =>
                html`
                  <tr>
                    <td>${b.keys.map((k, i) =>
                      html`${i ? (b.command === "delete" ? " " : " / ") : ""}<kbd>${k}</kbd>`
                    )}</td>
                    <td>${b.description}</td>
                  </tr>
                `
              )}</table>
            </div>
          </div>
        `
        : nothing}
    `;
  }

  private readonly onFocus = (e: FocusEvent) => {
    const li = this.cellOf(e.composedPath());
    if (li?.dataset.cellId && li.dataset.cellId !== this.selected) this.select(li.dataset.cellId as CellId, false);
  };

  private readonly onKey = (e: KeyboardEvent) => {
    if (e.defaultPrevented || e.isComposing || !this.host.controller) return;
    const path = e.composedPath();
    const target = path[0] instanceof Element ? path[0] : null;
    // Keys meant for another part of the page (outside this notebook, not on the page itself) are not ours.
    if (target && target !== document.body && target !== document.documentElement && !path.includes(this.host)) return;
    if (this.menu) return this.menuKey(e, target);
    if (this.helpOpen) {
      if (e.key === "Escape" || e.key === "?") {
        e.preventDefault();
        this.toggleHelp();
      }
      return;
    }
    const typingEl = target as (Element & { type?: string; isContentEditable?: boolean }) | null;
    const r = resolveKey(
      e,
      { typing: isTypingTarget(typingEl), onControl: isControlTarget(typingEl) },
      this.state,
      e.timeStamp,
    );
    this.state = r.state;
    if (!r.command) return;
    e.preventDefault();
    if (r.command === "leave") return this.leave(path);
    this.run(r.command);
  };

  private menuKey(e: KeyboardEvent, target: Element | null): void {
    const items = [...this.root().querySelectorAll<HTMLButtonElement>(".kbd-menu button")];
    const i = target instanceof HTMLButtonElement ? items.indexOf(target) : -1;
    if (e.key === "Escape") {
      e.preventDefault();
      this.closeMenu();
    } else if (e.key === "ArrowDown" || e.key === "ArrowUp" || e.key === "j" || e.key === "k") {
      e.preventDefault();
      items[stepIndex(i, items.length, e.key === "ArrowDown" || e.key === "j" ? 1 : -1)]?.focus();
    }
  }

  /** Carries out a command on the selected cell. */
  run(command: Exclude<KeyCommand, "leave">): void {
    const c = this.host.controller;
    if (!c) return;
    const ids = c.doc.cells.map((x) => x.id);
    const i = this.selected ? ids.indexOf(this.selected) : -1;
    const sel = i >= 0 ? c.doc.cells[i] : null;
    switch (command) {
      case "next":
      case "prev":
        return this.selectAt(stepIndex(i, ids.length, command === "next" ? 1 : -1));
      case "help":
        return this.toggleHelp();
      case "export":
        return this.opts.exportFile();
      case "add-above":
      case "add-below": {
        const below = command === "add-below";
        const at = i < 0 ? (below ? ids.length : 0) : i + (below ? 1 : 0);
        this.menu = {
          at,
          where: sel
            ? `${below ? "below" : "above"} “${this.opts.titles[sel.type]}”`
            : below
            ? "at the end"
            : "at the top",
        };
        this.host.requestUpdate();
        void this.host.updateComplete.then(() =>
          this.root().querySelector<HTMLButtonElement>(".kbd-menu button")?.focus()
        );
        return;
      }
      case "undo": {
        const d = this.deleted.pop();
        if (!d) return this.setNote("Nothing to undo.");
        c.apply((doc) => restoreCell(doc, d));
        const back = c.doc.cells[Math.min(d.index, c.doc.cells.length - 1)];
        this.setNote(
          this.deleted.length
            ? `Restored the ${this.opts.titles[d.cell.type]} cell; Z restores the one deleted before it.`
            : null,
        );
        return this.select(back.id, true);
      }
      default:
        break;
    }
    if (!sel) return;
    switch (command) {
      case "edit":
        return void this.edit(sel);
      case "run":
      case "run-next":
        this.runCell(sel);
        if (command === "run-next") this.selectAt(stepIndex(i, ids.length, 1));
        return;
      case "delete":
        c.apply((doc) => removeCell(doc, sel.id));
        this.deleted.push({ cell: sel, index: i });
        if (this.deleted.length > 50) this.deleted.shift();
        this.setNote(`Deleted the ${this.opts.titles[sel.type]} cell.`);
        return this.selectAt(Math.min(i, c.doc.cells.length - 1));
      case "move-up":
      case "move-down":
        c.apply((doc) => moveCell(doc, sel.id, i + (command === "move-up" ? -1 : 1)));
        return this.select(sel.id, true);
      default:
        return assertNever(command);
    }
  }

  private runCell(cell: Cell): void {
    const ev = new RunCellEvent(cell.id);
    this.host.dispatchEvent(ev);
    if (!ev.defaultPrevented && this.li(cell.id)?.querySelector("rl-cell-run")) this.host.runs?.run("cell", cell.id);
    // A note being edited is rendered, as Shift+Enter does in Jupyter.
    const done = cell.type === "markdown"
      ? this.li(cell.id)?.querySelector<HTMLButtonElement>("[data-testid=edit]")
      : null;
    if (done?.textContent?.trim() === "Done") done.click();
  }

  private async edit(cell: Cell): Promise<void> {
    const li = this.li(cell.id);
    if (!li) return;
    if (cell.collapsed) li.querySelector<HTMLButtonElement>("[aria-expanded]")?.click();
    const editBtn = li.querySelector<HTMLButtonElement>("[data-testid=edit]");
    if (cell.type === "markdown" && editBtn?.textContent?.trim() === "Edit") editBtn.click();
    await this.host.updateComplete;
    const body = this.li(cell.id)?.querySelector(".cell-body");
    const field = body ? await firstField(body) : null;
    field?.focus();
  }

  /** Esc: out of the field (back to its cell), or out of the selection's overlays. */
  private leave(path: EventTarget[]): void {
    const li = this.cellOf(path);
    const active = path[0];
    if (active instanceof HTMLElement && active !== li) active.blur();
    if (li) li.focus();
    this.setNote(null);
  }

  private addAt(type: CellType): void {
    const c = this.host.controller;
    const m = this.menu;
    if (!c || !m) return;
    this.menu = null;
    c.apply((doc) => addCell(doc, type, { at: m.at }));
    this.select(c.doc.cells[Math.min(m.at, c.doc.cells.length - 1)].id, true);
  }

  private closeMenu(): void {
    this.menu = null;
    this.host.requestUpdate();
    if (this.selected) void this.focusCell(this.selected);
  }

  private toggleHelp(): void {
    this.helpOpen = !this.helpOpen;
    this.host.requestUpdate();
    if (this.helpOpen) {
      void this.host.updateComplete.then(() =>
        this.root().querySelector<HTMLButtonElement>("[data-testid=keys-close]")?.focus()
      );
    } else if (this.selected) void this.focusCell(this.selected);
  }

  private setNote(note: string | null): void {
    if (note === this.note) return;
    this.note = note;
    this.host.requestUpdate();
  }

  private selectAt(i: number): void {
    const cells = this.host.controller?.doc.cells ?? [];
    if (i >= 0 && i < cells.length) this.select(cells[i].id, true);
  }

  private select(id: CellId, focus: boolean): void {
    this.selected = id;
    for (const li of this.cells()) li.classList.toggle("kbd-selected", li.dataset.cellId === id);
    if (focus) void this.focusCell(id);
  }

  private async focusCell(id: CellId): Promise<void> {
    await this.host.updateComplete;
    const li = this.li(id);
    if (!li) return;
    li.focus({ preventScroll: true });
    li.scrollIntoView({ block: "nearest" });
  }

  private root(): HTMLElement | DocumentFragment {
    return this.host.renderRoot;
  }

  private cells(): HTMLLIElement[] {
    return [...this.root().querySelectorAll<HTMLLIElement>("li[data-cell-id]")];
  }

  private li(id: string): HTMLLIElement | null {
    return this.cells().find((li) => li.dataset.cellId === id) ?? null;
  }

  private cellOf(path: EventTarget[]): HTMLLIElement | null {
    for (const t of path) if (t instanceof HTMLLIElement && t.dataset.cellId && this.cells().includes(t)) return t;
    return null;
  }
}

/** The first enabled field or button inside `root`, looking into open shadow roots (cells are elements). */
async function firstField(root: Element): Promise<HTMLElement | null> {
  const walk = async (node: Element | ShadowRoot): Promise<HTMLElement | null> => {
    for (const el of node.children) {
      if (el instanceof HTMLElement && "updateComplete" in el) {
        await (el as unknown as { updateComplete: Promise<unknown> }).updateComplete;
      }
      if (
        el.matches(
          "input:not([type=hidden]):not([hidden]):not([disabled]), select:not([disabled]), textarea:not([disabled]), button:not([disabled])",
        ) && el instanceof HTMLElement
      ) return el;
      const inner = (el.shadowRoot && (await walk(el.shadowRoot))) || (await walk(el));
      if (inner) return inner;
    }
    return null;
  };
  return await walk(root);
}

function assertNever(x: never): never {
  throw new Error(`unexpected command ${String(x)}`);
}

/** Styles of the selection, the focus ring and the overlays (added to <rl-notebook>'s styles). */
export const keyboardStyles = css`
  li.cell {
    scroll-margin: 12px;
  }
  li.cell:focus {
    outline: none;
  }
  li.cell:focus-visible,
  li.cell.kbd-selected:focus-within {
    outline: 2px solid var(--rl-accent);
    outline-offset: 2px;
  }
  li.cell.kbd-selected {
    box-shadow: inset 4px 0 0 var(--rl-accent);
  }
  button:focus-visible,
  input:focus-visible,
  select:focus-visible {
    outline: 2px solid var(--rl-accent);
    outline-offset: 1px;
  }
  .kbd-layer {
    position: fixed;
    inset: 0;
    background: color-mix(in srgb, var(--rl-bg) 55%, transparent);
    z-index: 20;
    display: grid;
    place-items: start center;
    padding-top: 10vh;
  }
  .kbd-help,
  .kbd-menu {
    background: var(--rl-surface);
    color: var(--rl-text);
    border: 1px solid var(--rl-border);
    border-radius: var(--rl-radius);
    box-shadow: 0 8px 28px rgb(0 0 0 / 0.25);
    padding: 12px 16px;
    max-height: 78vh;
    overflow: auto;
  }
  .kbd-help {
    width: min(640px, 92vw);
  }
  .kbd-help table {
    width: 100%;
    font-size: 13px;
  }
  .kbd-help td:first-child {
    white-space: nowrap;
    padding-right: 16px;
  }
  .kbd-menu {
    display: grid;
    gap: 4px;
    min-width: 240px;
  }
  .kbd-menu button {
    text-align: left;
  }
  .kbd-title {
    font-weight: 600;
    display: flex;
    justify-content: space-between;
    align-items: center;
    gap: 12px;
    margin-bottom: 6px;
  }
  kbd {
    font-family: var(--rl-mono);
    font-size: 12px;
    border: 1px solid var(--rl-border);
    border-bottom-width: 2px;
    border-radius: 4px;
    padding: 0 5px;
    background: var(--rl-bg);
  }
  .kbd-note {
    position: fixed;
    bottom: 16px;
    left: 50%;
    transform: translateX(-50%);
    z-index: 15;
    background: var(--rl-surface);
    border: 1px solid var(--rl-border);
    border-radius: var(--rl-radius);
    padding: 6px 10px;
    box-shadow: 0 4px 16px rgb(0 0 0 / 0.2);
    display: flex;
    gap: 8px;
    align-items: center;
  }
  .kbd-note button {
    padding: 2px 10px;
  }
`;
