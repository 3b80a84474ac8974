// <rl-cell-params>: a form for a cell's parameters. Every edit goes through notebook.ts's
// validation; a value it refuses is shown with the reason and the document keeps its old value,
// so bad input never loses anything.
import { css, html, LitElement, nothing } from "lit";
import { type Cell, validateParams } from "../core/notebook.ts";
import {
  ADVANTAGES, COMPARISONS, DATASET_FORMATS, DATASET_SOURCES, DTYPES, EXPORTS, GRPO_AGGREGATIONS, KL_SCHEDULE_KINDS,
  LOGPROB_WEIGHTS, LR_SCHEDULE_KINDS, MODEL_SOURCES, VOTES, WARMUP_EXPORTS, WARMUP_METHODS,
} from "../core/notebook-params.ts";
import { PROMPT_TEMPLATES } from "../core/prompts.ts";
import { cellStyles } from "./styles.ts";

/** Choices for fields that take one of a fixed set of values, by "type.field". */
const CHOICES: Record<string, readonly string[]> = {
  "dataset.source": DATASET_SOURCES,
  "dataset.format": DATASET_FORMATS,
  "model.source": MODEL_SOURCES,
  "model.dtype": DTYPES,
  "prompt.template": Object.keys(PROMPT_TEMPLATES),
  "reward.comparison": COMPARISONS,
  "warmup.method": WARMUP_METHODS,
  "warmup.exportSamples": WARMUP_EXPORTS,
  "grpo.aggregation": GRPO_AGGREGATIONS,
  "grpo.advantage": ADVANTAGES,
  "grpo.klSchedule": KL_SCHEDULE_KINDS,
  "grpo.lrSchedule": LR_SCHEDULE_KINDS,
  "selfconsistency.vote": VOTES,
  "selfconsistency.logprobWeight": LOGPROB_WEIGHTS,
  "selfconsistency.comparison": COMPARISONS,
  "export.what": EXPORTS,
};

/** Optional fields shown (empty) even when the document leaves them out, by cell type. */
const OPTIONAL: Record<string, readonly string[]> = {
  model: ["adapter"],
};

/** A short help text under a field, by "type.field". */
const HELP: Record<string, string> = {
  "warmup.sampleWithEvidence": "sample with the definitions (evidence) in the prompt, train the prompt without them (rft): the warm-up teaches the organisation's definitions to prompts that lack them",
  "grpo.evalSplit": "the split of the held-out checks every evalEvery steps; empty: dev, else test",
  "model.adapter": "start from a LoRA adapter in PEFT format (a folder URL with adapter_config.json and adapter_model.safetensors, e.g. a run's adapter/); its r and lora_alpha must equal loraRank and loraAlpha. Empty: a fresh adapter (B = 0)",
};

/** Fired with the validated parameters when a field changes. */
export class ParamsChangeEvent extends Event {
  constructor(readonly params: Record<string, unknown>) {
    super("params-change", { bubbles: true, composed: true });
  }
}

export class RlCellParams extends LitElement {
  static override properties = { cell: { attribute: false }, errors: { state: true } };
  static override styles = [cellStyles, css`
    form { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 8px 16px; }
    label { display: grid; gap: 2px; font-size: 13px; color: var(--rl-muted); }
    label.wide { grid-column: 1 / -1; }
    input, select, textarea {
      font: inherit; font-size: 14px; color: var(--rl-text); background: var(--rl-bg);
      border: 1px solid var(--rl-border); border-radius: 4px; padding: 3px 6px;
    }
    textarea { font-family: var(--rl-mono); font-size: 12px; min-height: 110px; }
    input[type="checkbox"] { justify-self: start; }
    .field-error { color: var(--rl-bad); font-size: 12px; }
    .field-help { font-size: 12px; }
  `];

  /** The cell whose parameters are edited. */
  cell: Cell | null = null;
  private errors: Record<string, string> = {};

  override render() {
    const cell = this.cell;
    if (!cell) return nothing;
    const params = cell.params as Record<string, unknown>;
    const entries: [string, unknown][] = [...Object.entries(params), ...(OPTIONAL[cell.type] ?? []).filter((k) => !(k in params)).map((k): [string, unknown] => [k, undefined])];
    if (!entries.length) return nothing;
    return html`<form @submit=${(e: Event) => e.preventDefault()}>
      ${entries.map(([k, v]) => this.renderField(cell.type, k, v))}
    </form>`;
  }

  private renderField(type: string, key: string, value: unknown) {
    const choices = CHOICES[`${type}.${key}`];
    const err = this.errors[key];
    const id = `f-${key}`;
    let input;
    let wide = false;
    if (choices) {
      input = html`<select id=${id} data-field=${key} @change=${(e: Event) => this.edit(key, (e.target as HTMLSelectElement).value)}>
        ${choices.map((c) => html`<option value=${c} ?selected=${c === value}>${c}</option>`)}
      </select>`;
    } else if (typeof value === "boolean") {
      input = html`<input id=${id} data-field=${key} type="checkbox" .checked=${value} @change=${(e: Event) => this.edit(key, (e.target as HTMLInputElement).checked)} />`;
    } else if (typeof value === "number") {
      input = html`<input id=${id} data-field=${key} type="number" step="any" .value=${String(value)}
        @change=${(e: Event) => this.edit(key, Number((e.target as HTMLInputElement).value))} />`;
    } else if (typeof value === "string" || value === undefined) {
      input = html`<input id=${id} data-field=${key} type="text" .value=${value ?? ""} @change=${(e: Event) => this.edit(key, (e.target as HTMLInputElement).value)} />`;
    } else if (Array.isArray(value) && value.every((x) => typeof x === "string")) {
      wide = true;
      input = html`<input id=${id} data-field=${key} type="text" .value=${value.join(", ")}
        @change=${(e: Event) => this.edit(key, (e.target as HTMLInputElement).value.split(",").map((s) => s.trim()).filter(Boolean))} />`;
    } else {
      wide = true;
      input = html`<textarea id=${id} data-field=${key} .value=${JSON.stringify(value, null, 2)} @change=${(e: Event) => this.editJson(key, (e.target as HTMLTextAreaElement).value)}></textarea>`;
    }
    const help = HELP[`${type}.${key}`];
    if (help) wide = true;
    return html`<label class=${wide ? "wide" : ""} for=${id}>${key}${input}${help ? html`<span class="field-help">${help}</span>` : nothing}${err ? html`<span class="field-error" role="alert">${err}</span>` : nothing}</label>`;
  }

  private editJson(key: string, text: string): void {
    try {
      this.edit(key, JSON.parse(text));
    } catch (e) {
      this.errors = { ...this.errors, [key]: `not JSON: ${e instanceof Error ? e.message : String(e)}; the previous value is kept` };
    }
  }

  private edit(key: string, value: unknown): void {
    const cell = this.cell;
    if (!cell) return;
    const merged = { ...(cell.params as Record<string, unknown>), [key]: value };
    const r = validateParams(cell.type, merged);
    const { [key]: _old, ...rest } = this.errors;
    if (!r.ok) {
      this.errors = { ...rest, [key]: `${r.errors.map((e) => e.message).join("; ")} — the previous value is kept` };
      this.requestUpdate();
      return;
    }
    this.errors = rest;
    this.dispatchEvent(new ParamsChangeEvent(r.params as Record<string, unknown>));
  }
}

customElements.define("rl-cell-params", RlCellParams);

declare global {
  interface HTMLElementTagNameMap {
    "rl-cell-params": RlCellParams;
  }
}
