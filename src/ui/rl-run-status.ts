// <rl-run-status>: where a run is, always in view — which cell of how many, the stage, its progress
// line with a bar and a time estimate; "Show" scrolls to the running cell and "follow" keeps
// scrolling to each cell as the run reaches it. State comes from the RunController.
import { css, html, LitElement, nothing } from "lit";
import type { CellType } from "../core/notebook-params.ts";
import { formatEta } from "./rl-cell-run.ts";
import type { RunController } from "./run-controller.ts";
import { cellStyles } from "./styles.ts";

/** Asks the notebook to bring a cell into view. */
export class ShowCellEvent extends Event {
  constructor(readonly cellId: string) {
    super("show-cell", { bubbles: true, composed: true });
  }
}

/** The follow switch changed. */
export class FollowEvent extends Event {
  constructor(readonly follow: boolean) {
    super("follow-change", { bubbles: true, composed: true });
  }
}

export class RlRunStatus extends LitElement {
  static override properties = { controller: { attribute: false }, titles: { attribute: false }, follow: { type: Boolean } };
  static override styles = [cellStyles, css`
    .status { display: grid; grid-template-columns: auto 1fr auto; gap: 4px 12px; align-items: center; padding: 6px 12px;
      background: var(--rl-surface); border: 1px solid var(--rl-accent); border-radius: 8px; box-shadow: 0 2px 8px rgb(0 0 0 / 0.12); font-size: 13px; }
    .where { font-weight: 600; white-space: nowrap; }
    .line { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; color: var(--rl-muted); }
    progress { width: 100%; height: 8px; grid-column: 1 / -1; }
    .actions { display: flex; gap: 8px; align-items: center; white-space: nowrap; }
    .actions button { padding: 1px 10px; font-size: 13px; }
    label { display: flex; gap: 4px; align-items: center; color: var(--rl-muted); }
  `];

  controller: RunController | null = null;
  /** Cell titles by type ("Evaluate", "GRPO (online RL)"). */
  titles: Partial<Record<CellType, string>> = {};
  /** Whether the notebook scrolls to each cell the run reaches. */
  follow = true;
  private readonly onChange = () => this.requestUpdate();

  override connectedCallback(): void {
    super.connectedCallback();
    this.controller?.addEventListener("change", this.onChange);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.controller?.removeEventListener("change", this.onChange);
  }

  override updated(changed: Map<string, unknown>): void {
    if (changed.has("controller")) {
      (changed.get("controller") as RunController | undefined)?.removeEventListener("change", this.onChange);
      this.controller?.addEventListener("change", this.onChange);
    }
  }

  override render() {
    const a = this.controller?.active;
    if (!this.controller || !a) return nothing;
    const at = a.current ? a.plan.findIndex((c) => c.id === a.current) : -1;
    const cell = at >= 0 ? a.plan[at] : null;
    const p = cell ? this.controller.state(cell.id).progress : null;
    const where = cell ? `${at + 1} of ${a.plan.length} · ${this.titles[cell.type as CellType] ?? cell.type} “${cell.id}”` : `starting (${a.plan.length} cells)`;
    const line = p ? `${p.message} · ${(100 * p.fraction).toFixed(0)}% · ${formatEta(p.etaSeconds)}` : (this.controller.log.at(-1)?.replace(/^[\d.]+ s\s+/, "") ?? "waiting for the GPU worker…");
    return html`<div class="status" role="status" aria-live="polite" data-testid="run-status-bar">
      <span class="where" data-testid="run-where">▶ ${where}</span>
      <span class="line" data-testid="run-line" title=${line}>${line}</span>
      <span class="actions">
        ${cell ? html`<button class="secondary" data-testid="show-running" @click=${() => this.dispatchEvent(new ShowCellEvent(cell.id))}>Show</button>` : nothing}
        <label title="Scroll to each cell as the run reaches it"><input type="checkbox" data-testid="follow-run" .checked=${this.follow}
          @change=${(e: Event) => this.dispatchEvent(new FollowEvent((e.target as HTMLInputElement).checked))} /> follow</label>
        <button data-testid="stop-run" @click=${() => this.controller?.stop()}>Stop</button>
      </span>
      <progress max="1" .value=${p?.fraction ?? 0} aria-label="progress of the running cell"></progress>
    </div>`;
  }
}

customElements.define("rl-run-status", RlRunStatus);

declare global {
  interface HTMLElementTagNameMap {
    "rl-run-status": RlRunStatus;
  }
}
