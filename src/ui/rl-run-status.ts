// <rl-run-status>: where a run is, always in view — which cell of how many, the stage, its progress
// line with a bar and a time estimate, and the whole run's time left against its plan; "Show" scrolls
// to the running cell and "follow" keeps scrolling to each cell as the run reaches it; Stop says
// "stopping…" until the run has ended. Before a Run all that would be long on this device it shows
// the plan (each cell's expected time) and offers the notebook's quick version; after a run, how it
// ended ("finished in 9 min") with a button to the before/after picture. State comes from the RunController.
import { css, html, LitElement, nothing } from "lit";
import type { CellType } from "../core/notebook-params.ts";
import type { RunEstimate } from "../runtime/run-estimate.ts";
import { formatEta } from "./rl-cell-run.ts";
import type { RunController } from "./run-controller.ts";
import { StoreSubscription } from "./store-subscription.ts";
import { cellStyles } from "./styles.ts";

/** Asks the notebook to bring a cell into view. */
export class ShowCellEvent extends Event {
  constructor(readonly cellId: string) {
    super("show-cell", { bubbles: true, composed: true });
  }
}

/** Asks the notebook to bring the before/after picture into view. */
export class ShowResultsEvent extends Event {
  constructor() {
    super("show-results", { bubbles: true, composed: true });
  }
}

/** The follow switch changed. */
export class FollowEvent extends Event {
  constructor(readonly follow: boolean) {
    super("follow-change", { bubbles: true, composed: true });
  }
}

/** "3 h 20 min", "12 min", "40 s": a duration in words, rounded as a plan should be. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  if (m < 48 * 60) return `${Math.floor(m / 60)} h ${m % 60} min`;
  return `${Math.round(m / (24 * 60))} days`;
}

export class RlRunStatus extends LitElement {
  static override properties = {
    controller: { attribute: false },
    titles: { attribute: false },
    follow: { type: Boolean },
  };
  static override styles = [
    cellStyles,
    css`
      .status {
        display: grid;
        grid-template-columns: auto 1fr auto;
        gap: 4px 12px;
        align-items: center;
        padding: 6px 12px;
        background: var(--rl-surface);
        border: 1px solid var(--rl-accent);
        border-radius: 8px;
        box-shadow: 0 2px 8px rgb(0 0 0 / 0.12);
        font-size: 13px;
      }
      .where {
        font-weight: 600;
        white-space: nowrap;
      }
      .line {
        overflow: hidden;
        text-overflow: ellipsis;
        white-space: nowrap;
        color: var(--rl-muted);
      }
      .total {
        grid-column: 1 / -1;
        color: var(--rl-muted);
      }
      .stopping {
        color: var(--rl-warn, #b35c00);
        font-weight: 600;
      }
      progress {
        width: 100%;
        height: 8px;
        grid-column: 1 / -1;
      }
      .actions {
        display: flex;
        gap: 8px;
        align-items: center;
        white-space: nowrap;
      }
      .actions button {
        padding: 1px 10px;
        font-size: 13px;
      }
      label {
        display: flex;
        gap: 4px;
        align-items: center;
        color: var(--rl-muted);
      }
      .plan {
        display: grid;
        gap: 8px;
        padding: 10px 14px;
        background: var(--rl-surface);
        border: 1px solid var(--rl-accent);
        border-radius: 8px;
        box-shadow: 0 2px 8px rgb(0 0 0 / 0.12);
        font-size: 14px;
      }
      .plan ul {
        margin: 0;
        padding-left: 20px;
      }
      .plan .choices {
        display: flex;
        flex-wrap: wrap;
        gap: 8px;
      }
      .plan table {
        font-size: 13px;
        border-collapse: collapse;
      }
      .plan td {
        padding: 1px 10px 1px 0;
      }
      .plan td.t {
        text-align: right;
        font-family: var(--rl-mono);
        white-space: nowrap;
      }
      .ended {
        display: flex;
        flex-wrap: wrap;
        gap: 10px;
        align-items: center;
        padding: 6px 12px;
        background: var(--rl-surface);
        border: 1px solid var(--rl-border);
        border-radius: 8px;
        font-size: 14px;
      }
      .ended.ok {
        border-color: var(--rl-good, #2b8a3e);
      }
    `,
  ];

  controller: RunController | null = null;
  /** Cell titles by type ("Evaluate", "GRPO (online RL)"). */
  titles: Partial<Record<CellType, string>> = {};
  /** Whether the notebook scrolls to each cell the run reaches. */
  follow = true;
  /** The ended run's line was closed. */
  private closed: object | null = null;
  private readonly subscription = new StoreSubscription(this, () => this.controller);

  override render() {
    const c = this.controller;
    if (!c) return nothing;
    if (c.active) return this.renderActive(c);
    if (c.measuring) {
      return html`
        <div class="ended" role="status"
          data-testid="run-measuring">Measuring this device's speed to plan the run (the GPU cell's matmul check, a few seconds)…</div>
      `;
    }
    if (c.proposal) return this.renderProposal(c);
    if (c.last && this.closed !== c.last) return this.renderEnded(c);
    return nothing;
  }

  private renderActive(c: RunController) {
    const a = c.active!;
    const at = a.current ? a.plan.findIndex((x) => x.id === a.current) : -1;
    const cell = at >= 0 ? a.plan[at] : null;
    const p = cell ? c.state(cell.id).progress : null;
    const where = cell
      ? `${at + 1} of ${a.plan.length} · ${this.titles[cell.type as CellType] ?? cell.type} “${cell.id}”`
      : `starting (${a.plan.length} cells)`;
    const line = p
      ? `${p.message} · ${(100 * p.fraction).toFixed(0)}% · ${formatEta(p.etaSeconds)}`
      : (c.log.at(-1)?.replace(/^[\d.]+ s\s+/, "") ?? "waiting for the GPU worker…");
    const left = c.runSecondsLeft();
    const total = c.estimate
      ? `Whole run: ${left === null ? "measuring…" : `about ${formatDuration(left)} left`} (planned ${
        formatDuration(c.estimate.seconds)
      } on this device, ${c.estimate.gflops.toFixed(1)} GFLOP/s)`
      : "Whole run: run the GPU cell's matmul check for a time estimate";
    return html`
      <div class="status" role="status" aria-live="polite" data-testid="run-status-bar">
        <span class="where" data-testid="run-where">▶ ${where}</span>
        <span class="line" data-testid="run-line" title=${line}>${line}</span>
        <span class="actions">
              ${cell
                ? html`<button class="secondary" data-testid="show-running" @click=${() =>
                  this.dispatchEvent(new ShowCellEvent(cell.id))}>Show</button>`
                : nothing}
              <label title="Scroll to each cell as the run reaches it"><input type="checkbox" data-testid="follow-run" .checked=${this
                .follow}
                @change=${(e: Event) =>
                  this.dispatchEvent(new FollowEvent((e.target as HTMLInputElement).checked))} /> follow</label>
              ${c.stopping
                ? html`<span class="stopping" data-testid="run-stopping">stopping…</span>`
                : html`<button data-testid="stop-run" @click=${() => c.stop()}>Stop</button>`}
            </span>
        <span class="total" data-testid="run-total">${total}</span>
        <progress max="1" .value=${p?.fraction ?? 0} aria-label="progress of the running cell"></progress>
      </div>
    `;
  }

  /** Each runnable cell's expected time, longest first where there are many. */
  private planTable(e: RunEstimate) {
    return html`<table data-testid="plan-cells">${
      e.cells.filter((x) => x.seconds >= 1).map((x) =>
        html`
          <tr>
            <td>${this.titles[x.type] ?? x.type} “${x.id}”</td>
            <td class="muted">${x.what}</td>
            <td class="t">${formatDuration(x.seconds)}</td>
          </tr>
        `
      )
    }</table>`;
  }

  private renderProposal(c: RunController) {
    const p = c.proposal!;
    return html`
      <div class="plan" role="dialog" aria-label="Plan of the run" data-testid="run-plan">
        <strong>This notebook would take about <span data-testid="plan-full">${formatDuration(
          p.full.seconds,
        )}</span> on this device
              (${p.full.gflops.toFixed(1)} GFLOP/s measured: a software or small GPU).</strong>
        <span>Its quick version — the same cells, smaller — takes about <strong data-testid="plan-quick">${formatDuration(
          p.quick.seconds,
        )}</strong>. It gives up:</span>
        <ul data-testid="plan-gives-up">${p.givesUp.map((g) => html`<li>${g}</li>`)}</ul>
        <span class="choices">
          <button data-testid="run-quick" @click=${() =>
            void c.runQuick()}>Run the quick version (about ${formatDuration(p.quick.seconds)})</button>
          <button class="secondary" data-testid="run-full"
            @click=${() => void c.runFull()}>Run the full notebook (about ${formatDuration(p.full.seconds)})</button>
          <button class="secondary" data-testid="plan-cancel" @click=${() => c.dismissProposal()}>Cancel</button>
        </span>
        <details><summary>Expected time per cell (full notebook)</summary>${this.planTable(p.full)}</details>
        <span
          class="muted">Estimates from the device's matmul speed and the notebook's sizes; the run's own times replace them as cells finish.
              The quick version replaces this notebook's sizes (a button brings the full one back after the run), and its results are kept apart from the full one's.</span>
      </div>
    `;
  }

  private renderEnded(c: RunController) {
    const l = c.last!;
    const took = formatDuration(l.ms / 1000);
    const text = l.ok
      ? `Finished in ${took}.`
      : l.stopped
      ? `Stopped after ${took}: every finished cell keeps its results; run again to continue.`
      : `The run failed after ${took}: the failed cell says why.`;
    return html`<div class="ended ${l.ok ? "ok" : ""}" role="status" data-testid="run-ended" data-ok=${String(l.ok)}>
      <span data-testid="run-ended-text">${l.ok ? "✓ " : ""}${text}</span>
      ${
      l.ok
        ? html`<button class="secondary" data-testid="show-results" @click=${() =>
          this.dispatchEvent(new ShowResultsEvent())}>Show the before/after</button>`
        : nothing
    }
      ${
      c.fullDoc
        ? html`
          <button class="secondary" data-testid="back-to-full"
            title="Reopens the notebook with its full sizes (the quick version's results stay in its own run folder)"
            @click=${() => c.backToFull()}>Back to the full notebook</button>
        `
        : nothing
    }
      <button class="secondary" aria-label="Close" @click=${() => {
      this.closed = l;
      this.requestUpdate();
    }}>✕</button>
    </div>`;
  }
}

customElements.define("rl-run-status", RlRunStatus);

declare global {
  interface HTMLElementTagNameMap {
    "rl-run-status": RlRunStatus;
  }
}
