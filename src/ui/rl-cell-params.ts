// <rl-cell-params>: a form for a cell's parameters. Every edit goes through notebook.ts's
// validation; a value it refuses is quoted with the reason, and the field shows the value the
// document kept (live bindings: what is on screen is what will run), so bad input never loses
// anything and never looks accepted.
import { css, html, LitElement, nothing } from "lit";
import { live } from "lit/directives/live.js";
import { type Cell, validateParams } from "../core/notebook.ts";
import {
  ADVANTAGES,
  COMPARISONS,
  DATASET_FORMATS,
  DATASET_SOURCES,
  DTYPES,
  EXPORTS,
  GRPO_AGGREGATIONS,
  KL_SCHEDULE_KINDS,
  LOGPROB_WEIGHTS,
  LR_SCHEDULE_KINDS,
  MODEL_SOURCES,
  PRM_AGGREGATE_KINDS,
  PRM_LABELS,
  RFT_KEEP,
  SFT_TARGETS,
  STEP_ADVANTAGE_MODES,
  VOTES,
  WARMUP_EXPORTS,
  WARMUP_METHODS,
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
  "warmup.rftKeep": RFT_KEEP,
  "warmup.sftTargets": SFT_TARGETS,
  "grpo.aggregation": GRPO_AGGREGATIONS,
  "grpo.advantage": ADVANTAGES,
  "grpo.klSchedule": KL_SCHEDULE_KINDS,
  "grpo.lrSchedule": LR_SCHEDULE_KINDS,
  "selfconsistency.vote": VOTES,
  "selfconsistency.logprobWeight": LOGPROB_WEIGHTS,
  "selfconsistency.comparison": COMPARISONS,
  "selfconsistency.prmAggregate": PRM_AGGREGATE_KINDS,
  "grpo.stepAdvantage": STEP_ADVANTAGE_MODES,
  "prmdata.template": Object.keys(PROMPT_TEMPLATES),
  "prmtrain.labels": PRM_LABELS,
  "prmtrain.lrSchedule": LR_SCHEDULE_KINDS,
  "export.what": EXPORTS,
};

/** Optional fields shown (empty) even when the document leaves them out, by cell type. */
const OPTIONAL: Record<string, readonly string[]> = {
  model: ["adapter"],
  grpo: ["stepAdvantage", "prm"],
  selfconsistency: ["prm", "prmAggregate"],
  prmtrain: ["load"],
};

/** What an optional field shows while the document leaves it out (its default), by "type.field". */
const ABSENT: Record<string, unknown> = {
  "grpo.stepAdvantage": "chain",
  "selfconsistency.prm": [],
  "selfconsistency.prmAggregate": "min",
};

/** A short help text under a field, by "type.field". */
const HELP: Record<string, string> = {
  "warmup.rftKeep":
    "rft's training samples: better = correct or above the group's mean reward (e.g. the one answer that runs); correct = only answers whose rows match the gold's",
  "warmup.method":
    "rft: train on the better sampled answers (rftKeep); awpg: every sample weighted by its group advantage; dpo: best-vs-worst sampled pairs; sft: no sampling, train on the dataset's gold answers (a record's completion, e.g. rlvr cocte --dataset's chains, else the gold SQL in the prompt template's answer format) — set exportSamples to none; samplesPerQuestion, temperature and maxNewTokens are ignored",
  "warmup.rftPerQuestion":
    "rft: at most this many kept samples per question, each a different answer (0: all, duplicates included) — so easy questions answered the same way eight times do not drown the hard ones",
  "warmup.sftTargets":
    "sft, for questions without a completion: gold = the gold SQL in the template's answer format; cocte = the gold rewritten as a chain of CTEs checked by execution (rlvr cocte's converter), the cold start for the chain-of-ctes prompts (@2 trains what follows its answer start)",
  "warmup.sampleWithEvidence":
    "sample with the definitions (evidence) in the prompt, train the prompt without them (rft): the warm-up teaches the organisation's definitions to prompts that lack them",
  "grpo.evalSplit": "the split of the held-out checks every evalEvery steps; empty: dev, else test",
  "model.adapter":
    "start from a LoRA adapter in PEFT format (a folder URL with adapter_config.json and adapter_model.safetensors, e.g. a run's adapter/); its r and lora_alpha must equal loraRank and loraAlpha. Empty: a fresh adapter (B = 0)",
  "grpo.stepAdvantage":
    "chain: every token gets its chain's advantage; prm-weighted: Reward-SQL's rule (well-scored steps take more of a good chain's credit, badly scored ones more of a bad chain's blame); per-step-norm: DeepSeekMath's normalised step rewards (reported to favour short chains). Needs a PRM train cell before",
  "grpo.prm":
    "the PRM train cell whose scores the prm reward component and the step advantages use; empty: the last process PRM before this cell (an outcome model only when there is no process one)",
  "selfconsistency.prm":
    "PRM train cells (ids, comma-separated) whose best-of-N is reported beside the vote, with every rule at N = 1, 2, 4, …",
  "selfconsistency.prmAggregate": "a chain's PRM score from its step scores (an outcome model uses its one score)",
  "prmdata.budget":
    "rollouts (completions sampled from step prefixes) per question at most; chains sampled is chains per question, rollouts the completions per probed step",
  "prmdata.balance":
    "keep at most this many chains of the larger class (with an error / all correct) per chain of the smaller; 0 keeps all",
  "prmtrain.data": "the PRM data cell to train on; empty: the last one before this cell",
  "prmtrain.labels":
    "process: a label per step (a PRM); outcome: one label per chain, its answer's correctness (an outcome reward model, to compare with)",
  "prmtrain.load": "a PRM folder exported by a run (prm/<cell>/: a URL, or headless a path) to use instead of training",
};

/** A dataset's name and format while they are the defaults of its source, by source. */
const SOURCE_DEFAULTS: Record<string, { name: string; format: string }> = {
  demo: { name: "demo", format: "rlvr" },
  url: { name: "my-dataset", format: "spider" },
  upload: { name: "my-database", format: "spider" },
};

/**
 * A dataset cell's name and format when its source changes: the new source's defaults where the
 * old values were the old source's defaults (a switch to upload no longer says "demo", "rlvr");
 * values the user typed are kept.
 */
function sourceDefaults(params: Record<string, unknown>, source: unknown): Record<string, unknown> {
  const from = SOURCE_DEFAULTS[String(params.source)];
  const to = SOURCE_DEFAULTS[String(source)];
  if (!from || !to || params.source === source) return {};
  const out: Record<string, unknown> = {};
  if (params.name === from.name) out.name = to.name;
  if (params.format === from.format) out.format = to.format;
  return out;
}

/** Fired with the validated parameters when a field changes. */
export class ParamsChangeEvent extends Event {
  constructor(readonly params: Record<string, unknown>) {
    super("params-change", { bubbles: true, composed: true });
  }
}

export class RlCellParams extends LitElement {
  static override properties = { cell: { attribute: false }, errors: { state: true } };
  static override styles = [
    cellStyles,
    css`
      form {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(200px, 1fr));
        gap: 8px 16px;
      }
      label {
        display: grid;
        gap: 2px;
        font-size: 13px;
        color: var(--rl-muted);
      }
      label.wide {
        grid-column: 1 / -1;
      }
      input,
      select,
      textarea {
        font: inherit;
        font-size: 14px;
        color: var(--rl-text);
        background: var(--rl-bg);
        border: 1px solid var(--rl-border);
        border-radius: 4px;
        padding: 3px 6px;
      }
      textarea {
        font-family: var(--rl-mono);
        font-size: 12px;
        min-height: 110px;
      }
      input[type="checkbox"] {
        justify-self: start;
      }
      .field-error {
        color: var(--rl-bad);
        font-size: 12px;
      }
      .field-help {
        font-size: 12px;
      }
    `,
  ];

  /** The cell whose parameters are edited. */
  cell: Cell | null = null;
  private errors: Record<string, string> = {};

  override render() {
    const cell = this.cell;
    if (!cell) return nothing;
    const params = cell.params as Record<string, unknown>;
    const entries: [string, unknown][] = [
      ...Object.entries(params),
      ...(OPTIONAL[cell.type] ?? []).filter((k) => !(k in params)).map((
        k,
      ): [string, unknown] => [k, ABSENT[`${cell.type}.${k}`]]),
    ];
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
      input = html`<select id=${id} data-field=${key} .value=${live(String(value))} @change=${(e: Event) =>
        this.edit(key, (e.target as HTMLSelectElement).value)}>
        ${choices.map((c) => html`<option value=${c} ?selected=${c === value}>${c}</option>`)}
      </select>`;
    } else if (typeof value === "boolean") {
      input = html`<input id=${id} data-field=${key} type="checkbox" .checked=${live(value)} @change=${(e: Event) =>
        this.edit(key, (e.target as HTMLInputElement).checked)} />`;
    } else if (typeof value === "number") {
      input = html`
        <input id=${id} data-field=${key} type="number" step="any" .value=${live(String(value))}
          @change=${(e: Event) => this.edit(key, Number((e.target as HTMLInputElement).value))} />
      `;
    } else if (typeof value === "string" || value === undefined) {
      input = html`<input id=${id} data-field=${key} type="text" .value=${live(value ?? "")} @change=${(e: Event) =>
        this.edit(key, (e.target as HTMLInputElement).value)} />`;
    } else if (Array.isArray(value) && value.every((x) => typeof x === "string")) {
      wide = true;
      input = html`
        <input id=${id} data-field=${key} type="text" .value=${live(value.join(", "))}
          @change=${(e: Event) =>
            this.edit(key, (e.target as HTMLInputElement).value.split(",").map((s) => s.trim()).filter(Boolean))} />
      `;
    } else {
      wide = true;
      input = html`<textarea id=${id} data-field=${key} .value=${JSON.stringify(value, null, 2)} @change=${(e: Event) =>
        this.editJson(key, (e.target as HTMLTextAreaElement).value)}></textarea>`;
    }
    const help = HELP[`${type}.${key}`];
    if (help) wide = true;
    return html`<label class=${wide ? "wide" : ""} for=${id}>${key}${input}${
      help ? html`<span class="field-help">${help}</span>` : nothing
    }${err ? html`<span class="field-error" role="alert">${err}</span>` : nothing}</label>`;
  }

  private editJson(key: string, text: string): void {
    try {
      this.edit(key, JSON.parse(text));
    } catch (e) {
      this.errors = {
        ...this.errors,
        [key]: `not JSON: ${e instanceof Error ? e.message : String(e)}; the previous value is kept`,
      };
    }
  }

  private edit(key: string, value: unknown): void {
    const cell = this.cell;
    if (!cell) return;
    const params = cell.params as Record<string, unknown>;
    const merged = {
      ...params,
      [key]: value,
      ...(cell.type === "dataset" && key === "source" ? sourceDefaults(params, value) : {}),
    };
    const r = validateParams(cell.type, merged);
    const { [key]: _old, ...rest } = this.errors;
    if (!r.ok) {
      const shown = typeof value === "string" ? value : JSON.stringify(value);
      const kept = key in params
        ? ` — kept ${typeof params[key] === "string" ? `“${params[key]}”` : JSON.stringify(params[key])}`
        : " — the previous value is kept";
      this.errors = {
        ...rest,
        [key]: `“${shown.length > 60 ? shown.slice(0, 59) + "…" : shown}” refused: ${
          r.errors.map((e) => e.message).join("; ")
        }${kept}`,
      };
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
