// <rl-notebook>: the notebook — a toolbar (title, add cell, share, import/export, theme) and the
// ordered cells, each with move/collapse/remove. The document changes only through the
// controller's named actions; cells keep their own runtime state.
import { css, html, LitElement, nothing } from "lit";
import {
  addCell,
  type Cell,
  type CellId,
  moveCell,
  removeCell,
  setCollapsed,
  setTitle,
  updateParams,
} from "../core/notebook.ts";
import { CELL_TYPES, type CellType } from "../core/notebook-params.ts";
import type { NotebookController, ShareResult } from "./notebook-controller.ts";
import type { GpuSpeedEvent } from "./rl-cell-gpu.ts";
import "./rl-cell-gpu.ts";
import "./rl-cell-dataset.ts";
import "./rl-cell-markdown.ts";
import "./rl-cell-params.ts";
import "./rl-cell-run.ts";
import "./rl-cell-ask.ts";
import { Comlink, gpuWorker } from "./gpu-client.ts";
import { RunController } from "./run-controller.ts";
import { uploadedDataset, uploads } from "./dataset-upload.ts";
import { isRunnable } from "../runtime/run-plan.ts";
import "./rl-run-viewer.ts";
import "./rl-run-status.ts";
import "./rl-demo-results.ts";
import type { FollowEvent, ShowCellEvent } from "./rl-run-status.ts";
import type { ParamsChangeEvent } from "./rl-cell-params.ts";
import { keyboardStyles, NotebookKeys } from "./notebook-keys.ts";
import "./rl-notebook-picker.ts";
import "./rl-link-banner.ts";
import { StoreSubscription } from "./store-subscription.ts";
import { cellStyles } from "./styles.ts";

const CELL_TITLES: Record<CellType, string> = {
  markdown: "Notes",
  gpu: "GPU",
  dataset: "Dataset",
  model: "Model",
  prompt: "Prompt",
  reward: "Reward",
  evaluate: "Evaluate",
  select: "Select model and prompt",
  warmup: "Offline warm-up",
  grpo: "GRPO (online RL)",
  selfconsistency: "Self-consistency",
  prmdata: "PRM data",
  prmtrain: "PRM train",
  export: "Export",
  ask: "Ask",
};

export class RlNotebook extends LitElement {
  static override properties = {
    controller: { attribute: false },
    share: { state: true },
    copied: { state: true },
    message: { state: true },
    info: { state: true },
    editing: { state: true },
    runs: { attribute: false },
    follow: { state: true },
  };
  static override styles = [
    cellStyles,
    keyboardStyles,
    css`
      :host {
        display: block;
        max-width: 1040px;
        margin: 0 auto;
        padding: 12px 20px 64px;
      }
      header {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 8px;
        margin-bottom: 12px;
      }
      header .brand {
        color: var(--rl-accent);
        font-weight: 700;
        margin-right: 4px;
      }
      header input.title {
        font: inherit;
        font-size: 19px;
        font-weight: 600;
        flex: 1 1 320px;
        min-width: 200px;
        border: 1px solid transparent;
        background: transparent;
        color: var(--rl-text);
        padding: 2px 6px;
        border-radius: 4px;
      }
      header input.title:hover,
      header input.title:focus {
        border-color: var(--rl-border);
      }
      .bar {
        display: flex;
        flex-wrap: wrap;
        gap: 6px;
        align-items: center;
      }
      .bar button {
        white-space: nowrap;
      }
      .bar select {
        max-width: 170px;
      }
      .bar label.add-type {
        display: inline-flex;
        gap: 4px;
        align-items: center;
        font-size: 13px;
        color: var(--rl-muted);
      }
      select {
        font: inherit;
        padding: 5px;
        border-radius: 6px;
        border: 1px solid var(--rl-border);
        background: var(--rl-surface);
        color: var(--rl-text);
      }
      .banner {
        padding: 8px 12px;
        border-radius: 6px;
        margin-bottom: 10px;
        background: color-mix(in srgb, var(--rl-accent) 10%, transparent);
        border: 1px solid var(--rl-border);
      }
      .banner.warn {
        background: color-mix(in srgb, var(--rl-warn) 14%, transparent);
      }
      .share-row {
        display: flex;
        gap: 6px;
        align-items: center;
      }
      .share input {
        flex: 1;
        min-width: 0;
        font-family: var(--rl-mono);
        font-size: 12px;
      }
      ol {
        list-style: none;
        padding: 0;
        margin: 0;
        display: grid;
        gap: 12px;
      }
      li.cell {
        background: var(--rl-surface);
        border: 1px solid var(--rl-border);
        border-radius: var(--rl-radius);
        scroll-margin-top: 84px;
      }
      li.cell.running {
        border-color: var(--rl-accent);
        box-shadow: 0 0 0 2px color-mix(in srgb, var(--rl-accent) 30%, transparent);
      }
      .sticky {
        position: sticky;
        top: 0;
        z-index: 5;
        padding: 4px 0 8px;
        background: var(--rl-bg);
      }
      .cell-head {
        display: flex;
        align-items: center;
        gap: 6px;
        padding: 5px 10px;
        border-bottom: 1px solid var(--rl-border);
      }
      .cell-head .kind {
        font-size: 12px;
        text-transform: uppercase;
        letter-spacing: 0.06em;
        color: var(--rl-muted);
      }
      .cell-head .spacer {
        flex: 1;
      }
      .cell-head button {
        padding: 0 8px;
        font-size: 13px;
      }
      .cell-body {
        padding: 12px 16px;
        display: grid;
        gap: 10px;
      }
      li.collapsed .cell-head {
        border-bottom: none;
      }
      section.runs {
        margin-top: 18px;
        background: var(--rl-surface);
        border: 1px solid var(--rl-border);
        border-radius: var(--rl-radius);
        padding: 10px 16px;
      }
      section.runs h2 {
        font-size: 15px;
        margin: 0 0 8px;
      }
      textarea.md {
        font-family: var(--rl-mono);
        font-size: 13px;
        width: 100%;
        min-height: 140px;
        box-sizing: border-box;
        background: var(--rl-bg);
        color: var(--rl-text);
        border: 1px solid var(--rl-border);
        border-radius: 4px;
      }
    `,
  ];

  /** The page's notebook state. */
  controller: NotebookController | null = null;
  /** The share box: the link made for the document as it was then; any change of the document closes it. */
  private share: ShareResult | null = null;
  private copied: string | null = null;
  private message: string | null = null;
  /** A confirmation (an import); any later change of the document clears it. */
  private info: string | null = null;
  private editing = new Set<string>();
  /** Keyboard shortcuts (notebook-keys.ts); `?` lists them. */
  private readonly keys = new NotebookKeys(this, { exportFile: () => this.exportFile(), titles: CELL_TITLES });
  /** The page's run state (runs happen in the GPU worker); made with the controller unless given. */
  runs: RunController | null = null;
  private readonly onChange = () => {
    this.share = null;
    this.info = null;
  };
  /** Scroll to each cell a run reaches (the run status bar's "follow"). */
  private follow = true;
  /** The running cell last scrolled to, so a cell is brought into view once, when the run reaches it. */
  private followed: string | null = null;
  /** The last run's end already brought into view. */
  private shownEnd: object | null = null;
  private readonly onRunChange = () => {
    const last = this.runs?.last ?? null;
    if (last?.ok && last !== this.shownEnd) {
      // A finished run ends on its before/after picture.
      this.shownEnd = last;
      void this.updateComplete.then(() => this.showResults());
    }
    const current = this.runs?.active?.current ?? null;
    if (current === this.followed) return;
    this.followed = current;
    if (current && this.follow) void this.updateComplete.then(() => this.showCell(current));
  };
  /** Another notebook opened (import, menu): its own runs, not the previous one's outputs. */
  private readonly onReplace = () => {
    // The address bar no longer names the link once another notebook is open (a reload would reopen it).
    if (this.controller?.origin !== "link" && location.hash.startsWith("#nb=")) {
      history.replaceState(null, "", location.pathname + location.search);
    }
    void this.runs?.reopen(this.controller?.origin === "link");
  };
  private readonly docSubscription = new StoreSubscription(this, () => this.controller, {
    change: this.onChange,
    replace: this.onReplace,
  });
  private readonly runSubscription = new StoreSubscription(this, () => this.runs, { change: this.onRunChange });

  override updated(changed: Map<string, unknown>): void {
    if (changed.has("controller") && this.controller && !this.runs) this.startRuns(this.controller);
  }

  /** Creates the run state over the GPU worker and restores this notebook's last run (a link never auto-runs). */
  private startRuns(c: NotebookController): void {
    const runs = new RunController(
      gpuWorker(),
      () => c.doc,
      (events) => Comlink.proxy(events),
      new URL("./", document.baseURI).href,
      {
        uploads: uploadedDataset,
        uploadEvents: uploads,
        docEvents: c,
        transfer: Comlink.transfer,
        applyDoc: (d) => c.apply(() => d),
      },
    );
    this.runs = runs;
    runs.restore(c.origin === "link").catch((
      e,
    ) => (this.message = `Could not read this notebook's saved runs: ${e instanceof Error ? e.message : String(e)}`));
  }

  override render() {
    const c = this.controller;
    if (!c) return html`<p class="muted">Loading notebook…</p>`;
    const doc = c.doc;
    return html`
      <header>
        <span class="brand">RLVR Lab</span>
        <input class="title" data-testid="nb-title" aria-label="Notebook title" .value=${doc.title}
          @change=${(e: Event) => this.act((d) => setTitle(d, (e.target as HTMLInputElement).value))} />
        <span class="bar">
          <rl-notebook-picker .controller=${c}></rl-notebook-picker>
          <label class="add-type" title="The kind of cell \\"Add\\" puts at the end of the notebook">New cell
            <select data-testid="add-type">
              ${CELL_TYPES.map((t) => html`<option value=${t}>${CELL_TITLES[t]}</option>`)}
            </select></label>
          <button class="secondary" data-testid="add-cell" @click=${this.addSelected}>Add</button>
          <button class="secondary" data-testid="share" @click=${this
            .makeShare} title="Copy a link that carries this notebook's parameters">Share</button>
          <button class="secondary" data-testid="export" @click=${this.exportFile}>Export</button>
          <button class="secondary" data-testid="import" @click=${() =>
            this.renderRoot.querySelector<HTMLInputElement>("#import-file")?.click()}>Import</button>
          <input id="import-file" data-testid="import-file" type="file" accept=".json,application/json" hidden @change=${this
            .importFile} />
          ${this.runs?.active
            ? html`<button data-testid="stop-all" @click=${() => this.runs?.stop()}>Stop</button>`
            : html`
              <button data-testid="run-all" ?disabled=${this.runs?.measuring ?? false} @click=${() =>
                void this.runs?.runAll()}
                title="Plans the run on this device, then runs every cell in order">Run all</button>
            `}
          ${this.keys.renderButton()}
          <button class="secondary" @click=${this
            .toggleTheme} title="Switch light/dark theme" aria-label="Switch theme">◐</button>
        </span>
      </header>
      <rl-link-banner .controller=${c}></rl-link-banner>
      ${this.runs?.banner
        ? html`<div class="banner" data-testid="run-banner">${this.runs.banner}
        ${
          this.runs.pending && !this.runs.active
            ? html`<button data-testid="resume-run" @click=${() => this.runs?.resume()}>Resume run${
              this.runs.pending.step ? ` from step ${this.runs.pending.step}` : ""
            }</button>`
            : nothing
        }</div>`
        : nothing}
      ${c.notices.map((n) => html`<div class="banner warn" role="alert">${n}</div>`)}
      ${this.message
        ? html`<div class="banner warn" role="alert" data-testid="message">${this.message}</div>`
        : nothing}
      ${this.info ? html`<div class="banner" role="status" data-testid="info">${this.info}</div>` : nothing}
      ${this.renderShare()}
      ${this.runs && (this.runs.active || this.runs.measuring || this.runs.proposal || this.runs.last)
        ? html`
          <div class="sticky">
            <rl-run-status .controller=${this.runs} .titles=${CELL_TITLES} .follow=${this.follow}
              @show-cell=${(e: ShowCellEvent) => this.showCell(e.cellId)} @show-results=${() =>
                this.showResults()} @follow-change=${(e: FollowEvent) => (this.follow = e.follow)}></rl-run-status>
          </div>
        `
        : nothing}
      <ol data-testid="cells">${doc.cells.map((cell, i) => this.renderCell(cell, i, doc.cells.length))}</ol>
      ${this.runs ? html`<rl-demo-results .cells=${doc.cells} .controller=${this.runs}></rl-demo-results>` : nothing}
      ${this.keys.renderOverlays()}
      <section class="runs" aria-label="Run results">
        <h2>Run results</h2>
        <rl-run-viewer></rl-run-viewer>
      </section>
    `;
  }

  private renderShare() {
    const s = this.share;
    if (!s) return nothing;
    if (s.kind === "too-long") {
      return html`<div class="banner warn share" data-testid="share-too-long">This notebook needs a ${s.length.toLocaleString()}-character link, over the
        ${s.limit.toLocaleString()} characters links reliably survive. <button class="secondary" @click=${this.exportFile}>Download it as a file</button> to share it instead.</div>`;
    }
    const url = s.url;
    return html`
      <div class="banner share"
        data-testid="share-box">Share link (${s.length
          .toLocaleString()} characters; parameters only — no results, data or weights):
            <span class="share-row"><input readonly data-testid="share-url" .value=${url} @focus=${(e: Event) =>
              (e.target as HTMLInputElement).select()} />
            <button class="secondary" data-testid="share-copy" @click=${() => this.copy(url)}>Copy</button>
            <button class="secondary" aria-label="Close the share link" @click=${() => (this.share =
              null)}>✕</button></span>
            ${this.copied
              ? html`<span class="muted" role="status" data-testid="share-copied">${this.copied}</span>`
              : nothing}</div>
    `;
  }

  private renderCell(cell: Cell, i: number, n: number) {
    const editing = this.editing.has(cell.id);
    const running = this.runs?.active?.current === cell.id;
    return html`<li class="cell ${cell.collapsed ? "collapsed" : ""} ${
      running ? "running" : ""
    }" data-cell-type=${cell.type} data-cell-id=${cell.id}>
      <div class="cell-head">
        <span class="kind">${CELL_TITLES[cell.type]}</span>
        <span class="spacer"></span>
        ${
      cell.type === "markdown"
        ? html`<button class="secondary" data-testid="edit" @click=${() => this.toggleEdit(cell.id)}>${
          editing ? "Done" : "Edit"
        }</button>`
        : nothing
    }
        <button class="secondary" aria-label="Move up" ?disabled=${i === 0} @click=${() =>
      this.act((d) => moveCell(d, cell.id, i - 1))}>↑</button>
        <button class="secondary" aria-label="Move down" ?disabled=${i === n - 1} @click=${() =>
      this.act((d) => moveCell(d, cell.id, i + 1))}>↓</button>
        <button class="secondary" aria-expanded=${!cell.collapsed} @click=${() =>
      this.act((d) => setCollapsed(d, cell.id, !cell.collapsed))}>${cell.collapsed ? "Expand" : "Collapse"}</button>
        <button class="secondary" aria-label="Remove cell" data-testid="remove" @click=${() =>
      this.act((d) => removeCell(d, cell.id))}>✕</button>
      </div>
      ${cell.collapsed ? nothing : html`<div class="cell-body">${this.renderBody(cell, editing)}</div>`}
    </li>`;
  }

  private renderBody(cell: Cell, editing: boolean) {
    switch (cell.type) {
      case "markdown":
        return editing
          ? html`
            <textarea class="md" aria-label="Markdown source" .value=${cell.params.source}
              @change=${(e: Event) =>
                this.act((d) =>
                  updateParams(d, cell.id, "markdown", { source: (e.target as HTMLTextAreaElement).value })
                )}></textarea>
          `
          : html`<rl-cell-markdown .source=${cell.params.source}></rl-cell-markdown>`;
      case "gpu":
        return html`<rl-cell-gpu @gpu-speed=${(e: GpuSpeedEvent) =>
          this.runs && (this.runs.speed = e.gflops)}></rl-cell-gpu>`;
      case "dataset":
        return html`${this.renderParams(cell)}<rl-cell-dataset .params=${cell.params}></rl-cell-dataset>${
          this.renderRun(cell)
        }`;
      case "ask":
        return html`<rl-cell-ask .cell=${cell} .controller=${this.runs} .cells=${
          this.controller?.doc.cells ?? []
        } @params-change=${(
          e: ParamsChangeEvent,
        ) => this.act((d) => updateParams(d, cell.id, "ask", e.params))}></rl-cell-ask>`;
      default:
        return html`${this.renderParams(cell)}${this.renderRun(cell)}`;
    }
  }

  private renderRun(cell: Cell) {
    return this.runs && isRunnable(cell)
      ? html`<rl-cell-run .cell=${cell} .controller=${this.runs}></rl-cell-run>`
      : nothing;
  }

  private renderParams(cell: Cell) {
    return html`<rl-cell-params .cell=${cell} @params-change=${(e: ParamsChangeEvent) =>
      this.act((d) => updateParams(d, cell.id, cell.type, e.params as never))}></rl-cell-params>`;
  }

  /** Scrolls a cell's top into view (below the sticky run status). */
  private showResults(): void {
    this.renderRoot.querySelector("rl-demo-results")?.scrollIntoView({ block: "start", behavior: "smooth" });
  }

  private showCell(cellId: string): void {
    this.renderRoot.querySelector(`li[data-cell-id="${CSS.escape(cellId)}"]`)?.scrollIntoView({
      block: "start",
      behavior: "smooth",
    });
  }

  /** Applies an action; its error is shown and the document is left as it was. */
  private act(action: Parameters<NotebookController["apply"]>[0]): void {
    try {
      this.controller?.apply(action);
      this.message = null;
    } catch (e) {
      this.message = e instanceof Error ? e.message : String(e);
    }
  }

  private toggleEdit(id: CellId): void {
    const next = new Set(this.editing);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    this.editing = next;
  }

  private addSelected(): void {
    const type = this.renderRoot.querySelector<HTMLSelectElement>("[data-testid=add-type]")?.value as
      | CellType
      | undefined;
    if (type) this.act((d) => addCell(d, type));
  }

  private makeShare(): void {
    if (!this.controller) return;
    this.share = this.controller.share(location.href);
    this.copied = null;
    if (this.share.kind === "link") void this.copy(this.share.url, true);
  }

  /** Copies the link; says so, or (when the browser refuses) how to copy it by hand. */
  private async copy(url: string, quiet = false): Promise<void> {
    try {
      if (!navigator.clipboard) throw new Error("no clipboard");
      await navigator.clipboard.writeText(url);
      if (this.share?.kind === "link" && this.share.url === url) this.copied = "Copied to the clipboard.";
    } catch {
      if (!quiet && this.share?.kind === "link" && this.share.url === url) {
        this.copied = "The browser did not allow copying: select the link and copy it (Ctrl+C).";
      }
    }
  }

  private exportFile(): void {
    if (!this.controller) return;
    const blob = new Blob([this.controller.exportText()], { type: "application/json" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `${this.controller.doc.title.replace(/[^\w.-]+/g, "_").slice(0, 80) || "notebook"}.rlvr.json`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  }

  private async importFile(e: Event): Promise<void> {
    const input = e.target as HTMLInputElement;
    const file = input.files?.[0];
    input.value = "";
    if (!file || !this.controller) return;
    const r = this.controller.importText(await file.text(), file.name);
    this.message = r.ok ? null : r.message;
    this.info = r.ok ? r.message : null;
  }

  private toggleTheme(): void {
    const root = document.documentElement;
    const dark = root.dataset.theme
      ? root.dataset.theme === "dark"
      : matchMedia("(prefers-color-scheme: dark)").matches;
    root.dataset.theme = dark ? "light" : "dark";
    try {
      localStorage.setItem("rlvr-theme", root.dataset.theme);
    } catch {
      // No storage: the theme lasts for this visit.
    }
  }
}

customElements.define("rl-notebook", RlNotebook);

declare global {
  interface HTMLElementTagNameMap {
    "rl-notebook": RlNotebook;
  }
}
