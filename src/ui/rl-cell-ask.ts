// <rl-cell-ask>: the ask cell — a question box, the database and the trained stage to ask, an Ask
// button, and the two answers side by side (the base model without adapter, and the stage's
// adapter): SQL, the first rows and their count or the error, and the definitions each SQL used.
// The stages are the run folder's checkpoints (OPFS), read again after every run and on load, so a
// reload offers them; the answers come from a run of the setup cells and this cell (ask.ts).
import { css, html, LitElement, nothing } from "lit";
import type { Cell, CellOf } from "../core/notebook.ts";
import { displayText } from "../runtime/records.ts";
import type { AskAnswer, AskReport } from "../runtime/records.ts";
import { databaseChoices, type StageChoice, stageChoices, stageLabel } from "./ask-model.ts";
import { ParamsChangeEvent } from "./rl-cell-params.ts";
import type { RunController } from "./run-controller.ts";
import { highlightSql } from "./sql-highlight.ts";
import { StoreSubscription } from "./store-subscription.ts";
import { cellStyles, sqlStyles } from "./styles.ts";

export class RlCellAsk extends LitElement {
  static override properties = {
    cell: { attribute: false },
    controller: { attribute: false },
    cells: { attribute: false },
    stages: { state: true },
  };
  static override styles = [
    cellStyles,
    sqlStyles,
    css`
      .form {
        display: grid;
        gap: 8px;
      }
      textarea {
        font: inherit;
        width: 100%;
        box-sizing: border-box;
        min-height: 3em;
        padding: 6px 8px;
      }
      .row {
        display: flex;
        gap: 12px;
        align-items: center;
        flex-wrap: wrap;
        font-size: 14px;
      }
      select {
        font: inherit;
      }
      .answers {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(280px, 1fr));
        gap: 12px;
        margin-top: 10px;
      }
      .answer {
        border: 1px solid var(--rl-border);
        border-radius: 6px;
        padding: 8px 10px;
        min-width: 0;
      }
      .answer h4 {
        margin: 0 0 6px;
        font-size: 14px;
      }
      pre.sql {
        margin-bottom: 6px;
      }
      .rows {
        overflow-x: auto;
      }
      .rows table {
        font-size: 12px;
      }
      .note {
        font-size: 13px;
        color: var(--rl-muted);
      }
      ul.defs {
        margin: 4px 0 0;
        padding-left: 18px;
        font-size: 13px;
      }
    `,
  ];

  /** The ask cell. */
  cell: CellOf<"ask"> | null = null;
  /** The page's run state. */
  controller: RunController | null = null;
  /** The notebook's cells (which dataset, which training cells). */
  cells: readonly Cell[] = [];
  /** The run's checkpointed stages; null until read. */
  private stages: StageChoice[] | null = null;
  private busyBefore = false;
  private reading = 0;
  private readonly onChange = () => {
    const busy = this.controller?.active != null;
    // A run that ended may have written checkpoints.
    if (this.busyBefore && !busy) void this.readStages();
    this.busyBefore = busy;
  };
  private readonly subscription = new StoreSubscription(this, () => this.controller, { change: this.onChange });

  override updated(changed: Map<string, unknown>): void {
    if (changed.has("controller") || changed.has("cells")) void this.readStages();
  }

  /** Reads the training cells' checkpoints from the run folder. */
  private async readStages(): Promise<void> {
    const c = this.controller;
    if (!c) return;
    const token = ++this.reading;
    const steps = await c.checkpoints().catch(() => ({}));
    if (token === this.reading) this.stages = stageChoices(this.cells, steps);
  }

  private set(patch: Record<string, unknown>): void {
    this.dispatchEvent(new ParamsChangeEvent(patch));
  }

  private async ask(): Promise<void> {
    const c = this.controller, cell = this.cell;
    if (!c || !cell) return;
    const box = this.renderRoot.querySelector("textarea");
    if (box && box.value !== cell.params.question) {
      this.set({ question: box.value });
      // The notebook applies the change before the run reads the document.
      await new Promise((r) => setTimeout(r, 0));
    }
    await c.run("cell", cell.id);
  }

  override render() {
    const c = this.controller, cell = this.cell;
    if (!cell) return nothing;
    const p = cell.params;
    const s = c?.state(cell.id);
    const busy = c?.active != null;
    const dbs = databaseChoices(this.cells, p.db);
    const stages = this.stages;
    const report = s?.report?.kind === "ask" ? s.report : null;
    return html`
      <div class="form">
        <textarea aria-label="Question" data-testid="ask-question" placeholder="Ask a question about the database"
          .value=${p.question} @change=${(e: Event) =>
            this.set({ question: (e.target as HTMLTextAreaElement).value })}></textarea>
        <div class="row">
          <label>Database ${dbs
            ? html`<select data-testid="ask-db" @change=${(e: Event) =>
              this.set({ db: (e.target as HTMLSelectElement).value })}>
              ${dbs.map((d) => html`<option value=${d} ?selected=${d === p.db}>${d}</option>`)}</select>`
            : html`<input data-testid="ask-db" .value=${p.db} @change=${(e: Event) =>
              this.set({ db: (e.target as HTMLInputElement).value })} />`}</label>
          <label>Trained stage ${stages && stages.length
            ? html`<select data-testid="ask-stage" @change=${(e: Event) =>
              this.set({ stage: (e.target as HTMLSelectElement).value })}>
              <option value="" ?selected=${p.stage === ""}>newest (${stageLabel(stages.at(-1)!)})</option>
              ${
              stages.map((x) =>
                html`<option value=${x.cellId} ?selected=${x.cellId === p.stage}>${stageLabel(x)}</option>`
              )
            }
            </select>`
            : html`<span class="note" data-testid="ask-no-checkpoint">${
              stages === null
                ? "reading the run's checkpoints…"
                : "none: this run has no checkpoint yet, so only the base model answers (run a warm-up or GRPO cell to compare)"
            }</span>`}</label>
          <button data-testid="ask" ?disabled=${busy || !c} @click=${() => void this.ask()}
            title="Answers greedily with the base model and with the stage's adapter (loads the model; trains nothing)">Ask</button>
          <span class="note" data-testid="ask-status" data-status=${s?.status ??
            "idle"}>${s?.status === "running" || s?.status === "waiting"
            ? s.progress?.message ?? "loading the model…"
            : ""}</span>
        </div>
      </div>
      ${s?.error
        ? html`<p class="error" role="alert" data-testid="ask-error">${s.error.message}<br /><span class="note">${s.error.remedy}</span></p>`
        : nothing}
      ${report ? this.renderReport(report) : nothing}
    `;
  }

  private renderReport(r: AskReport) {
    return html`
      <p class="note" data-testid="ask-asked">Asked on <code>${r.db}</code>: ${r.question}${r.known
        ? ` · ${r.known} definitions known for this database`
        : ""}</p>
      <div class="answers" data-testid="ask-answers">
        ${this.renderAnswer("Base model (no adapter)", r.base, "base")}
        ${r.trained && r.trained.stage
          ? this.renderAnswer(`After ${stageLabel(r.trained.stage)}`, r.trained, "trained")
          : html`
            <div class="answer" data-testid="ask-answer" data-which="trained">
              <h4>Trained adapter</h4>
              <p class="note">${r.note ?? "no trained stage"}</p>
            </div>
          `}
      </div>
    `;
  }

  private renderAnswer(title: string, a: AskAnswer, which: string) {
    const res = a.result;
    return html`
      <div class="answer" data-testid="ask-answer" data-which=${which}>
        <h4>${title}</h4>
        <pre class="sql" data-testid="ask-sql">${a.sql === null ? "(no SQL)" : highlightSql(a.sql)}</pre>
        ${a.sql === null && a.completion.trim()
          ? html`
            <div class="note">What it wrote instead:</div>
            <pre class="sql" data-testid="ask-completion">${a.completion}</pre>
          `
          : nothing}
        ${a.error
          ? html`<p class="error" data-testid="ask-answer-error">${a.error.kind}: ${a.error.message}</p>`
          : nothing}
        ${res
          ? html`
            <div class="note" data-testid="ask-rowcount">${res.rowCount} row${res.rowCount === 1
              ? ""
              : "s"}${res.truncated ? `, the first ${res.rows.length} shown` : ""}</div>
            <div class="rows">
              <table data-testid="ask-rows">
                          <tr>${res.columns.map((col) => html`<th>${col}</th>`)}</tr>
                          ${res.rows.map((row) => html`<tr>${row.map((v) => html`<td>${displayText(v)}</td>`)}</tr>`)}
                        </table>
            </div>
          `
          : nothing}
        <div class="note">Definitions this SQL used: ${a.definitions.length
          ? html`<ul class="defs" data-testid="ask-defs">${
            a.definitions.map((d) => html`<li><strong>${d.term}</strong>: <code>${d.fragment}</code></li>`)
          }</ul>`
          : html`<span data-testid="ask-defs-none">none</span>`}</div>
      </div>
    `;
  }
}

customElements.define("rl-cell-ask", RlCellAsk);

declare global {
  interface HTMLElementTagNameMap {
    "rl-cell-ask": RlCellAsk;
  }
}
