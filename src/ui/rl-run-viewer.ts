// <rl-run-viewer>: opens runs' output (metrics.jsonl and samples.jsonl, as `rlvr run` writes
// them, with its notebook.json) and shows their charts and reward inspector; each opened run is
// overlaid on the charts under its folder's name. Clicking a chart point jumps the inspector to that step.
import { css, html, LitElement, nothing } from "lit";
import { decodeMetrics } from "../core/metrics.ts";
import { decodeSamples, type SampleRecord } from "../runtime/records.ts";
import { type NotebookCells, readableRecords, type RunMetrics } from "./metrics-series.ts";
import "./rl-metrics-charts.ts";
import type { StepSelectEvent } from "./rl-metrics-charts.ts";
import "./rl-reward-inspector.ts";
import { cellStyles } from "./styles.ts";

interface OpenedRun extends RunMetrics {
  samples: SampleRecord[];
}

export class RlRunViewer extends LitElement {
  static override properties = {
    runs: { state: true },
    step: { state: true },
    current: { state: true },
    problems: { state: true },
  };
  static override styles = [
    cellStyles,
    css`
      .bar {
        display: flex;
        gap: 8px;
        align-items: center;
        flex-wrap: wrap;
        margin-bottom: 10px;
      }
      h4 {
        margin: 14px 0 6px;
        font-size: 14px;
      }
    `,
  ];

  private runs: OpenedRun[] = [];
  private step = 0;
  private current = 0;
  private problems: string[] = [];

  override render() {
    const run = this.runs[this.current];
    return html`
      <div class="bar">
        <button class="secondary" @click=${() =>
          this.renderRoot.querySelector<HTMLInputElement>("[data-testid=run-folders]")
            ?.click()}>Open run folders…</button>
        <button class="secondary" @click=${() =>
          this.renderRoot.querySelector<HTMLInputElement>("[data-testid=run-files]")?.click()}>Open files…</button>
        <input type="file" data-testid="run-folders" webkitdirectory multiple hidden @change=${this.open} />
        <input type="file" data-testid="run-files" multiple accept=".jsonl,.json" hidden @change=${this.open} />
        <span class="muted">The folder of <code>rlvr run --out DIR</code> (metrics.jsonl, samples.jsonl, notebook.json), or a folder of
          such folders: each run is named after its folder; open several to compare them.</span>
        ${this.runs.length
          ? html`<button class="secondary" data-testid="clear-runs" @click=${() => ((this.runs = []),
            (this.current = 0))}>Close all</button>`
          : nothing}
        ${this.runs.length > 1
          ? html`<label>Inspect <select @change=${(
            e: Event,
          ) => (this.current = Number((e.target as HTMLSelectElement).value))}>
          ${
            this.runs.map((r, i) => html`<option value=${i} ?selected=${i === this.current}>${r.name}</option>`)
          }</select></label>`
          : nothing}
      </div>
      ${this.problems.map((p) => html`<p class="error" role="alert">${p}</p>`)}
      ${this.runs.length
        ? html`
          <rl-metrics-charts .runs=${this.runs} @step-select=${this.onStep}></rl-metrics-charts>
          <h4>Reward inspector${run
            ? html`
              <span class="muted">— ${run.name}</span>
            `
            : nothing}</h4>
          ${run && !run.samples.length
            ? html`
              <p class="muted" data-testid="no-samples">
                ${run
                  .name} has no samples.jsonl (runs written before sample records were kept, or opened without it): its
                charts only.
              </p>
            `
            : html`
              <rl-reward-inspector .records=${run?.samples ?? []} .step=${this.step}></rl-reward-inspector>
            `}
        `
        : nothing}
    `;
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
    // One run per folder that holds the files (a folder of run folders opens them all); loose files are one run.
    const byFolder = new Map<string, File[]>();
    for (const f of files) {
      const dir = f.webkitRelativePath.split("/").slice(0, -1).join("/");
      byFolder.set(dir, [...(byFolder.get(dir) ?? []), f]);
    }
    const added: OpenedRun[] = [];
    const folders = [...byFolder].sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true }));
    for (const [dir, group] of folders) {
      if (dir && !group.some((f) => /metrics|samples/i.test(f.name))) continue;
      const run = await this.read(dir, group, problems);
      if (run.records.length || run.samples.length) added.push(run);
    }
    const taken = new Set(this.runs.map((r) => r.name));
    for (const r of added) {
      let name = r.name;
      for (let k = 2; taken.has(name); k++) name = `${r.name} (${k})`;
      r.name = name;
      taken.add(name);
    }
    if (!added.length && !problems.length) problems.push("No metrics.jsonl or samples.jsonl in what was opened.");
    this.problems = problems;
    if (added.length) {
      this.runs = [...this.runs, ...added];
      this.current = this.runs.length - 1;
      const run = this.runs[this.current];
      this.step = run.samples.at(-1)?.step ?? run.records.at(-1)?.step ?? 0;
    }
  }

  /** One run from the files of one folder: named after the folder, else the notebook's title. */
  private async read(dir: string, files: File[], problems: string[]): Promise<OpenedRun> {
    let notebook: NotebookCells | undefined;
    const nbFile = files.find((f) => f.name === "notebook.json");
    if (nbFile) {
      try {
        const nb = JSON.parse(await nbFile.text()) as unknown;
        if (isNotebookCells(nb)) notebook = nb;
      } catch {
        problems.push(`${dir ? `${dir}/` : ""}notebook.json is not JSON: its cell names are not used.`);
      }
    }
    const name = dir.split("/").at(-1) || notebook?.title || `run ${this.runs.length + 1}`;
    const run: OpenedRun = { name, records: [], samples: [] };
    for (const f of files) {
      if (f === nbFile) continue;
      const where = dir ? `${dir}/${f.name}` : f.name;
      if (/metrics/i.test(f.name)) {
        const d = decodeMetrics(await f.text());
        run.records.push(...d.records);
        if (d.errors.length) {
          problems.push(
            `${where}: ${d.errors.length} unreadable line(s), first at line ${d.errors[0].line} (${
              d.errors[0].message
            }); the rest is shown.`,
          );
        }
      } else if (/samples/i.test(f.name)) {
        const d = decodeSamples(await f.text());
        run.samples.push(...d.records);
        if (d.errors.length) {
          problems.push(
            `${where}: ${d.errors.length} unreadable line(s), first at line ${d.errors[0]}; the rest is shown.`,
          );
        }
      } else if (!dir) {
        problems.push(`${f.name}: not a metrics or samples file (names must contain "metrics" or "samples").`);
      }
    }
    run.records = readableRecords(run.records, notebook);
    return run;
  }
}

function isNotebookCells(x: unknown): x is NotebookCells {
  if (typeof x !== "object" || x === null || !("cells" in x) || !Array.isArray(x.cells)) return false;
  return x.cells.every((c: unknown) =>
    typeof c === "object" && c !== null && "id" in c && typeof c.id === "string" && "type" in c &&
    typeof c.type === "string"
  );
}

customElements.define("rl-run-viewer", RlRunViewer);

declare global {
  interface HTMLElementTagNameMap {
    "rl-run-viewer": RlRunViewer;
  }
}
