// <rl-link-banner>: shown while a notebook opened from a shared link is open. It says that the link
// carries parameters only and runs nothing, and that the user's own notebook is kept apart and
// unchanged (issue 47 item 2): edits to the link's notebook are saved as a draft of that link, and
// two buttons make the choice explicit — keep the link's notebook as one's own, or go back to it.
import { css, html, LitElement, nothing } from "lit";
import { parseNotebook } from "../core/notebook.ts";
import type { NotebookController } from "./notebook-controller.ts";
import { BUILTIN_NOTEBOOKS } from "./rl-notebook-picker.ts";
import { StoreSubscription } from "./store-subscription.ts";
import { cellStyles } from "./styles.ts";

export class RlLinkBanner extends LitElement {
  static override properties = { controller: { attribute: false } };
  static override styles = [
    cellStyles,
    css`
      :host {
        display: block;
      }
      .banner {
        padding: 8px 12px;
        border-radius: 6px;
        margin-bottom: 10px;
        background: color-mix(in srgb, var(--rl-accent) 10%, transparent);
        border: 1px solid var(--rl-border);
        display: flex;
        flex-wrap: wrap;
        gap: 6px 10px;
        align-items: center;
        position: relative;
        z-index: 6;
      }
      .banner p {
        margin: 0;
        flex: 1 1 420px;
      }
      .actions {
        display: flex;
        flex-wrap: wrap;
        gap: 6px;
      }
    `,
  ];

  /** The page's notebook state. */
  controller: NotebookController | null = null;
  private readonly subscription = new StoreSubscription(this, () => this.controller);

  override render() {
    const c = this.controller;
    if (!c || c.origin !== "link") return nothing;
    const mine = c.mine;
    return html`
      <div class="banner" data-testid="from-link" role="region" aria-label="Shared link">
        <p>Opened from a shared link: it carries parameters only. Nothing runs until you run a cell yourself.
              ${c.restoredDraft
                ? html`<b data-testid="link-draft-restored">Your earlier edits to this link are restored.</b>`
                : nothing}
              <span data-testid="link-kept-apart">${mine
                ? html`Your own notebook, “${mine.title}”, is kept apart and unchanged; edits here are saved with this link until you keep it.`
                : html`Edits here are saved with this link until you keep it as your notebook.`}</span></p>
        <span class="actions">
              <button data-testid="keep-link" @click=${() =>
                c.keepLink()} title="Make this notebook yours: it is autosaved, and your previous notebook stays one click away (↩ Back)">Keep as my notebook</button>
              ${mine
                ? html`<button class="secondary" data-testid="back-to-mine" @click=${this.leave}>Back to my notebook “${
                  mine.title.length > 30 ? mine.title.slice(0, 29) + "…" : mine.title
                }”</button>`
                : nothing}
            </span>
      </div>
    `;
  }

  private leave(): void {
    const r = parseNotebook(BUILTIN_NOTEBOOKS[0].json);
    if (r.ok) this.controller?.leaveLink(r.doc);
  }
}

customElements.define("rl-link-banner", RlLinkBanner);

declare global {
  interface HTMLElementTagNameMap {
    "rl-link-banner": RlLinkBanner;
  }
}
