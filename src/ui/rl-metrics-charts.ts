// <rl-metrics-charts>: live charts of a run's metrics stream (and other runs overlaid), one panel
// per quantity. A colour per run, a line style per series; smoothing (EMA, as TensorBoard), runs
// hidden or shown, the mean of a notebook's seeds with the band from its lowest to its highest run,
// drag to zoom, and each chart's picture (PNG) and data (CSV). Clicking a point fires `step-select`
// so the reward inspector can jump to it.
import {
  Chart,
  type ChartConfiguration,
  type ChartDataset,
  Filler,
  LinearScale,
  LineController,
  LineElement,
  type Plugin,
  PointElement,
  Tooltip,
} from "chart.js";
import zoomPlugin from "chartjs-plugin-zoom";
import { css, html, LitElement, nothing } from "lit";
import {
  buildPanels,
  emaSmooth,
  meanOver,
  type Panel,
  panelCsv,
  type RunMetrics,
  seedGroup,
  type Series,
} from "./metrics-series.ts";
import { cellStyles } from "./styles.ts";

Chart.register(LineController, LineElement, PointElement, LinearScale, Tooltip, Filler, zoomPlugin);

/** Run colours (Okabe-Ito-like, told apart by most colour-blind readers). */
export const RUN_COLOURS = ["#3b5bdb", "#e8590c", "#2b8a3e", "#c2255c", "#7048e8", "#0c8599", "#e67700", "#495057"];
/** Line styles of a panel's series, in order. */
const DASHES: number[][] = [[], [6, 3], [2, 2], [10, 3, 2, 3], [1, 4]];

/** Fired when the user clicks a chart point. */
export class StepSelectEvent extends Event {
  constructor(readonly run: string, readonly step: number) {
    super("step-select", { bubbles: true, composed: true });
  }
}

type Point = { x: number; y: number };
type Dataset = ChartDataset<"line", Point[]> & { run?: string; series?: string; band?: boolean };

/** Paints the plot's background, so an exported PNG is not transparent. */
const background: Plugin<"line"> = {
  id: "rlBackground",
  beforeDraw(chart) {
    const ctx = chart.ctx;
    ctx.save();
    ctx.globalCompositeOperation = "destination-over";
    ctx.fillStyle = getComputedStyle(chart.canvas).getPropertyValue("--rl-surface").trim() || "#fff";
    ctx.fillRect(0, 0, chart.width, chart.height);
    ctx.restore();
  },
};

export class RlMetricsCharts extends LitElement {
  static override properties = {
    runs: { attribute: false },
    smoothing: { state: true },
    mean: { state: true },
    hiddenRuns: { state: true },
    hiddenSeries: { state: true },
  };
  static override styles = [
    cellStyles,
    css`
      :host {
        display: block;
        min-width: 0;
      }
      .toolbar {
        display: flex;
        flex-wrap: wrap;
        gap: 6px 16px;
        align-items: center;
        margin-bottom: 8px;
        font-size: 13px;
      }
      .runs {
        display: flex;
        flex-wrap: wrap;
        gap: 4px 12px;
      }
      .run {
        display: inline-flex;
        align-items: center;
        gap: 4px;
        cursor: pointer;
      }
      .run.off {
        opacity: 0.45;
        text-decoration: line-through;
      }
      .swatch {
        width: 12px;
        height: 12px;
        border-radius: 2px;
        display: inline-block;
      }
      .grid {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(300px, 1fr));
        gap: 12px;
      }
      figure {
        margin: 0;
        border: 1px solid var(--rl-border);
        border-radius: 6px;
        padding: 8px;
        background: var(--rl-surface);
        min-width: 0;
      }
      figcaption {
        font-size: 13px;
        color: var(--rl-muted);
        margin-bottom: 4px;
        display: flex;
        gap: 6px;
        align-items: baseline;
        flex-wrap: wrap;
      }
      figcaption .title {
        flex: 1 1 auto;
      }
      figcaption button {
        font-size: 11px;
        padding: 1px 6px;
      }
      .series {
        display: flex;
        flex-wrap: wrap;
        gap: 2px 10px;
        font-size: 11px;
        margin-bottom: 4px;
      }
      .series button {
        background: none;
        border: none;
        padding: 0;
        color: var(--rl-text);
        display: inline-flex;
        gap: 4px;
        align-items: center;
        cursor: pointer;
        font-size: 11px;
      }
      .series button[aria-pressed="false"] {
        opacity: 0.4;
        text-decoration: line-through;
      }
      .canvas-box {
        position: relative;
        height: 200px;
      }
      figure[data-panel="evaluations"] {
        grid-column: 1 / -1;
      }
      .table-box {
        overflow-x: auto;
        margin-top: 6px;
      }
      .table-box table {
        font-size: 12px;
        border-collapse: collapse;
      }
      .table-box th,
      .table-box td {
        padding: 1px 8px;
        text-align: right;
        white-space: nowrap;
      }
      .table-box th:first-child {
        text-align: left;
      }
      input[type=range] {
        width: 120px;
        vertical-align: middle;
      }
    `,
  ];

  /** Runs to draw, in the order of their colours. */
  runs: RunMetrics[] = [];
  private smoothing = 0;
  private mean = false;
  private hiddenRuns = new Set<string>();
  private hiddenSeries = new Map<string, Set<string>>();
  private charts = new Map<string, Chart<"line", Point[]>>();

  /** A run's colour: by its place among the runs. */
  colourOf(run: string): string {
    const i = Math.max(0, this.runs.findIndex((r) => r.name === run));
    return RUN_COLOURS[i % RUN_COLOURS.length];
  }

  override render() {
    const panels = buildPanels(this.runs);
    if (!panels.length) {
      // Records without a chartable figure (an sft warm-up: no sampled rewards): say so, not "yet".
      const n = this.runs.reduce((a, r) => a + r.records.length, 0);
      return n > 0
        ? html`
          <p class="muted"
            data-testid="no-charts">Nothing to chart in this cell's ${n === 1
              ? "metrics record"
              : `${n} metrics records`}: its figures are in the report above.</p>
        `
        : html`<p class="muted" data-testid="no-charts">No metrics yet: charts appear with the first step.</p>`;
    }
    const seeds = this.seedGroups();
    return html`
      <div class="toolbar">
        ${this.runs.length > 1
          ? html`<div class="runs" data-testid="run-legend">${
            this.runs.map((r) =>
              html`<label class="run ${this.hiddenRuns.has(r.name) ? "off" : ""}" title="Show or hide this run">
          <input type="checkbox" data-testid="run-toggle" data-run=${r.name} .checked=${!this.hiddenRuns.has(
                r.name,
              )} @change=${() => this.toggleRun(r.name)} />
          <span class="swatch" style="background:${this.colourOf(r.name)}"></span>${r.name}</label>`
            )
          }</div>`
          : nothing}
        <label title="Exponential moving average of each line, as TensorBoard's smoothing (0: raw points)">Smoothing
          <input type="range" data-testid="smoothing" min="0" max="0.99" step="0.01" .value=${String(this.smoothing)}
            @input=${(e: Event) => (this.smoothing = Number((e.target as HTMLInputElement).value))} />
          <span>${this.smoothing.toFixed(2)}</span></label>
        ${seeds.size
          ? html`
            <label
              title="Runs whose names differ only in a seed suffix (-s1, -s2, ...): their mean line, the band from the lowest to the highest run">
                      <input type="checkbox" data-testid="mean-seeds" .checked=${this.mean} @change=${(
                        e: Event,
                      ) => (this.mean = (e.target as HTMLInputElement).checked)} />
                      Mean and spread over seeds (${[...seeds].map(([g, n]) => `${g}: ${n} runs`).join("; ")})</label>
          `
          : nothing}
        <span class="muted">Drag across a chart to zoom.</span>
      </div>
      <div class="grid">${panels.map((p) => this.figure(p))}</div>
    `;
  }

  private figure(p: Panel) {
    const labels = [...new Set(p.series.map((s) => s.label))];
    const hidden = this.hiddenSeries.get(p.id) ?? new Set<string>();
    return html`<figure data-panel=${p.id}>
      <figcaption><span class="title">${p.title}</span>
        <button class="secondary" data-testid="zoom-reset" title="Back to the whole range" @click=${() =>
      this.charts.get(p.id)?.resetZoom()}>Reset zoom</button>
        <button class="secondary" data-testid="export-png" title="Save this chart as a PNG picture" @click=${() =>
      this.exportPng(p)}>PNG</button>
        <button class="secondary" data-testid="export-csv" title="Save this chart's data as CSV (run, series, step, value)" @click=${() =>
      this.exportCsv(p)}>CSV</button>
      </figcaption>
      ${
      labels.length > 1
        ? html`<div class="series" data-testid="series-picker">${
          labels.map((l, i) =>
            html`
              <button aria-pressed=${hidden.has(l) ? "false" : "true"} data-series=${l}
                title="Show or hide this series" @click=${() => this.toggleSeries(p.id, l)}>${this.dashSample(
                  i,
                )}${l}</button>
            `
          )
        }</div>`
        : nothing
    }
      <div class="canvas-box"><canvas id=${`c-${p.id}`} aria-label=${p.title} role="img"></canvas></div>
      ${p.categories ? this.valueTable(p, p.categories) : nothing}
    </figure>`;
  }

  /** The figures of a panel over named cells, as a table (the shown runs, or their means): exact values to quote. */
  private valueTable(p: Panel, cats: string[]) {
    const rows = new Map<string, (string | undefined)[]>();
    for (const d of this.datasets(p)) {
      if (d.band) continue;
      const name = d.label?.replace(/: [^:]*$/, "") ?? "";
      const row = rows.get(name) ?? cats.map(() => undefined);
      for (const pt of d.data) {
        row[pt.x] = p.percent ? `${(pt.y * 100).toFixed(1)}%` : String(Number(pt.y.toPrecision(4)));
      }
      rows.set(name, row);
    }
    return html`
      <div class="table-box">
        <table data-testid="panel-table"><tr><th></th>${cats.map((c) => html`<th>${c}</th>`)}</tr>
            ${[...rows].map(([name, row]) =>
              html`<tr><th>${name}</th>${row.map((v) => html`<td>${v ?? "—"}</td>`)}</tr>`
            )}</table>
      </div>
    `;
  }

  private dashSample(i: number) {
    const d = DASHES[i % DASHES.length];
    return html`
      <svg width="22" height="8" aria-hidden="true">
        <line x1="0" y1="4" x2="22" y2="4" stroke="currentColor" stroke-width="2" stroke-dasharray=${d.length
          ? d.join(" ")
          : "none"}></line>
      </svg>
    `;
  }

  override updated(): void {
    const panels = buildPanels(this.runs);
    const live = new Set(panels.map((p) => p.id));
    for (const [id, chart] of this.charts) {
      if (!live.has(id) || chart.canvas.isConnected === false) {
        chart.destroy();
        this.charts.delete(id);
      }
    }
    for (const p of panels) this.draw(p);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    for (const c of this.charts.values()) c.destroy();
    this.charts.clear();
  }

  /** Seed groups with at least two runs: group key -> number of runs. */
  private seedGroups(): Map<string, number> {
    const n = new Map<string, number>();
    for (const r of this.runs) n.set(seedGroup(r.name), (n.get(seedGroup(r.name)) ?? 0) + 1);
    return new Map([...n].filter(([, k]) => k > 1));
  }

  private toggleRun(run: string): void {
    const next = new Set(this.hiddenRuns);
    if (!next.delete(run)) next.add(run);
    this.hiddenRuns = next;
  }

  private toggleSeries(panel: string, label: string): void {
    const next = new Map(this.hiddenSeries);
    const set = new Set(next.get(panel) ?? []);
    if (!set.delete(label)) set.add(label);
    next.set(panel, set);
    this.hiddenSeries = next;
  }

  /** The datasets of panel `p` as shown: visible runs and series, smoothed, seeds averaged when asked. */
  datasets(p: Panel): Dataset[] {
    const labels = [...new Set(p.series.map((s) => s.label))];
    const hidden = this.hiddenSeries.get(p.id) ?? new Set<string>();
    const shown = p.series.filter((s) => !this.hiddenRuns.has(s.run) && !hidden.has(s.label));
    const lines = !p.categories;
    const smooth = (pts: Point[]) => (lines ? emaSmooth(pts, this.smoothing) : pts);
    const out: Dataset[] = [];
    const line = (
      s: Series | { label: string; run: string; points: Point[] },
      colour: string,
      extra: Partial<Dataset> = {},
    ): Dataset => ({
      label: `${s.run}: ${s.label}`,
      run: s.run,
      series: s.label,
      data: smooth(s.points),
      borderColor: colour,
      backgroundColor: colour,
      borderWidth: 1.5,
      borderDash: DASHES[labels.indexOf(s.label) % DASHES.length],
      pointRadius: lines ? (s.points.length > 60 ? 0 : 2) : 4,
      pointStyle: lines ? "circle" : "rectRot",
      showLine: lines,
      tension: 0,
      ...extra,
    });
    const groups = this.mean ? this.seedGroups() : new Map<string, number>();
    const done = new Set<Series>();
    for (const s of shown) {
      if (done.has(s)) continue;
      const g = seedGroup(s.run);
      const colour = this.colourOf(s.run);
      const members = groups.has(g) ? shown.filter((t) => t.label === s.label && seedGroup(t.run) === g) : [s];
      members.forEach((m) => done.add(m));
      if (members.length < 2) {
        if (this.smoothing > 0 && lines) {
          out.push({
            ...line(s, colour),
            data: s.points,
            borderWidth: 1,
            pointRadius: 0,
            borderColor: `${colour}40`,
            band: true,
          });
        }
        out.push(line(s, colour));
        continue;
      }
      const m = meanOver(members, g);
      const name = `${g} (mean of ${m.runs})`;
      const lo = m.points.map((q) => ({ x: q.x, y: q.lo }));
      const hi = m.points.map((q) => ({ x: q.x, y: q.hi }));
      const band = {
        borderWidth: lines ? 0 : 2,
        pointRadius: lines ? 0 : 6,
        pointStyle: "line" as const,
        band: true,
        showLine: lines,
        borderDash: [],
      };
      out.push(line({ label: s.label, run: name, points: hi }, colour, { ...band, fill: false }));
      out.push(
        line({ label: s.label, run: name, points: lo }, colour, {
          ...band,
          fill: lines ? "-1" : false,
          backgroundColor: `${colour}30`,
        }),
      );
      out.push({
        ...line({ label: s.label, run: name, points: m.points.map((q) => ({ x: q.x, y: q.y })) }, colour),
        run: members[0].run,
      });
    }
    return out;
  }

  private draw(p: Panel): void {
    const canvas = this.renderRoot.querySelector<HTMLCanvasElement>(`#c-${p.id}`);
    if (!canvas) return;
    const style = getComputedStyle(this);
    const text = style.getPropertyValue("--rl-muted").trim() || "#666";
    const grid = style.getPropertyValue("--rl-border").trim() || "#ddd";
    const datasets = this.datasets(p);
    const existing = this.charts.get(p.id);
    if (existing && existing.canvas === canvas) {
      existing.data.datasets = datasets;
      existing.update("none");
      return;
    }
    existing?.destroy();
    const cats = p.categories;
    const config: ChartConfiguration<"line", Point[]> = {
      type: "line",
      data: { datasets },
      plugins: [background],
      options: {
        animation: false,
        maintainAspectRatio: false,
        parsing: false,
        interaction: { mode: "nearest", intersect: false },
        scales: {
          x: {
            type: "linear",
            title: { display: true, text: p.xLabel, color: text },
            grid: { color: grid },
            ...(cats
              ? {
                min: -0.5,
                max: cats.length - 0.5,
                afterBuildTicks: (axis: { ticks: { value: number }[] }) =>
                  void (axis.ticks = cats.map((_, i) => ({ value: i }))),
                ticks: {
                  color: text,
                  autoSkip: false,
                  maxRotation: 60,
                  callback: (v: number | string) => cats[Number(v)] ?? "",
                },
              }
              : { ticks: { color: text, precision: 0 } }),
          },
          y: {
            title: { display: true, text: p.percent ? `${p.yLabel} (%)` : p.yLabel, color: text },
            grid: { color: grid },
            ...(p.percent
              ? {
                min: 0,
                max: 1,
                ticks: { color: text, stepSize: 0.1, callback: (v) => `${Math.round(Number(v) * 100)}%` },
              }
              : { ticks: { color: text } }),
          },
        },
        plugins: {
          legend: { display: false },
          tooltip: {
            filter: (item) => !(item.dataset as Dataset).band,
            callbacks: {
              title: (
                items,
              ) => (items[0] ? (cats ? cats[items[0].parsed.x ?? 0] ?? "" : `step ${items[0].parsed.x}`) : ""),
              label: (item) => {
                const ds = item.dataset as Dataset;
                const y = item.parsed.y ?? NaN;
                return `${ds.label}: ${p.percent ? `${(y * 100).toFixed(1)}%` : Number(y.toPrecision(4))}`;
              },
            },
          },
          zoom: {
            zoom: { drag: { enabled: true, threshold: 5 }, mode: "x" },
            pan: { enabled: true, mode: "x", modifierKey: "shift" },
          },
        },
        onClick: (_e, elements, chart) => {
          const el = elements.find((e) => !(chart.data.datasets[e.datasetIndex] as Dataset).band);
          if (!el || cats) return;
          const ds = chart.data.datasets[el.datasetIndex] as Dataset;
          const pt = ds.data[el.index] as Point;
          this.dispatchEvent(new StepSelectEvent(ds.run ?? "", pt.x));
        },
      },
    };
    this.charts.set(p.id, new Chart(canvas, config));
  }

  private exportPng(p: Panel): void {
    const chart = this.charts.get(p.id);
    if (chart) download(`${p.id}.png`, chart.toBase64Image("image/png", 1));
  }

  private exportCsv(p: Panel): void {
    const url = URL.createObjectURL(new Blob([panelCsv(p)], { type: "text/csv" }));
    download(`${p.id}.csv`, url);
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
}

function download(name: string, href: string): void {
  const a = document.createElement("a");
  a.href = href;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
}

customElements.define("rl-metrics-charts", RlMetricsCharts);

declare global {
  interface HTMLElementTagNameMap {
    "rl-metrics-charts": RlMetricsCharts;
  }
}
