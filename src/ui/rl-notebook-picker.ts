// <rl-notebook-picker>: the "Notebooks" menu — opens one of the built-in notebooks (notebooks/*.json)
// in place of the open one, and offers the way back to the notebook that was open (the
// controller's `previous`, kept in storage, so a mis-click or a reload loses nothing).
import { css, html, LitElement, nothing } from "lit";
import demo from "../../notebooks/demo.json";
import hub from "../../notebooks/hub-qwen-coder.json";
import { formatIssues, parseNotebook } from "../core/notebook.ts";
import type { NotebookController } from "./notebook-controller.ts";
import { StoreSubscription } from "./store-subscription.ts";
import { cellStyles } from "./styles.ts";

/** The notebooks the page ships, in menu order. */
export const BUILTIN_NOTEBOOKS: readonly { id: string; label: string; json: unknown }[] = [
  { id: "demo", label: "Demo: built-in data and model (offline)", json: demo },
  { id: "hub-qwen-coder", label: "Hub: Qwen2.5-Coder-0.5B on your database", json: hub },
];

export class RlNotebookPicker extends LitElement {
  static override properties = { controller: { attribute: false }, error: { state: true } };
  static override styles = [
    cellStyles,
    css`
      :host {
        display: inline-flex;
        gap: 6px;
        align-items: center;
      }
      select {
        font: inherit;
        padding: 5px;
        border-radius: 6px;
        border: 1px solid var(--rl-border);
        background: var(--rl-surface);
        color: var(--rl-text);
      }
      select:focus-visible,
      button:focus-visible {
        outline: 2px solid var(--rl-accent);
        outline-offset: 1px;
      }
      select {
        max-width: 150px;
      }
      button {
        padding: 4px 10px;
        white-space: nowrap;
        max-width: 160px;
        overflow: hidden;
        text-overflow: ellipsis;
      }
    `,
  ];

  /** The page's notebook state. */
  controller: NotebookController | null = null;
  private error: string | null = null;
  private readonly subscription = new StoreSubscription(this, () => this.controller);

  override render() {
    const previous = this.controller?.previous ?? null;
    return html`<select data-testid="notebooks" aria-label="Open a built-in notebook" @change=${this.pick}>
        <option value="">Notebooks…</option>
        ${BUILTIN_NOTEBOOKS.map((n) => html`<option value=${n.id}>${n.label}</option>`)}
      </select>
      ${
      previous
        ? html`
          <button class="secondary" data-testid="notebook-back" title=${`Reopen “${previous.title}”, the notebook open before`}
            @click=${() => this.controller?.back()}>↩ Back to ${shorten(previous.title)}</button>
        `
        : nothing
    }
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
    c.replace(r.doc, "builtin");
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
