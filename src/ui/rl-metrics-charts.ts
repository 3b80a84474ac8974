// <rl-metrics-charts>: live charts of a run's metrics stream (and other runs overlaid), one panel
// per quantity. Clicking a point fires `step-select` so the reward inspector can jump to it.
import {
  Chart, type ChartConfiguration, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip,
} from "chart.js";
import { css, html, LitElement } from "lit";
import { buildPanels, type Panel, type RunMetrics } from "./metrics-series.ts";
import { cellStyles } from "./styles.ts";

Chart.register(LineController, LineElement, PointElement, LinearScale, Legend, Tooltip);

const PALETTE = ["#3b5bdb", "#e8590c", "#2b8a3e", "#c2255c", "#7048e8", "#0c8599", "#e67700", "#495057"];

/** Fired when the user clicks a chart point. */
export class StepSelectEvent extends Event {
  constructor(readonly run: string, readonly step: number) {
    super("step-select", { bubbles: true, composed: true });
  }
}

export class RlMetricsCharts extends LitElement {
  static override properties = { runs: { attribute: false } };
  static override styles = [cellStyles, css`
    .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 12px; }
    figure { margin: 0; border: 1px solid var(--rl-border); border-radius: 6px; padding: 8px; background: var(--rl-surface); }
    figcaption { font-size: 13px; color: var(--rl-muted); margin-bottom: 4px; }
    .canvas-box { position: relative; height: 190px; }
  `];

  /** Runs to draw; the first is the current one. */
  runs: RunMetrics[] = [];
  private charts = new Map<string, Chart>();

  override render() {
    const panels = buildPanels(this.runs);
    if (!panels.length) {
      // Records without a chartable figure (an sft warm-up: no sampled rewards): say so, not "yet".
      const n = this.runs.reduce((a, r) => a + r.records.length, 0);
      return n > 0
        ? html`<p class="muted" data-testid="no-charts">Nothing to chart in this cell's ${n === 1 ? "metrics record" : `${n} metrics records`}: its figures are in the report above.</p>`
        : html`<p class="muted" data-testid="no-charts">No metrics yet: charts appear with the first step.</p>`;
    }
    return html`<div class="grid">${panels.map((p) => html`<figure data-panel=${p.id}>
      <figcaption>${p.title}</figcaption><div class="canvas-box"><canvas id=${`c-${p.id}`} aria-label=${p.title} role="img"></canvas></div>
    </figure>`)}</div>`;
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

  private draw(p: Panel): void {
    const canvas = this.renderRoot.querySelector<HTMLCanvasElement>(`#c-${p.id}`);
    if (!canvas) return;
    const style = getComputedStyle(this);
    const text = style.getPropertyValue("--rl-muted").trim() || "#666";
    const grid = style.getPropertyValue("--rl-border").trim() || "#ddd";
    const datasets = p.series.map((s, i) => ({
      label: s.label,
      data: s.points,
      borderColor: PALETTE[i % PALETTE.length],
      backgroundColor: PALETTE[i % PALETTE.length],
      borderWidth: 1.5,
      pointRadius: s.points.length > 60 ? 0 : 2,
      tension: 0,
      run: s.run,
    }));
    const existing = this.charts.get(p.id);
    if (existing && existing.canvas === canvas) {
      existing.data.datasets = datasets;
      existing.update("none");
      return;
    }
    existing?.destroy();
    const config: ChartConfiguration<"line", { x: number; y: number }[]> = {
      type: "line",
      data: { datasets },
      options: {
        animation: false,
        maintainAspectRatio: false,
        parsing: false,
        interaction: { mode: "nearest", intersect: false },
        scales: {
          x: { type: "linear", title: { display: true, text: "step", color: text }, ticks: { color: text, precision: 0 }, grid: { color: grid } },
          y: { title: { display: true, text: p.yLabel, color: text }, ticks: { color: text }, grid: { color: grid } },
        },
        plugins: { legend: { labels: { color: text, boxWidth: 10, font: { size: 11 } } } },
        onClick: (_e, elements, chart) => {
          const el = elements[0];
          if (!el) return;
          const ds = chart.data.datasets[el.datasetIndex] as { run?: string; data: unknown[] };
          const pt = ds.data[el.index] as { x: number };
          this.dispatchEvent(new StepSelectEvent(ds.run ?? "", pt.x));
        },
      },
    };
    this.charts.set(p.id, new Chart(canvas, config));
  }
}

customElements.define("rl-metrics-charts", RlMetricsCharts);

declare global {
  interface HTMLElementTagNameMap {
    "rl-metrics-charts": RlMetricsCharts;
  }
}
