// <rl-demo-results>: the picture a finished run ends with — execution accuracy per split and stage
// as a bar chart (baseline, after the warm-up, after GRPO, self-consistency), and a question the
// model learned: its baseline answer next to its answer after training, each with the rows it
// returned, and the gold rows. State comes from the RunController; demo-results-model.ts computes.
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  Legend,
  LinearScale,
  Tooltip,
} from "chart.js";
import { css, html, LitElement, nothing } from "lit";
import type { Cell } from "../core/notebook.ts";
import type { DisplayResult, SampleRecord } from "../runtime/records.ts";
import {
  type CellOutputs,
  type LearnedQuestion,
  learnedQuestions,
  showValue,
  stageDatasets,
  stageResults,
} from "./demo-results-model.ts";
import type { RunController } from "./run-controller.ts";
import { highlightSql } from "./sql-highlight.ts";
import { StoreSubscription } from "./store-subscription.ts";
import { cellStyles, sqlStyles } from "./styles.ts";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

/** Rows of a result shown (the count says how many there are). */
const ROWS_SHOWN = 6;

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export class RlDemoResults extends LitElement {
  static override properties = {
    cells: { attribute: false },
    controller: { attribute: false },
    shown: { state: true },
  };
  static override styles = [
    cellStyles,
    sqlStyles,
    css`
      :host {
        display: block;
      }
      section {
        margin-top: 18px;
        background: var(--rl-surface);
        border: 1px solid var(--rl-border);
        border-radius: var(--rl-radius, 8px);
        padding: 10px 16px;
      }
      h3 {
        margin: 4px 0 8px;
        font-size: 16px;
      }
      .chart-box {
        position: relative;
        height: 260px;
      }
      .learned {
        display: grid;
        gap: 8px;
        margin-top: 12px;
      }
      .pair {
        display: grid;
        grid-template-columns: 1fr 1fr;
        gap: 12px;
      }
      .answer {
        border: 1px solid var(--rl-border);
        border-radius: 6px;
        padding: 8px 10px;
        display: grid;
        gap: 6px;
        align-content: start;
      }
      .answer.right {
        border-color: var(--rl-good);
      }
      .answer.wrong {
        border-color: var(--rl-bad);
      }
      .answer h5 {
        margin: 0;
        font-size: 13px;
        display: flex;
        gap: 8px;
        align-items: baseline;
      }
      .kw {
        color: var(--rl-accent);
        font-weight: 600;
      }
      .str {
        color: #c2255c;
      }
      .num {
        color: #0c8599;
      }
      table.rows {
        font-size: 12px;
      }
      table.rows td,
      table.rows th {
        padding: 1px 8px 1px 0;
      }
      .nav {
        display: flex;
        gap: 8px;
        align-items: center;
        font-size: 13px;
      }
      .nav button {
        padding: 1px 8px;
      }
      .question {
        font-size: 15px;
        font-weight: 600;
      }
      .definition {
        font-size: 13px;
      }
      .definition code {
        font-size: 12px;
      }
      .gold h5,
      .answer h5 {
        margin: 0;
        font-size: 13px;
      }
      table.acc td,
      table.acc th {
        padding: 2px 10px 2px 0;
        font-size: 13px;
      }
    `,
  ];

  /** The notebook's cells (ids and types; reports come from the controller). */
  cells: readonly Cell[] = [];
  controller: RunController | null = null;
  /** Which learned question is shown. */
  private shown = 0;
  private chart: Chart | null = null;
  private readonly subscription = new StoreSubscription(this, () => this.controller);

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.chart?.destroy();
    this.chart = null;
  }

  private outputs(): CellOutputs[] {
    const c = this.controller;
    if (!c) return [];
    return this.cells.map((cell) => {
      const s = c.state(cell.id);
      return { id: cell.id, type: cell.type, report: s.report, samples: s.samples };
    });
  }

  override updated(): void {
    this.draw();
  }

  override render() {
    const outs = this.outputs();
    const { results, splits, stages } = stageResults(outs);
    if (results.length < 2) return nothing;
    const learned = learnedQuestions(outs);
    const at = (split: string, stage: string) => results.find((r) => r.split === split && r.stage === stage);
    return html`<section data-testid="demo-results" aria-label="Before and after">
      <h3>Before and after: execution accuracy per split and stage</h3>
      <div class="chart-box"><canvas data-testid="results-chart" role="img" aria-label="Execution accuracy per split, one bar per stage"></canvas></div>
      <table class="acc" data-testid="results-table"><tr><th>split</th>${stages.map((s) => html`<th>${s}</th>`)}</tr>
        ${
      splits.map((split) =>
        html`<tr><td>${split}</td>${
          stages.map((stage) => {
            const r = at(split, stage);
            return html`<td data-split=${split} data-stage=${stage}>${
              r ? html`${pct(r.accuracy)} <span class="muted">of ${r.questions}</span>` : "—"
            }</td>`;
          })
        }</tr>`
      )
    }</table>
      ${this.renderLearned(learned)}
    </section>`;
  }

  private renderLearned(all: LearnedQuestion[]) {
    if (!all.length) {
      return html`
        <p class="muted"
          data-testid="no-learned">No question went from a wrong answer at baseline to a right one after training${this
              .controller && this.cells.some((c) => c.type === "grpo" && this.controller?.state(c.id).report)
            ? ""
            : " (yet: run the training cells)"}.</p>
      `;
    }
    const i = Math.min(this.shown, all.length - 1);
    const q = all[i];
    return html`<div class="learned" data-testid="learned">
      <h4>A question the model learned (${q.split})</h4>
      <div class="nav"><button class="secondary" ?disabled=${
      i === 0
    } aria-label="Previous learned question" @click=${() => (this.shown = i - 1)}>◀</button>
        <span data-testid="learned-count">${i + 1} of ${all.length} learned</span>
        <button class="secondary" ?disabled=${
      i === all.length - 1
    } aria-label="Next learned question" @click=${() => (this.shown = i + 1)}>▶</button></div>
      <div class="question" data-testid="learned-question">${q.question}</div>
      ${
      q.after.evidence
        ? html`
          <div class="definition"
            data-testid="learned-definition"><span class="muted">${q.after.prompt.includes(q.after.evidence)
              ? "the definition, given in the prompt (BIRD mode):"
              : "the definition it had to learn (not in its prompt):"}</span> <code>${q.after.evidence}</code></div>
        `
        : nothing
    }
      <div class="pair">
        ${this.answer("baseline", q.before, "before")}
        ${this.answer(q.afterStage, q.after, "after")}
      </div>
      ${q.after.gold ? html`<div class="gold"><h5>gold rows</h5>${this.rows(q.after.gold)}</div>` : nothing}
    </div>`;
  }

  private answer(title: string, r: SampleRecord, which: string) {
    return html`<div class="answer ${r.correct ? "right" : "wrong"}" data-testid=${`answer-${which}`}>
      <h5>${title} <span class=${r.correct ? "good" : "bad"}>${r.correct ? "✓ right" : "✗ wrong"}</span></h5>
      <pre class="sql">${
      r.extraction.sql !== null
        ? highlightSql(r.extraction.sql)
        : html`<span class="muted">no SQL (${r.extraction.reason})</span>`
    }</pre>
      ${
      r.predicted
        ? this.rows(r.predicted)
        : html`<span class="bad">${r.error ? `${r.error.kind}: ${r.error.message}` : "no result"}</span>`
    }
    </div>`;
  }

  private rows(d: DisplayResult) {
    const shown = d.rows.slice(0, ROWS_SHOWN);
    return html`<table class="rows" data-testid="rows"><tr>${d.columns.map((c) => html`<th>${c}</th>`)}</tr>
      ${shown.map((row) => html`<tr>${row.map((v) => html`<td>${showValue(v)}</td>`)}</tr>`)}</table>
      ${
      d.rowCount > shown.length
        ? html`<span class="muted">${d.rowCount} rows, first ${shown.length} shown</span>`
        : nothing
    }`;
  }

  private draw(): void {
    const canvas = this.renderRoot.querySelector<HTMLCanvasElement>("canvas[data-testid=results-chart]");
    if (!canvas) {
      this.chart?.destroy();
      this.chart = null;
      return;
    }
    const measured = stageResults(this.outputs());
    const { splits } = measured;
    const style = getComputedStyle(this);
    const text = style.getPropertyValue("--rl-muted").trim() || "#666";
    const grid = style.getPropertyValue("--rl-border").trim() || "#ddd";
    // A measured 0% is a thin bar (minBarLength); a stage not run is NaN and draws nothing.
    const datasets = stageDatasets(measured);
    if (this.chart && this.chart.canvas === canvas) {
      this.chart.data.labels = splits;
      this.chart.data.datasets = datasets;
      this.chart.update("none");
      return;
    }
    this.chart?.destroy();
    const config: ChartConfiguration<"bar", number[], string> = {
      type: "bar",
      data: { labels: splits, datasets },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: {
          x: { ticks: { color: text }, grid: { color: grid } },
          y: {
            min: 0,
            suggestedMax: 100,
            title: { display: true, text: "execution accuracy (%)", color: text },
            ticks: { color: text },
            grid: { color: grid },
          },
        },
        plugins: {
          legend: { labels: { color: text, boxWidth: 12 } },
          tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${Number(c.raw).toFixed(1)}%` } },
        },
      },
    };
    this.chart = new Chart(canvas, config);
  }
}

customElements.define("rl-demo-results", RlDemoResults);

declare global {
  interface HTMLElementTagNameMap {
    "rl-demo-results": RlDemoResults;
  }
}
