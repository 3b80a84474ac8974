// <rl-notebook-picker>: the "Notebooks" menu — opens one of the built-in notebooks (notebooks/*.json)
// in place of the open one, and offers the way back to the notebook that was open, so a mis-click
// loses nothing.
import { css, html, LitElement, nothing } from "lit";
import demo from "../../notebooks/demo.json";
import hub from "../../notebooks/hub-qwen-coder.json";
import { formatIssues, type Notebook, parseNotebook } from "../core/notebook.ts";
import type { DocOrigin, NotebookController } from "./notebook-controller.ts";
import { cellStyles } from "./styles.ts";

/** The notebooks the page ships, in menu order. */
export const BUILTIN_NOTEBOOKS: readonly { id: string; label: string; json: unknown }[] = [
  { id: "demo", label: "Demo: built-in data and model (offline)", json: demo },
  { id: "hub-qwen-coder", label: "Hub: Qwen2.5-Coder-0.5B on your database", json: hub },
];

export class RlNotebookPicker extends LitElement {
  static override properties = { controller: { attribute: false }, previous: { state: true }, error: { state: true } };
  static override styles = [cellStyles, css`
    :host { display: inline-flex; gap: 6px; align-items: center; }
    select { font: inherit; padding: 5px; border-radius: 6px; border: 1px solid var(--rl-border); background: var(--rl-surface); color: var(--rl-text); }
    select:focus-visible, button:focus-visible { outline: 2px solid var(--rl-accent); outline-offset: 1px; }
    select { max-width: 150px; }
    button { padding: 4px 10px; white-space: nowrap; max-width: 160px; overflow: hidden; text-overflow: ellipsis; }
  `];

  /** The page's notebook state. */
  controller: NotebookController | null = null;
  /** The notebook open before the last pick, for "back". */
  private previous: { doc: Notebook; origin: DocOrigin } | null = null;
  private error: string | null = null;

  override render() {
    return html`<select data-testid="notebooks" aria-label="Open a built-in notebook" @change=${this.pick}>
        <option value="">Notebooks…</option>
        ${BUILTIN_NOTEBOOKS.map((n) => html`<option value=${n.id}>${n.label}</option>`)}
      </select>
      ${this.previous ? html`<button class="secondary" data-testid="notebook-back" title=${`Reopen “${this.previous.doc.title}”, the notebook open before`} @click=${this.back}>↩ Back to ${shorten(this.previous.doc.title)}</button>` : nothing}
      ${this.error ? html`<span class="bad" role="alert">${this.error}</span>` : nothing}`;
  }

  private pick(e: Event): void {
    const select = e.target as HTMLSelectElement;
    const entry = BUILTIN_NOTEBOOKS.find((n) => n.id === select.value);
    select.value = "";
    const c = this.controller;
    if (!entry || !c) return;
    const r = parseNotebook(entry.json);
    if (!r.ok) {
      this.error = `${entry.id} is not a valid notebook: ${formatIssues(r.errors)}`;
      return;
    }
    this.error = null;
    this.previous = { doc: c.doc, origin: c.origin };
    c.replace(r.doc, "builtin");
  }

  private back(): void {
    const p = this.previous;
    if (!p || !this.controller) return;
    this.previous = { doc: this.controller.doc, origin: this.controller.origin };
    this.controller.replace(p.doc, p.origin);
  }
}

function shorten(s: string): string {
  return s.length > 22 ? s.slice(0, 21) + "…" : s;
}

customElements.define("rl-notebook-picker", RlNotebookPicker);

declare global {
  interface HTMLElementTagNameMap {
    "rl-notebook-picker": RlNotebookPicker;
  }
}
