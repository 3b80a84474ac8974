// <rl-cell-dataset>: browse a dataset cell's data — the questions of each split (filterable, with
// evidence and gold SQL) and each database's tables, keys and sample rows. Nothing is fetched
// until the user asks, so opening a shared link loads no URL it names. With source "upload" the
// user picks a questions file and SQLite files (or a Spider/BIRD folder); they are kept in memory
// for the session (dataset-upload.ts) and browsed the same way.
import { css, html, LitElement, nothing } from "lit";
import { DEMO_SPLITS } from "../core/demo.ts";
import type { DatasetParams } from "../core/notebook-params.ts";
import type { SqlValue, Task } from "../core/types.ts";
import type { SqlPool } from "../runtime/sql-pool.ts";
import {
  datasetPool,
  type DatasetQuestions,
  describeDatabase,
  loadQuestionFiles,
  type TableView,
  uploadPool,
  uploads,
} from "./dataset-client.ts";
import type { PickedFile } from "./dataset-upload.ts";
import { highlightSql } from "./sql-highlight.ts";
import { StoreSubscription } from "./store-subscription.ts";
import { cellStyles } from "./styles.ts";

const SHOWN = 50;
/** Databases named in the "not uploaded" line before it becomes a count (a Spider file names about 140). */
const MISSING_SHOWN = 8;
/** Files of a picked folder that are read (the rest is counted, never loaded). */
const USEFUL = /\.(sqlite3?|db|jsonl?)$/i;

type State =
  | { kind: "idle" }
  | { kind: "loading" }
  | { kind: "ready"; data: DatasetQuestions }
  | { kind: "error"; message: string };

/** Question files and database root of a dataset cell, "upload" for uploaded files, or why the page cannot browse it. */
export function datasetLocation(
  p: DatasetParams,
  base: string,
): { files: Record<string, string>; dbRoot: string } | { upload: true } | { unsupported: string } {
  switch (p.source) {
    case "demo":
      return {
        files: Object.fromEntries(DEMO_SPLITS.map((s) => [s, `${base}demo/${s}.jsonl`])),
        dbRoot: `${base}demo`,
      };
    case "url":
      if (!p.questionsUrl || !p.dbRoot) return { unsupported: "set questionsUrl and dbRoot to browse this dataset" };
      return { files: { [p.split]: p.questionsUrl }, dbRoot: p.dbRoot };
    case "upload":
      return { upload: true };
  }
}

function kib(n: number): string {
  return n < 1 << 20 ? `${Math.max(1, Math.round(n / 1024))} KB` : `${(n / (1 << 20)).toFixed(1)} MB`;
}

function cell(v: SqlValue): string {
  if (v === null) return "NULL";
  if (v instanceof Uint8Array) return `<blob ${v.byteLength} bytes>`;
  const s = typeof v === "bigint" ? v.toString() : String(v);
  return s.length > 60 ? s.slice(0, 60) + "…" : s;
}

export class RlCellDataset extends LitElement {
  static override properties = {
    params: { attribute: false },
    state: { state: true },
    split: { state: true },
    filter: { state: true },
    db: { state: true },
    tables: { state: true },
    reading: { state: true },
  };
  static override styles = [
    cellStyles,
    css`
      .bar {
        display: flex;
        flex-wrap: wrap;
        gap: 10px;
        align-items: center;
        margin: 6px 0;
        font-size: 14px;
      }
      input[type="search"],
      select {
        font: inherit;
        font-size: 13px;
        padding: 3px 6px;
        background: var(--rl-bg);
        color: var(--rl-text);
        border: 1px solid var(--rl-border);
        border-radius: 4px;
      }
      .questions {
        max-height: 360px;
        overflow: auto;
        border: 1px solid var(--rl-border);
        border-radius: 6px;
      }
      .questions table {
        width: 100%;
        font-size: 13px;
      }
      .questions td {
        vertical-align: top;
      }
      pre {
        margin: 2px 0 0;
        white-space: pre-wrap;
        font-family: var(--rl-mono);
        font-size: 11px;
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
      .ev {
        color: var(--rl-muted);
        font-size: 12px;
      }
      .tables {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(420px, 1fr));
        gap: 10px;
      }
      .table {
        border: 1px solid var(--rl-border);
        border-radius: 6px;
        padding: 6px 8px;
        font-size: 12px;
        overflow-x: auto;
      }
      .table h5 {
        margin: 0 0 4px;
        font-size: 13px;
      }
      .badge {
        font-size: 10px;
        padding: 0 4px;
        border-radius: 6px;
        background: var(--rl-code-bg);
        color: var(--rl-accent);
      }
      .sample td {
        font-family: var(--rl-mono);
        font-size: 11px;
        white-space: nowrap;
      }
      .upload {
        display: grid;
        gap: 6px;
        border: 1px dashed var(--rl-border);
        border-radius: 6px;
        padding: 8px 10px;
        font-size: 13px;
      }
      .upload .pickers {
        display: flex;
        flex-wrap: wrap;
        gap: 8px 18px;
      }
      .upload label {
        display: grid;
        gap: 2px;
      }
      .upload ul {
        margin: 0;
        padding-left: 18px;
      }
      .warn {
        color: var(--rl-warn);
      }
    `,
  ];

  /** The dataset cell's parameters. */
  params: DatasetParams | null = null;
  private state: State = { kind: "idle" };
  private split = "";
  private filter = "";
  private db = "";
  private tables: TableView[] | string | null = null;
  private reading: string | null = null;
  private readonly onUploads = () => {
    if (uploads.active) this.split = uploads.active;
    // A replaced database must be read again, from the new pool; one no longer there (forgotten
    // files) is unselected rather than left showing what it said before.
    if (this.params?.source === "upload" && this.db) {
      if (uploads.databases.has(this.db)) void this.openDb(() => uploadPool(), this.db);
      else this.closeDb();
    }
  };
  private readonly subscription = new StoreSubscription(this, () => uploads, { change: this.onUploads });

  override willUpdate(changed: Map<string, unknown>): void {
    // Another source is another dataset: what was browsed (and its errors) belongs to the old one.
    const old = changed.get("params") as DatasetParams | null | undefined;
    if (
      changed.has("params") && old && this.params &&
      (old.source !== this.params.source || old.questionsUrl !== this.params.questionsUrl ||
        old.dbRoot !== this.params.dbRoot)
    ) {
      this.state = { kind: "idle" };
      this.closeDb();
      this.filter = "";
    }
  }

  private closeDb(): void {
    this.db = "";
    this.tables = null;
  }

  override render() {
    const p = this.params;
    if (!p) return nothing;
    const loc = datasetLocation(p, import.meta.env?.BASE_URL ?? "/");
    if ("unsupported" in loc) return html`<p class="muted">${loc.unsupported}.</p>`;
    if ("upload" in loc) return this.renderUpload();
    const s = this.state;
    switch (s.kind) {
      case "idle":
        return html`<button class="secondary" data-testid="browse-data" @click=${() =>
          this.load(loc.files)}>Browse the data</button>`;
      case "loading":
        return html`<p class="muted">Loading questions…</p>`;
      case "error":
        return html`<p class="error" role="alert">${s.message}</p>`;
      case "ready":
        return this.renderData(s.data, () => datasetPool(loc.dbRoot));
    }
  }

  private renderUpload() {
    const q = uploads.questions;
    const missing = uploads.missingDatabases();
    const r = uploads.report;
    const dbs = [...uploads.databases.values()];
    return html`<div class="upload" data-testid="upload">
        <div class="pickers">
          <label><span>Questions file (BIRD JSON, Spider JSON/JSONL, RLVR JSONL)</span>
            <input type="file" data-testid="upload-questions" accept=".json,.jsonl,application/json" @change=${(
      e: Event,
    ) => this.pick(e, false)} /></label>
          <label><span>SQLite databases (<code>&lt;db_id&gt;.sqlite</code>)</span>
            <input type="file" multiple data-testid="upload-dbs" accept=".sqlite,.sqlite3,.db" @change=${(e: Event) =>
      this.pick(e, false)} /></label>
          <label><span>…or a Spider/BIRD folder</span>
            <input type="file" webkitdirectory data-testid="upload-folder" @change=${(e: Event) =>
      this.pick(e, true)} /></label>
        </div>
        <span class="muted">Files stay in this tab's memory for the session: never uploaded anywhere, never in a share link; a reload forgets them.</span>
        ${this.reading ? html`<span class="muted">${this.reading}</span>` : nothing}
        ${r.errors.map((m) => html`<p class="error" role="alert" data-testid="upload-error">${m}</p>`)}
        ${
      r.notices.length ? html`<span class="muted" data-testid="upload-notice">${r.notices.join("; ")}</span>` : nothing
    }
        ${
      q || dbs.length
        ? html`<ul data-testid="upload-summary">
          <li>Questions: ${
          q
            ? html`<b>${q.name}</b>, ${q.tasks.length.toLocaleString()} question${
              q.tasks.length === 1 ? "" : "s"
            } (${q.format})${
              q.problems.length
                ? html`, <span class="warn">${q.problems.length} unreadable record${
                  q.problems.length === 1 ? "" : "s"
                } left out</span>`
                : nothing
            }`
            : html`<span class="warn">none yet</span>`
        }</li>
          <li>Databases: ${
          dbs.length
            ? dbs.map((d, i) =>
              html`${i ? ", " : ""}<b>${d.id}</b> <span class="muted">(${kib(d.bytes.byteLength)})</span>`
            )
            : html`<span class="warn">none yet</span>`
        }</li>
          ${
          missing.length
            ? html`<li class="warn" data-testid="upload-missing">${
              missing.length <= MISSING_SHOWN
                ? html`Not uploaded, named by the questions: ${
                  missing.join(", ")
                } — their questions cannot be scored until you add their .sqlite files.`
                : html`${missing.length.toLocaleString()} databases named by the questions are not uploaded (${
                  missing.slice(0, MISSING_SHOWN).join(", ")
                }, …):
              their questions cannot be scored until you add their .sqlite files.
              <details><summary>all ${missing.length.toLocaleString()}</summary>${missing.join(", ")}</details>`
            }</li>`
            : nothing
        }
          <li><button class="secondary" data-testid="upload-clear" @click=${() =>
          uploads.clear()}>Forget the uploaded files</button></li>
        </ul>`
        : nothing
    }
      </div>
      ${q ? this.renderData(this.uploadQuestions(), () => uploadPool()) : nothing}`;
  }

  /** The uploaded question files as the browser shows splits: one "split" per file; the chosen one is what runs read. */
  private uploadQuestions(): DatasetQuestions {
    const splits: Record<string, Task[]> = {};
    for (const [name, f] of uploads.questionFiles) splits[name] = f.tasks;
    if (!uploads.questionFiles.has(this.split)) this.split = uploads.active ?? "";
    const q = uploads.questionFiles.get(this.split);
    const problems = (q?.problems ?? []).slice(0, 10).map((m) => `${q?.name} ${m}`);
    if (q && q.problems.length > 10) problems.push(`${q.name}: ${q.problems.length - 10} more unreadable records`);
    return { splits, problems };
  }

  private async pick(e: Event, folder: boolean): Promise<void> {
    const input = e.target as HTMLInputElement;
    const list = [...(input.files ?? [])];
    input.value = "";
    if (!list.length) return;
    this.reading = `Reading ${list.length} file${list.length === 1 ? "" : "s"}…`;
    try {
      const files: PickedFile[] = await Promise.all(list.map(async (f) => ({
        name: f.name,
        path: f.webkitRelativePath || f.name,
        bytes: !folder || USEFUL.test(f.name) ? new Uint8Array(await f.arrayBuffer()) : new Uint8Array(0),
      })));
      uploads.add(files, { folder });
    } finally {
      this.reading = null;
    }
  }

  private async load(files: Record<string, string>): Promise<void> {
    this.state = { kind: "loading" };
    const data = await loadQuestionFiles(files);
    if (!Object.keys(data.splits).length) {
      this.state = { kind: "error", message: `No question file could be read: ${data.problems.join("; ")}` };
      return;
    }
    // The split the cell is set to run on, when it is one of the files read; else the first.
    const want = this.params?.split;
    this.split = want && want in data.splits ? want : Object.keys(data.splits)[0];
    this.state = { kind: "ready", data };
  }

  private renderData(data: DatasetQuestions, pool: () => SqlPool) {
    const tasks = data.splits[this.split] ?? [];
    const f = this.filter.toLowerCase();
    const shown = f
      ? tasks.filter((t) => `${t.question} ${t.evidence ?? ""} ${t.db_id} ${t.gold_sql}`.toLowerCase().includes(f))
      : tasks;
    const upload = this.params?.source === "upload";
    // Uploads: the databases the shown questions file names and those uploaded (an earlier file's names are not this one's).
    const named = upload ? tasks : Object.values(data.splits).flat();
    const dbs = [...new Set([...named.map((t) => t.db_id), ...(upload ? uploads.databases.keys() : [])])].sort();
    return html`
      ${data.problems.map((m) => html`<p class="error" role="alert">${m}</p>`)}
      <div class="bar">
        <label>${upload ? "Questions file" : "Split"} <select data-testid="split-select" @change=${(e: Event) =>
          this.chooseSplit((e.target as HTMLSelectElement).value)}>
          ${Object.entries(data.splits).map(([k, v]) =>
            html`<option value=${k} ?selected=${k === this.split}>${k} (${v.length})</option>`
          )}
        </select></label>
        <input type="search" data-testid="question-filter" placeholder="Filter questions, evidence, SQL…" .value=${this
          .filter}
          @input=${(e: Event) => (this.filter = (e.target as HTMLInputElement).value)} />
        <span class="muted" data-testid="question-count">${shown.length} of ${tasks.length}${shown.length > SHOWN
          ? `, first ${SHOWN} shown`
          : ""}</span>
      </div>
      <div class="questions">
        <table>
        <tr><th>db</th><th>question</th><th>difficulty</th></tr>
        ${shown.slice(0, SHOWN).map((t: Task) =>
          html`
            <tr data-testid="question-row">
              <td>${t.db_id}</td>
              <td>${t.question}${t.evidence
                ? html`<div class="ev">evidence: ${t.evidence}</div>`
                : nothing}<pre>${highlightSql(t.gold_sql)}</pre></td>
              <td>${t.difficulty ?? ""}</td>
            </tr>
          `
        )}
        </table>
      </div>
      <div class="bar">
        <label>Database <select data-testid="db-select" @change=${(e: Event) =>
          this.openDb(pool, (e.target as HTMLSelectElement).value)}>
          <option value="">choose…</option>${dbs.map((d) =>
            html`<option value=${d} ?selected=${d === this.db} ?disabled=${upload && !uploads.databases.has(d)}>${d}${
              upload && !uploads.databases.has(d) ? " (not uploaded)" : ""
            }</option>`
          )}
        </select></label>
      </div>
      ${this.renderTables()}
    `;
  }

  private chooseSplit(name: string): void {
    this.split = name;
    if (this.params?.source === "upload" && this.db && !uploads.databases.has(this.db)) this.closeDb();
    // For uploads the shown file is the one runs read.
    if (this.params?.source === "upload") uploads.choose(name);
  }

  private async openDb(pool: () => SqlPool, db: string): Promise<void> {
    this.db = db;
    this.tables = null;
    if (!db) return;
    try {
      const tables = await describeDatabase(pool(), db);
      if (this.db === db) this.tables = tables;
    } catch (e) {
      if (this.db === db) this.tables = e instanceof Error ? e.message : String(e);
    }
  }

  private renderTables() {
    const t = this.tables;
    if (!this.db) return nothing;
    if (t === null) return html`<p class="muted">Reading ${this.db}…</p>`;
    if (typeof t === "string") return html`<p class="error" role="alert">${t}</p>`;
    return html`<div class="tables" data-testid="db-tables">${
      t.map((tb) =>
        html`
          <div class="table">
            <h5>${tb.name} <span class="muted">(${tb.rowCount.toLocaleString()} rows)</span></h5>
            <div>${tb.columns.map((c) =>
              html`<span><code>${c.name}</code> <span class="muted">${c.type}</span>${
                c.pk
                  ? html`
                    <span class="badge">PK</span>
                  `
                  : nothing
              }${
                c.fk
                  ? html`
                    <span class="badge">→ ${c.fk}</span>
                  `
                  : nothing
              }; </span>`
            )}</div>
            <table class="sample"><tr>${tb.sample.columns.map((c) => html`<th>${c}</th>`)}</tr>
                  ${tb.sample.rows.map((r) => html`<tr>${r.map((v) => html`<td>${cell(v)}</td>`)}</tr>`)}</table>
          </div>
        `
      )
    }</div>`;
  }
}

customElements.define("rl-cell-dataset", RlCellDataset);

declare global {
  interface HTMLElementTagNameMap {
    "rl-cell-dataset": RlCellDataset;
  }
}
