// <rl-cell-run>: a runnable cell's run bar and outputs — Run / Run from here / Stop, a progress
// bar with the phase text and a time estimate, the phases the run went through (each with when it
// began and how long it took, kept after the run), the error of a failed run with what to do, the
// stage's report (accuracy tables), its metrics charts and the reward inspector over the samples
// it drew; in a model cell, what was loaded (shape, dtype, LoRA, provider, load time, bytes) and
// what the model-file cache holds, with a button that clears it. All state
// comes from the RunController; this element only renders it.
import { css, html, LitElement, nothing } from "lit";
import type { Cell } from "../core/notebook.ts";
import type { AccuracyFigures, StageReport } from "../runtime/records.ts";
import { type ModelSummary, summaryRows } from "../runtime/recipe/model-summary.ts";
import "./rl-metrics-charts.ts";
import "./rl-reward-inspector.ts";
import { renderPrmData, renderPrmTrain, renderSelectionAtN } from "./prm-reports.ts";
import type { CellRunState, ProgressEntry, RunController } from "./run-controller.ts";
import { StoreSubscription } from "./store-subscription.ts";
import { cellStyles } from "./styles.ts";

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mb = (
  n: number,
) => (n < 1 << 20 ? `${Math.max(1, Math.round(n / 1024))} KB` : `${(n / (1 << 20)).toFixed(1)} MB`);

/** Cells whose metrics are one record per run (their report says it all: no chart of one point). */
const ONE_POINT: readonly Cell["type"][] = ["evaluate", "select", "selfconsistency"];

/** "about 4 min", "20 s": a planned duration. */
function about(seconds: number): string {
  const s = Math.round(seconds);
  return s < 60
    ? `about ${s} s`
    : s < 3600
    ? `about ${Math.round(s / 60)} min`
    : `about ${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

/** "about 2 min 5 s left". */
export function formatEta(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return "measuring time left…";
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `about ${s} s left`;
  const m = Math.floor(s / 60);
  if (m < 60) return `about ${m} min ${s % 60} s left`;
  return `about ${Math.floor(m / 60)} h ${m % 60} min left`;
}

export class RlCellRun extends LitElement {
  static override properties = { cell: { attribute: false }, controller: { attribute: false } };
  static override styles = [
    cellStyles,
    css`
      .bar {
        display: flex;
        gap: 8px;
        align-items: center;
        flex-wrap: wrap;
      }
      .status {
        font-size: 13px;
        color: var(--rl-muted);
      }
      progress {
        width: 100%;
        height: 10px;
      }
      .progress {
        display: grid;
        gap: 2px;
        font-size: 13px;
      }
      .err {
        border: 1px solid var(--rl-bad);
        border-radius: 6px;
        padding: 8px 10px;
        background: color-mix(in srgb, var(--rl-bad) 8%, transparent);
        display: grid;
        gap: 6px;
      }
      .cache {
        font-size: 13px;
        color: var(--rl-muted);
        display: flex;
        gap: 8px;
        align-items: center;
        flex-wrap: wrap;
      }
      .err pre {
        margin: 0;
        white-space: pre-wrap;
        word-break: break-word;
        font-family: var(--rl-mono);
        font-size: 12px;
      }
      table.acc {
        font-size: 13px;
        border-collapse: collapse;
      }
      table.acc td,
      table.acc th {
        padding: 2px 10px 2px 0;
        text-align: left;
      }
      h4 {
        margin: 8px 0 4px;
        font-size: 14px;
      }
      details > summary {
        cursor: pointer;
      }
      button.file {
        font-family: var(--rl-mono);
        font-size: 12px;
        padding: 1px 6px;
      }
      .file-error {
        color: var(--rl-bad);
        font-size: 12px;
      }
      .phases {
        font-size: 13px;
      }
      .phases > summary {
        color: var(--rl-muted);
      }
      .phases table {
        margin: 4px 0;
      }
      .phases td.at,
      .phases td.took {
        font-family: var(--rl-mono);
        font-size: 12px;
        color: var(--rl-muted);
        text-align: right;
        white-space: nowrap;
      }
    `,
  ];

  /** The cell this bar runs. */
  cell: Cell | null = null;
  /** The page's run state. */
  controller: RunController | null = null;
  private readonly subscription = new StoreSubscription(this, () => this.controller);
  /** Why the last download failed (shown under the report), or null. */
  private fileError: string | null = null;

  /** Saves a file of the run folder through the browser's download. */
  private async download(name: string): Promise<void> {
    this.fileError = null;
    try {
      const bytes = await this.controller!.runFile(name);
      const a = document.createElement("a");
      a.href = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>]));
      a.download = name.split("/").filter(Boolean).join("_");
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
    } catch (e) {
      this.fileError = e instanceof Error ? e.message : String(e);
    }
    this.requestUpdate();
  }

  /** A run-folder file as a download button. */
  private fileButton(name: string) {
    return html`
      <button class="file" data-testid="download-file" data-file=${name}
        title="Download ${name} from this notebook's run folder" @click=${() =>
          void this.download(name)}>⤓ ${name}</button>
    `;
  }

  override render() {
    const c = this.controller;
    const cell = this.cell;
    if (!c || !cell) return nothing;
    const s = c.state(cell.id);
    const busy = c.active !== null;
    const mine = busy && (s.status === "running" || s.status === "waiting");
    return html`
      <div class="bar">
        <button data-testid="run-cell" ?disabled=${busy} @click=${() => c.run("cell", cell.id)}
          title="Runs this cell after the setup and training cells before it (training restores from its checkpoints)">Run</button>
        <button class="secondary" data-testid="run-from" ?disabled=${busy} @click=${() =>
          c.run("from", cell.id)}>Run from here</button>
        ${mine
          ? html`<button class="secondary" data-testid="stop-cell" ?disabled=${c.stopping} @click=${() => c.stop()}>${
            c.stopping ? "Stopping…" : "Stop"
          }</button>`
          : nothing}
        <span class="status" data-testid="run-status" data-status=${s.status}>${this.statusText(s)}</span>
      </div>
      ${s.progress && s.status === "running"
        ? html`
          <div class="progress" data-testid="progress">
            <progress max="1" .value=${s.progress.fraction}></progress>
            <span><span data-testid="progress-message">${s.progress.message}</span> · ${pct(
              s.progress.fraction,
            )} · <span data-testid="eta">${formatEta(s.progress.etaSeconds)}</span></span>
          </div>
        `
        : nothing}
      ${s.error ? this.renderError(s) : nothing}
      ${s.model ? this.renderModel(s.model) : nothing}
      ${cell.type === "model" && c.modelCache ? this.renderCache(c) : nothing}
      ${s.report ? this.renderReport(s.report) : nothing}
      ${this.fileError ? html`<p class="file-error" role="alert">${this.fileError}</p>` : nothing}
      ${s.metrics.length && !ONE_POINT.includes(cell.type)
        ? html`
          <h4>Metrics</h4>
          <rl-metrics-charts .runs=${[{ name: cell.id, records: s.metrics }]}></rl-metrics-charts>
        `
        : nothing}
      ${s.samples.length
        ? html`
          <details data-testid="inspector">
            <summary data-testid="open-inspector">Reward inspector (${s.samples.length} samples)</summary>
            <rl-reward-inspector .records=${s.samples} .step=${s.samples.at(-1)?.step ?? 0}></rl-reward-inspector>
          </details>
        `
        : nothing}
      ${s.history.length ? this.renderHistory(s.history, s.status === "running") : nothing}
    `;
  }

  /**
   * The phases of the cell's run, each with when it began (seconds since the run started) and how
   * long it took (to the next phase; the last one to its last line).
   */
  private renderHistory(h: ProgressEntry[], running: boolean) {
    // The phase in progress has taken until now, not until its last line (a prefill has one line: "0.0 s").
    const now = running ? this.controller?.runMs() ?? null : null;
    const end = (i: number) => h[i + 1]?.startMs ?? (now !== null ? Math.max(now, h[i].lastMs) : h[i].lastMs);
    const took = (i: number) => end(i) - h[i].startMs;
    const total = end(h.length - 1) - h[0].startMs;
    return html`
      <details class="phases" data-testid="progress-history">
        <summary>Progress log (${h.length} phase${h.length === 1 ? "" : "s"}, ${secs(total)})</summary>
        <table class="acc"><tr><th>began</th><th>phase</th><th>took</th></tr>
            ${h.map((e, i) =>
              html`
                <tr data-testid="progress-entry">
                  <td class="at">${secs(e.startMs)}</td>
                  <td>${e.message}</td>
                  <td class="took">${secs(took(i))}</td>
                </tr>
              `
            )}</table>
      </details>
    `;
  }

  /** What a model cell loaded (runner.ts builds it; model-summary.ts names the rows). */
  private renderModel(m: ModelSummary) {
    return html`
      <h4>Loaded model</h4>
      <table class="acc" data-testid="model-summary">
            ${summaryRows(m).map(([k, v]) =>
              html`
                <tr>
                  <th>${k}</th>
                  <td>${v}</td>
                </tr>
              `
            )}</table>
    `;
  }

  /** The model-file cache (OPFS): what it holds and a button that empties it. */
  private renderCache(c: RunController) {
    const u = c.modelCache!;
    return html`<div class="cache" data-testid="model-cache">
      <span data-testid="model-cache-usage">Model files cached in this browser (sources "hub" and "url"): ${
      u.files ? `${u.files} files, ${mb(u.bytes)}` : "none"
    }</span>
      ${
      u.files
        ? html`
          <button class="secondary" data-testid="clear-model-cache" ?disabled=${c.active !== null}
            title="Deletes the downloaded model files kept in the browser's private storage; the next run downloads them again"
            @click=${() => void c.clearModelCache()}>Clear cached model files</button>
        `
        : nothing
    }
    </div>`;
  }

  /** " (about 4 min on this device)" once the device's speed is known. */
  private expected(): string {
    const t = this.cell && this.controller?.expectedSeconds(this.cell.id);
    return t && t >= 1 ? ` (${about(t)} on this device)` : "";
  }

  private statusText(s: CellRunState): string {
    switch (s.status) {
      case "idle":
        return s.report ? "" : `not run yet${this.expected()}`;
      // The run's notes (a model's load, a device check) belong to the cell that wrote them, not here.
      case "waiting":
        return `waiting for the cells before it…${this.expected()}`;
      case "running":
        return this.controller?.stopping
          ? "stopping… (at the next decoding step)"
          : s.resumedFrom
          ? `running (resumed from step ${s.resumedFrom})`
          : "running…";
      case "done":
        return s.resumedFrom ? `done (resumed from step ${s.resumedFrom})` : "done";
      case "failed":
        return "failed";
      case "stopped":
        return "stopped";
    }
  }

  private renderError(s: CellRunState) {
    const e = s.error!;
    const c = this.controller!;
    return html`
      <div class="err" role="alert" data-testid="cell-error" data-kind=${e.kind}>
        <strong>${e.kind === "cancelled" ? "Stopped" : "This cell failed"}</strong>
        <pre>${e.message}</pre>
        <span>${e.remedy}</span>
        <span class="bar">
              ${e.resume
                ? html`<button data-testid="resume" ?disabled=${c.active !== null} @click=${() =>
                  c.resume()}>${e.resumeLabel}</button>`
                : nothing}
              ${e.kind === "checkpoint"
                ? html`<button class="secondary" data-testid="start-fresh" @click=${() =>
                  c.startFresh()}>Start fresh</button>`
                : nothing}
            </span>
      </div>
    `;
  }

  private figuresRows(label: string, f: AccuracyFigures) {
    const ks = Object.keys(f.passAtK ?? {});
    return html`<tr><td>${label}</td><td>${f.questions}</td><td>${pct(f.greedy)}</td>
      ${ks.map((k) => html`<td>${pct(f.passAtK![k])} / ${pct(f.majAtK?.[k] ?? 0)}</td>`)}</tr>`;
  }

  private renderReport(r: StageReport) {
    switch (r.kind) {
      case "evaluate": {
        const ks = Object.keys(r.overall.passAtK ?? {});
        return html`<h4>Execution accuracy on ${r.split} (${r.label})</h4>
          <table class="acc" data-testid="accuracy-table"><tr><th></th><th>questions</th><th>greedy</th>${
          ks.map((k) => html`<th>pass@${k} / maj@${k}</th>`)
        }</tr>
          ${this.figuresRows("overall", r.overall)}
          ${Object.entries(r.byDifficulty).map(([d, f]) => this.figuresRows(d, f))}</table>
          ${
          r.chains
            ? html`
              <p
                data-testid="eval-chains">Greedy answers as chains of CTEs: ${r.chains.multiStep} of ${r.chains
                  .answers} have two or more steps (a CTE and the final SELECT); by CTE steps ${Object.entries(
                    r.chains.byCtes,
                  ).sort(([a], [b]) => Number(a) - Number(b)).map(([k, n]) => `${k}: ${n}`).join(", ") || "none"}; ${r
                  .chains.noSql} without SQL.</p>
            `
            : nothing
        }`;
      }
      case "select":
        return html`
          <h4>Models × templates on ${r.split}</h4>
          <table class="acc" data-testid="accuracy-table">
                    <tr><th>rank</th><th>model</th><th>template</th><th>accuracy</th></tr>
                    ${r.entries.map((e) =>
                      html`
                        <tr>
                          <td>${e.rank}</td>
                          <td>${e.model}</td>
                          <td>${e.template}</td>
                          <td>${pct(e.accuracy)}</td>
                        </tr>
                      `
                    )}</table>
          <p>Winner: ${r.winner.model} with ${r.winner.template}</p>
        `;
      case "warmup":
        if (r.method === "sft") {
          // Nothing sampled: the rounds trained on the dataset's gold answers.
          const t = r.targets;
          return html`<h4>Warm-up (sft on gold targets)</h4>
            ${
            t
              ? html`
                <p
                  data-testid="warmup-targets">Gold targets under ${t.template}: ${t
                    .completion} from the records' <code>completion</code>, ${t
                    .gold} the gold SQL in the template's answer format${t.cocte !== undefined
                    ? html`, ${t.cocte} the gold as a chain of CTEs (<code>${t.cocteFile}</code>)`
                    : nothing}.${t.tooLong
                    ? ` ${t.tooLong} left out: longer than the model's positions after their prompt.`
                    : ""}</p>
              `
              : nothing
          }
            <table class="acc" data-testid="accuracy-table">
            <tr><th>round</th><th>gold targets</th><th>mean token log-probability before → after</th><th>optimiser steps</th></tr>
            ${
            r.rounds.map((x) =>
              html`
                <tr>
                  <td>${x.round}</td>
                  <td>${x.goldTargets ?? 0}</td>
                  <td>${x.targetLogprob
                    ? `${x.targetLogprob.before.toFixed(3)} → ${x.targetLogprob.after.toFixed(3)}`
                    : "—"}</td>
                  <td>${x.optimiserSteps}</td>
                </tr>
              `
            )
          }</table>`;
        }
        return html`<h4>Warm-up (${r.method})</h4><table class="acc" data-testid="accuracy-table">
          <tr><th>round</th><th>samples</th><th>sample accuracy</th><th>trained on</th><th>optimiser steps</th><th>dataset file (lines, questions)</th></tr>
          ${
          r.rounds.map((x) =>
            html`
              <tr>
                <td>${x.round}</td>
                <td>${x.samples}</td>
                <td>${x.sampleAccuracy === undefined ? "—" : pct(x.sampleAccuracy)}</td>
                <td>${x.rftTargets + x.weightedSamples}</td>
                <td>${x.optimiserSteps}</td>
                <td>${x.dataset
                  ? html`<code>${x.dataset.path}</code> (${x.dataset.records}, ${x.dataset.questions})`
                  : "—"}</td>
              </tr>
            `
          )
        }</table>
          ${
          r.datasetFiles?.length
            ? html`<p data-testid="warmup-dataset">Scored samples (${r.exportSamples}) as "rlvr" datasets in the run's folder: ${
              r.datasetFiles.map((f, i) => html`${i ? " " : ""}${this.fileButton(f)}`)
            }</p>`
            : nothing
        }`;
      case "grpo":
        return html`
          <h4>GRPO</h4>
          <p
            data-testid="grpo-report">${r.steps} steps${r.resumedFrom
              ? ` (resumed from step ${r.resumedFrom})`
              : ""}; equal-reward groups ${pct(r.equalGroupFraction)}; skipped updates ${r
              .skippedSteps}${r.heldout.length
              ? html`; held-out accuracy ${r.heldout.map((h) => `step ${h.step}: ${pct(h.accuracy)}`).join(", ")}`
              : ""}</p>
        `;
      case "selfconsistency":
        return html`
          <h4>Self-consistency on ${r.split} (${r.samples} samples, ${r.weighting})</h4><table class="acc"
            data-testid="accuracy-table">
            <tr><th>vote</th><th>best-of-N</th>${(r.prmBestOfN ?? []).map((x) =>
              html`<th>${x.labels === "outcome" ? "ORM" : "PRM"} best-of-N (${x.cellId})</th>`
            )}<th>pass@N</th><th>first sample</th></tr>
            <tr><td>${pct(r.voteAccuracy)}</td><td>${pct(r.bestOfNAccuracy)}</td>${(r.prmBestOfN ?? []).map((x) =>
              html`<td>${pct(x.accuracy)}</td>`
            )}<td>${pct(r.oracleAccuracy)}</td><td>${pct(r.firstSampleAccuracy)}</td></tr>
          </table>
                    ${renderSelectionAtN(r)}
        `;
      case "prmdata":
        return renderPrmData(r, (f) => this.fileButton(f));
      case "prmtrain":
        return renderPrmTrain(r, (f) => this.fileButton(f));
      case "export":
        return html`
          <h4>Files written in the run's folder (click one to download it)</h4>
          <ul>${r.files.map((f) => html`<li>${this.fileButton(f)}</li>`)}</ul>
        `;
    }
  }
}

customElements.define("rl-cell-run", RlCellRun);

declare global {
  interface HTMLElementTagNameMap {
    "rl-cell-run": RlCellRun;
  }
}
