// <rl-notebook>: renders the notebook document as an ordered list of cells. The document holds
// parameters only; what a cell shows at run time lives in the cell elements, apart from it.
import { css, html, LitElement, nothing } from "lit";
import "./rl-cell-gpu.ts";
import "./rl-cell-markdown.ts";
import { cellStyles } from "./styles.ts";

/** The part of a notebook cell this element needs to lay it out. */
export interface CellView {
  id: string;
  type: string;
  collapsed?: boolean;
  params?: Record<string, unknown>;
}

/** The part of a notebook document this element needs. */
export interface NotebookView {
  title: string;
  cells: CellView[];
}

const CELL_TITLES: Record<string, string> = {
  markdown: "Notes",
  gpu: "GPU",
};

export class RlNotebook extends LitElement {
  static override properties = { doc: { attribute: false }, collapsed: { state: true } };
  static override styles = [cellStyles, css`
    :host { display: block; max-width: 980px; margin: 0 auto; padding: 16px 20px 64px; }
    header { display: flex; align-items: baseline; gap: 12px; margin-bottom: 12px; }
    header h1 { font-size: 20px; margin: 0; }
    header .brand { color: var(--rl-accent); font-weight: 700; }
    header .spacer { flex: 1; }
    ol { list-style: none; padding: 0; margin: 0; display: grid; gap: 12px; }
    li.cell { background: var(--rl-surface); border: 1px solid var(--rl-border); border-radius: var(--rl-radius); }
    .cell-head { display: flex; align-items: center; gap: 8px; padding: 6px 12px; border-bottom: 1px solid var(--rl-border); }
    .cell-head .kind { font-size: 12px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--rl-muted); }
    .cell-head .spacer { flex: 1; }
    .cell-head button { padding: 0 8px; font-size: 13px; }
    .cell-body { padding: 12px 16px; }
    li.collapsed .cell-head { border-bottom: none; }
  `];

  /** The notebook to show. */
  doc: NotebookView | null = null;
  private collapsed = new Set<string>();

  override render() {
    const doc = this.doc;
    if (!doc) return html`<p class="muted">Loading notebook…</p>`;
    return html`
      <header>
        <span class="brand">RLVR Lab</span>
        <h1 data-testid="nb-title">${doc.title}</h1>
        <span class="spacer"></span>
        <button class="secondary" @click=${this.toggleTheme} title="Switch light/dark theme">Theme</button>
      </header>
      <ol data-testid="cells">
        ${doc.cells.map((c) => this.renderCell(c))}
      </ol>`;
  }

  private renderCell(c: CellView) {
    const isCollapsed = this.collapsed.has(c.id) || (c.collapsed === true && !this.collapsed.has(`open:${c.id}`));
    return html`<li class="cell ${isCollapsed ? "collapsed" : ""}" data-cell-type=${c.type} data-cell-id=${c.id}>
      <div class="cell-head">
        <span class="kind">${CELL_TITLES[c.type] ?? c.type}</span>
        <span class="spacer"></span>
        <button class="secondary" aria-expanded=${!isCollapsed} @click=${() => this.toggle(c, isCollapsed)}>${isCollapsed ? "Expand" : "Collapse"}</button>
      </div>
      ${isCollapsed ? nothing : html`<div class="cell-body">${this.renderBody(c)}</div>`}
    </li>`;
  }

  private renderBody(c: CellView) {
    switch (c.type) {
      case "markdown":
        return html`<rl-cell-markdown .source=${String(c.params?.source ?? "")}></rl-cell-markdown>`;
      case "gpu":
        return html`<rl-cell-gpu></rl-cell-gpu>`;
      default:
        return html`<p class="muted">This build cannot show a <code>${c.type}</code> cell yet; its parameters are kept in the document.</p>`;
    }
  }

  private toggle(c: CellView, isCollapsed: boolean): void {
    const next = new Set(this.collapsed);
    if (isCollapsed) {
      next.delete(c.id);
      next.add(`open:${c.id}`);
    } else {
      next.add(c.id);
      next.delete(`open:${c.id}`);
    }
    this.collapsed = next;
  }

  private toggleTheme(): void {
    const root = document.documentElement;
    const dark = root.dataset.theme ? root.dataset.theme === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
    root.dataset.theme = dark ? "light" : "dark";
    try {
      localStorage.setItem("rlvr-theme", root.dataset.theme);
    } catch {
      // Storage may be unavailable (private mode); the theme then lasts for this visit only.
    }
  }
}

customElements.define("rl-notebook", RlNotebook);

declare global {
  interface HTMLElementTagNameMap {
    "rl-notebook": RlNotebook;
  }
}
