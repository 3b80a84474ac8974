// <rl-reward-inspector>: for a step and a question, the group's samples side by side — prompt,
// reasoning, extracted SQL, the predicted rows next to the gold rows with differences marked,
// each reward component and the advantage; for a chain of CTEs, each step with its partial result,
// whether it matches the gold's, and its PRM score when the record has one. Sort and filter by
// reward, error kind and length.
import { css, html, LitElement, nothing } from "lit";
import { displayText } from "../runtime/records.ts";
import type { DisplayResult, SampleRecord, SampleStep } from "../runtime/records.ts";
import {
  componentWeights,
  type ErrorFilter,
  errorLabel,
  groupView,
  hasTrainingSteps,
  questionsAt,
  rowsInOther,
  type SortKey,
  SORTS,
  stepsOf,
  stepStatus,
  stepSummary,
} from "./inspector-model.ts";
import { highlightSql } from "./sql-highlight.ts";
import { cellStyles, codeBlock } from "./styles.ts";

const SORT_LABELS: Record<SortKey, string> = {
  "index": "sample order",
  "reward-desc": "reward, high first",
  "reward-asc": "reward, low first",
  "length-desc": "length, long first",
  "length-asc": "length, short first",
};

export class RlRewardInspector extends LitElement {
  static override properties = {
    records: { attribute: false },
    step: { type: Number },
    taskId: { state: true },
    sort: { state: true },
    filter: { state: true },
  };
  static override styles = [
    cellStyles,
    css`
      /* Its own width is its container's, never its content's: G cards wrap into rows instead of widening the notebook. */
      :host {
        display: block;
        min-width: 0;
        max-width: 100%;
        contain: inline-size;
      }
      .controls {
        display: flex;
        flex-wrap: wrap;
        gap: 12px;
        align-items: center;
        margin-bottom: 8px;
        font-size: 14px;
      }
      .controls input[type="range"] {
        width: 220px;
      }
      select {
        font: inherit;
        font-size: 13px;
        max-width: min(420px, 100%);
        background: var(--rl-surface);
        color: var(--rl-text);
        border: 1px solid var(--rl-border);
        border-radius: 4px;
      }
      .samples {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(min(100%, 280px), 1fr));
        gap: 10px;
        padding-bottom: 6px;
      }
      /* min-width 0 down the grid items: a wide result table scrolls inside its card instead of widening it over the next. */
      .sample {
        border: 1px solid var(--rl-border);
        border-radius: 6px;
        padding: 8px;
        font-size: 13px;
        display: grid;
        gap: 6px;
        align-content: start;
        min-width: 0;
      }
      .sample > *,
      ol.steps > li,
      .results > * {
        min-width: 0;
      }
      .results > * {
        overflow-x: auto;
      }
      .sample.correct {
        border-color: var(--rl-good);
      }
      .sample header {
        display: flex;
        justify-content: space-between;
        gap: 6px;
      }
      .badge {
        font-size: 11px;
        padding: 1px 6px;
        border-radius: 10px;
        background: var(--rl-code-bg);
      }
      .badge.correct {
        color: var(--rl-good);
      }
      .badge.err {
        color: var(--rl-bad);
      }
      pre {
        ${codeBlock} max-height: 220px;
        overflow: auto;
      }
      .kw {
        color: var(--rl-accent);
        font-weight: 600;
      }
      .str {
        color: var(--rl-good);
      }
      .num {
        color: var(--rl-warn);
      }
      .com {
        color: var(--rl-muted);
      }
      .id {
        color: var(--rl-text);
      }
      .results {
        display: grid;
        grid-template-columns: 1fr 1fr;
        gap: 6px;
      }
      .results table {
        font-size: 11px;
        font-family: var(--rl-mono);
      }
      .results td,
      .results th {
        padding: 1px 6px 1px 0;
      }
      tr.diff td {
        background: color-mix(in srgb, var(--rl-bad) 18%, transparent);
      }
      .rewards td {
        padding: 0 8px 0 0;
        border: none;
      }
      .rewards td.n {
        text-align: right;
        font-variant-numeric: tabular-nums;
      }
      .gold-sql {
        margin: 0 0 8px;
      }
      details summary {
        cursor: pointer;
        color: var(--rl-muted);
      }
      .given {
        color: var(--rl-muted);
        text-decoration: underline dotted;
      }
      ol.steps {
        margin: 4px 0 0;
        padding-left: 20px;
        display: grid;
        gap: 6px;
      }
      li.step {
        border-left: 3px solid var(--rl-border);
        padding-left: 6px;
      }
      li.step.match {
        border-left-color: var(--rl-good);
      }
      li.step.err {
        border-left-color: var(--rl-bad);
      }
      .step-head {
        display: flex;
        flex-wrap: wrap;
        gap: 6px;
        align-items: center;
      }
      .badge.match {
        color: var(--rl-good);
      }
      .prm {
        position: relative;
        font-size: 11px;
        padding: 1px 6px;
        border-radius: 10px;
        border: 1px solid var(--rl-border);
        overflow: hidden;
        min-width: 64px;
      }
      .prm .bar {
        position: absolute;
        inset: 0 auto 0 0;
        background: color-mix(in srgb, var(--rl-accent) 28%, transparent);
      }
      .prm span.v {
        position: relative;
      }
      .step .table {
        overflow: auto;
        max-height: 200px;
      }
      .step .table table {
        font-size: 11px;
        font-family: var(--rl-mono);
      }
      .step .table td,
      .step .table th {
        padding: 1px 6px 1px 0;
      }
    `,
  ];

  /** Sample records of a run. */
  records: SampleRecord[] = [];
  /** The step shown (the nearest present step is used). */
  step = 0;
  private taskId: string | null = null;
  private sort: SortKey = "index";
  private filter: ErrorFilter = "all";
  private weights = new Map<string, number>();

  override render() {
    const steps = stepsOf(this.records);
    if (!steps.length) return html`<p class="muted">No samples yet: they appear as the run draws them.</p>`;
    const step = steps.reduce((best, s) => (Math.abs(s - this.step) < Math.abs(best - this.step) ? s : best), steps[0]);
    const questions = questionsAt(this.records, step);
    const taskId = questions.some((q) => q.taskId === this.taskId) ? this.taskId! : questions[0].taskId;
    const group = groupView(this.records, step, taskId, this.sort, this.filter);
    const labels = [...new Set(this.records.filter((r) => r.step === step && r.taskId === taskId).map(errorLabel))]
      .sort();
    this.weights = componentWeights(this.records);
    // An evaluation is one set of answers: no step to choose (a "Step 0" slider there said nothing).
    return html`
      <div class="controls">
        ${hasTrainingSteps(this.records)
          ? html`<label>Step <input type="range" data-testid="inspector-step" min="0" max=${steps.length - 1} .value=${
            String(steps.indexOf(step))
          }
          @input=${(
            e: Event,
          ) => (this.step = steps[Number((e.target as HTMLInputElement).value)])} /> <strong>${step}</strong></label>`
          : html`<span class="muted" data-testid="inspector-phase">${
            this.records[0]?.phase === "eval" ? "evaluation" : this.records[0]?.phase ?? ""
          }${
            steps.length > 1
              ? html`
                · step <strong>${step}</strong>
              `
              : nothing
          }</span>`}
        <label>Question <select data-testid="inspector-question" @change=${(
          e: Event,
        ) => (this.taskId = (e.target as HTMLSelectElement).value)}>
          ${questions.map((q) =>
            html`<option value=${q.taskId} ?selected=${q.taskId === taskId}>${q.correct}/${q.n} · ${
              q.question.slice(0, 80)
            }</option>`
          )}
        </select></label>
        <label>Sort <select @change=${(e: Event) => (this.sort = (e.target as HTMLSelectElement).value as SortKey)}>
          ${SORTS.map((s) => html`<option value=${s} ?selected=${s === this.sort}>${SORT_LABELS[s]}</option>`)}
        </select></label>
        <label>Show <select data-testid="inspector-filter" @change=${(
          e: Event,
        ) => (this.filter = (e.target as HTMLSelectElement).value)}>
          <option value="all">all</option>${labels.map((l) =>
            html`<option value=${l} ?selected=${l === this.filter}>${l}</option>`
          )}
        </select></label>
      </div>
      <p><strong>${group[0]?.question ??
        questions.find((q) => q.taskId === taskId)?.question}</strong> <span class="muted">(${taskId}, ${group[0]
        ?.dbId ?? ""})</span></p>
      ${group[0]?.goldSql
        ? html`
          <div
            class="gold-sql"><span class="muted">gold SQL (its rows are each card's "gold")</span><pre data-testid="gold-sql">${highlightSql(
              group[0].goldSql,
            )}</pre></div>
        `
        : nothing}
      <div class="samples">${group.map((r) => this.renderSample(r))}</div>
    `;
  }

  private renderSample(r: SampleRecord) {
    const label = errorLabel(r);
    return html`<article class="sample ${r.correct ? "correct" : ""}" data-testid="sample" data-sample=${r.sampleIndex}>
      <header><strong>#${r.sampleIndex}</strong>
        <span class="badge ${r.correct ? "correct" : "err"}">${label}</span>
        <span>reward <strong>${r.reward.total.toFixed(2)}</strong></span>
        <span class="muted">adv ${r.advantage === null ? "—" : r.advantage.toFixed(2)}</span>
        <span class="muted">${r.completionTokens} tok</span></header>
      <details><summary>prompt</summary><pre>${r.prompt}</pre></details>
      ${
      r.reasoning
        ? html`
          <details open>
            <summary>reasoning</summary>
            <pre>${r.reasoning}</pre>
          </details>
        `
        : nothing
    }
      <details><summary>completion</summary><pre>${this.renderCompletion(r)}</pre></details>
      ${
      r.extraction.sql !== null
        ? html`<pre data-testid="sample-sql">${highlightSql(r.extraction.sql)}</pre>`
        : html`<p class="bad">No SQL: ${r.extraction.reason}</p>`
    }
      ${r.error ? html`<p class="bad">${r.error.kind}: ${r.error.message}</p>` : nothing}
      <div class="results">
        <div><div class="muted">predicted</div>${this.renderResult(r.predicted, r.gold)}</div>
        <div><div class="muted">gold</div>${this.renderResult(r.gold, r.predicted)}</div>
      </div>

      ${r.steps?.length ? this.renderSteps(r.steps, r.gold) : nothing}
      <table class="rewards" title="value × weight = its part of the reward">${
      Object.entries(r.reward.components).map(([k, v]) => {
        const w = this.weights.get(k);
        return html`
          <tr data-component=${k}>
            <td>${k}</td>
            <td class="n">${v.toFixed(2)}</td>
            <td class="muted">× ${w === undefined ? "w" : String(w)}</td>
            <td class="n">= ${(r.reward.weighted[k] ?? 0).toFixed(2)}</td>
          </tr>
        `;
      })
    }</table>
    </article>`;
  }

  /** The completion, with the start the prompt wrote (an answer prefix) marked as not sampled. */
  private renderCompletion(r: SampleRecord) {
    const pre = r.answerPrefix && r.completion.startsWith(r.answerPrefix) ? r.answerPrefix : "";
    if (!pre) return r.completion;
    return html`
      <span class="given" data-testid="answer-prefix"
        title="written by the prompt (the template's answer prefix), not sampled">${pre}</span>${r.completion.slice(
          pre.length,
        )}
    `;
  }

  private renderSteps(steps: SampleStep[], gold: DisplayResult | null) {
    const sum = stepSummary(steps);
    return html`
      <details open data-testid="cocte-steps">
        <summary>chain of CTEs: ${sum.steps} step${sum.steps === 1 ? "" : "s"},
            ${sum.matching} match${sum.matching === 1 ? "es" : ""} the gold${sum.errors
              ? `, ${sum.errors} failed`
              : ""}${sum.prmMean === null ? "" : `, mean PRM ${sum.prmMean.toFixed(2)}`}</summary>
        <ol class="steps">${steps.map((s) => {
          const status = stepStatus(s);
          const score = typeof s.prmScore === "number" && Number.isFinite(s.prmScore) ? s.prmScore : null;
          return html`<li class="step ${s.error ? "err" : s.matchesGold ? "match" : ""}" data-testid="cocte-step">
          <div class="step-head"><code>${s.name ?? "final SELECT"}</code>
            <span class="badge ${
            s.error ? "err" : s.matchesGold ? "match" : ""
          }" data-testid="step-status">${status}</span>
            ${
            score === null
              ? nothing
              : html`<span class="prm" data-testid="prm-score" title="process reward model score of this step">
              <span class="bar" style="width:${
                Math.round(Math.min(1, Math.max(0, score)) * 100)
              }%"></span><span class="v">PRM ${score.toFixed(2)}</span></span>`
          }</div>
          ${s.comment ? html`<div class="muted">-- ${s.comment}</div>` : nothing}
          <details><summary>sql</summary><pre>${highlightSql(s.sql)}</pre></details>
          ${
            s.error
              ? html`<p class="bad">${s.error.message}</p>`
              : html`<div class="table">${this.renderResult(s.result, s.name === null ? gold : null)}</div>`
          }
        </li>`;
        })}</ol>
      </details>
    `;
  }

  private renderResult(res: DisplayResult | null, other: DisplayResult | null) {
    if (!res) return html`<p class="muted">—</p>`;
    const present = rowsInOther(res, other);
    return html`
      <table data-testid="result-table">
            <tr>${res.columns.map((c) => html`<th>${c}</th>`)}</tr>
            ${res.rows.map((row, i) =>
              html`<tr class=${other && !present[i] ? "diff" : ""}>${
                row.map((v) => html`<td>${displayText(v)}</td>`)
              }</tr>`
            )}
          </table>
      <div class="muted">${res.rowCount} row${res.rowCount === 1 ? "" : "s"}${res.truncated
        ? `, first ${res.rows.length} shown`
        : ""}${res.capped ? ", capped by the executor" : ""}</div>
    `;
  }
}

customElements.define("rl-reward-inspector", RlRewardInspector);

declare global {
  interface HTMLElementTagNameMap {
    "rl-reward-inspector": RlRewardInspector;
  }
}
