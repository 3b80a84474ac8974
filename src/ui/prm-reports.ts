// How <rl-cell-run> shows the PRM cells' reports (PRM data: labels per step position, the
// first-error histogram, curation; PRM train: held-out figures) and the selection rules of a
// self-consistency cell at N = 1, 2, 4, ... with their binomial standard errors.
import { html, nothing, type TemplateResult } from "lit";
import type { PrmDataReport, PrmTrainReport, SelfConsistencyReport } from "../runtime/records.ts";

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** p with its binomial standard error over n questions: "12.5% ± 3.1". */
export function pctSe(p: number, n: number): string {
  const se = n > 0 ? Math.sqrt((p * (1 - p)) / n) : NaN;
  return `${pct(p)} ± ${(100 * se).toFixed(1)}`;
}

const num = (x: number, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : "—");

/** Bars of a histogram, widths relative to the largest count. */
function bars(entries: [string, number][]): TemplateResult {
  const max = Math.max(1, ...entries.map(([, v]) => v));
  return html`<table class="acc" data-testid="first-error-histogram">${
    entries.map(([k, v]) =>
      html`
        <tr>
          <th>${k}</th>
          <td>${v}</td>
          <td><span style="display:inline-block;height:10px;width:${Math.round(
            (160 * v) / max,
          )}px;background:var(--rl-accent)"></span></td>
        </tr>
      `
    )
  }</table>`;
}

function firstErrorOrder(m: Record<string, number>): [string, number][] {
  const steps = Object.keys(m).filter((k) => /^\d+$/.test(k)).sort((a, b) => Number(a) - Number(b));
  const label = (
    k: string,
  ) => (/^\d+$/.test(k)
    ? `step ${Number(k) + 1}`
    : k === "none"
    ? "none (correct)"
    : k === "past"
    ? "after the last step"
    : "unresolved");
  return [...steps, ...["past", "unresolved", "none"].filter((k) => k in m)].map((k) => [label(k), m[k]]);
}

/** The PRM data cell's report. */
export function renderPrmData(r: PrmDataReport, file: (name: string) => TemplateResult): TemplateResult {
  const c = r.curation;
  const pos = r.curated.byPosition;
  return html`
    <h4>PRM data on ${r.split}</h4>
        <p data-testid="prmdata-report">${r.questions} questions searched${r.skipped.emptyGold || r.skipped.goldFailed
          ? ` (${r.skipped.emptyGold} with an empty gold result and ${r.skipped.goldFailed} with a failing gold query left out)`
          : ""};
          ${r.sampled} answers sampled, ${r.rollouts} rollouts; ${r.raw.chains} labelled chains (${r.raw
            .correctChains} correct)${r.resumedFrom ? `; resumed after ${r.resumedFrom} questions` : ""}.
          Curation: ${c.unparsed} without SQL, ${c.unlabelled} unlabelled, ${c.duplicates} duplicates and ${c
            .balanced} for balance left out, ${c.flipped} labels flipped, ${c.lowRate} cut for a low rate:
          <strong>${r.curated.chains} training chains</strong>, ${r.curated.labels.positive} positive and ${r.curated
            .labels.negative} negative steps.</p>
        <h4>Labels per step position (training chains)</h4>
        <table class="acc" data-testid="labels-by-position">
      <tr><th>step</th>${pos.positive.map((_, k) => html`<th>${k + 1}</th>`)}</tr>
      <tr><td>correct</td>${pos.positive.map((v) => html`<td>${v}</td>`)}</tr>
      <tr><td>first error</td>${pos.negative.map((v) => html`<td>${v}</td>`)}</tr>
    </table>
        <h4>First error (all labelled chains)</h4>
        ${bars(firstErrorOrder(r.raw.firstError))}
        <p>${r.files.map((f, i) => html`${i ? " " : ""}${file(f)}`)}</p>
  `;
}

/** The PRM train cell's report. */
export function renderPrmTrain(r: PrmTrainReport, file: (name: string) => TemplateResult): TemplateResult {
  const kind = r.labels === "outcome" ? "Outcome reward model" : "Process reward model";
  if (r.loadedFrom) {
    return html`
      <h4>${kind}</h4>
      <p data-testid="prmtrain-report">loaded from <code>${r.loadedFrom}</code></p>
    `;
  }
  const d = r.dev;
  return html`
    <h4>${kind} (data: ${r.data})</h4>
        <p
      data-testid="prmtrain-report">${r.steps} step${r.steps === 1 ? "" : "s"} on ${r.examples} chains${r.resumedFrom
        ? ` (resumed from step ${r.resumedFrom})`
        : ""}; ${r.devExamples} held out${r.loss
        ? html`; mean loss ${num(r.loss.first, 4)} in the first epoch, ${num(r.loss.last, 4)} in the last`
        : nothing}.</p>
        ${d
          ? html`
            <table class="acc" data-testid="prm-dev">
              <tr>
                <th>held-out chains</th>
                <th>steps</th>
                <th>step accuracy</th>
                <th>ROC AUC</th>
                <th>BCE</th>
                <th>first error found</th>
              </tr>
              <tr>
                <td>${d.chains}</td>
                <td>${d.steps}</td>
                <td>${pctSe(d.accuracy, d.steps)}</td>
                <td>${num(d.auc)}</td>
                <td>${num(d.bce)}</td>
                <td>${Number.isFinite(d.firstError) ? pct(d.firstError) : "—"}</td>
              </tr>
            </table>
          `
          : nothing}
        <p>${r.files.map((f, i) => html`${i ? " " : ""}${file(f)}`)}</p>
  `;
}

/** The self-consistency cell's selection rules by N (present with PRMs, or N > 1). */
export function renderSelectionAtN(r: SelfConsistencyReport): TemplateResult | typeof nothing {
  if (!r.atN?.length) return nothing;
  const prms = Object.keys(r.atN[0].prm);
  return html`
    <h4>Selection rules on the first N samples (± binomial standard error)</h4>
    <table class="acc"
      data-testid="selection-at-n"><tr><th>N</th><th>vote</th><th>mean log-prob</th>${prms.map((id) =>
        html`<th>PRM ${id}</th>`
      )}<th>pass@N</th></tr>
        ${r.atN.map((a) =>
          html`<tr><td>${a.N}</td><td>${pctSe(a.vote, a.questions)}</td><td>${pctSe(a.logprob, a.questions)}</td>
      ${prms.map((id) => html`<td>${pctSe(a.prm[id], a.questions)}</td>`)}<td>${pctSe(a.oracle, a.questions)}</td></tr>`
        )}</table>
  `;
}
