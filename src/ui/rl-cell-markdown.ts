// <rl-cell-markdown>: renders a markdown cell. The HTML that marked produces is sanitised with
// DOMPurify before it reaches the DOM, so a shared notebook cannot run script through markdown.
import DOMPurify from "dompurify";
import { css, html, LitElement } from "lit";
import { unsafeHTML } from "lit/directives/unsafe-html.js";
import { marked } from "marked";
import { cellStyles } from "./styles.ts";

/** Markdown to sanitised HTML (no script, no event handlers, no javascript: URLs). */
export function renderMarkdown(source: string): string {
  const raw = marked.parse(source, { async: false, gfm: true });
  return DOMPurify.sanitize(raw, { USE_PROFILES: { html: true }, FORBID_TAGS: ["style", "form", "iframe"] });
}

export class RlCellMarkdown extends LitElement {
  static override properties = { source: { type: String } };
  static override styles = [cellStyles, css`
    .md :first-child { margin-top: 0; }
    .md :last-child { margin-bottom: 0; }
    .md pre { background: var(--rl-code-bg); padding: 8px 12px; border-radius: 6px; overflow-x: auto; }
    .md a { color: var(--rl-accent); }
  `];

  /** The cell's markdown text. */
  source = "";

  override render() {
    return html`<div class="md">${unsafeHTML(renderMarkdown(this.source))}</div>`;
  }
}

customElements.define("rl-cell-markdown", RlCellMarkdown);

declare global {
  interface HTMLElementTagNameMap {
    "rl-cell-markdown": RlCellMarkdown;
  }
}
