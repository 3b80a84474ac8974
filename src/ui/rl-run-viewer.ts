// <rl-run-viewer>: opens a run's output (metrics.jsonl and samples.jsonl, as `rlvr run` writes
// them) and shows its charts and reward inspector; each opened run is overlaid on the charts.
// Clicking a chart point jumps the inspector to that step.
import { css, html, LitElement, nothing } from "lit";
import { decodeMetrics, resumedOnce } from "../core/metrics.ts";
import { decodeSamples, type SampleRecord } from "../runtime/records.ts";
import type { RunMetrics } from "./metrics-series.ts";
import "./rl-metrics-charts.ts";
import type { StepSelectEvent } from "./rl-metrics-charts.ts";
import "./rl-reward-inspector.ts";
import { cellStyles } from "./styles.ts";

interface OpenedRun extends RunMetrics {
  samples: SampleRecord[];
}

export class RlRunViewer extends LitElement {
  static override properties = { runs: { state: true }, step: { state: true }, current: { state: true }, problems: { state: true } };
  static override styles = [cellStyles, css`
    .bar { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin-bottom: 10px; }
    h4 { margin: 14px 0 6px; font-size: 14px; }
  `];

  private runs: OpenedRun[] = [];
  private step = 0;
  private current = 0;
  private problems: string[] = [];

  override render() {
    const run = this.runs[this.current];
    return html`
      <div class="bar">
        <button class="secondary" @click=${() => this.renderRoot.querySelector<HTMLInputElement>("input[type=file]")?.click()}>Open run output…</button>
        <input type="file" data-testid="run-files" multiple accept=".jsonl,.json" hidden @change=${this.open} />
        <span class="muted">metrics.jsonl and samples.jsonl from <code>rlvr run --out DIR</code>; open several runs to compare them.</span>
        ${this.runs.length > 1 ? html`<label>Inspect <select @change=${(e: Event) => (this.current = Number((e.target as HTMLSelectElement).value))}>
          ${this.runs.map((r, i) => html`<option value=${i} ?selected=${i === this.current}>${r.name}</option>`)}</select></label>` : nothing}
      </div>
      ${this.problems.map((p) => html`<p class="error" role="alert">${p}</p>`)}
      ${this.runs.length ? html`
        <rl-metrics-charts .runs=${this.runs} @step-select=${this.onStep}></rl-metrics-charts>
        <h4>Reward inspector${run ? html` <span class="muted">— ${run.name}</span>` : nothing}</h4>
        <rl-reward-inspector .records=${run?.samples ?? []} .step=${this.step}></rl-reward-inspector>` : nothing}`;
  }

  private onStep(e: StepSelectEvent): void {
    const i = this.runs.findIndex((r) => r.name === e.run);
    if (i >= 0) this.current = i;
    this.step = e.step;
  }

  private async open(e: Event): Promise<void> {
    const input = e.target as HTMLInputElement;
    const files = [...(input.files ?? [])];
    input.value = "";
    const problems: string[] = [];
    const name = files.map((f) => f.webkitRelativePath.split("/")[0]).find(Boolean) || `run ${this.runs.length + 1}`;
    const run: OpenedRun = { name, records: [], samples: [] };
    for (const f of files) {
      const text = await f.text();
      if (/metrics/i.test(f.name)) {
        const d = decodeMetrics(text);
        run.records.push(...d.records);
        if (d.errors.length) problems.push(`${f.name}: ${d.errors.length} unreadable line(s), first at line ${d.errors[0].line} (${d.errors[0].message}); the rest is shown.`);
      } else if (/samples/i.test(f.name)) {
        const d = decodeSamples(text);
        run.samples.push(...d.records);
        if (d.errors.length) problems.push(`${f.name}: ${d.errors.length} unreadable line(s), first at line ${d.errors[0]}; the rest is shown.`);
      } else {
        problems.push(`${f.name}: not a metrics or samples file (names must contain "metrics" or "samples").`);
      }
    }
    run.records = resumedOnce(run.records);
    this.problems = problems;
    if (run.records.length || run.samples.length) {
      this.runs = [...this.runs, run];
      this.current = this.runs.length - 1;
      this.step = run.samples.at(-1)?.step ?? run.records.at(-1)?.step ?? 0;
    }
  }
}

customElements.define("rl-run-viewer", RlRunViewer);

declare global {
  interface HTMLElementTagNameMap {
    "rl-run-viewer": RlRunViewer;
  }
}
