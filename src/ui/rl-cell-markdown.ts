// <rl-cell-markdown>: renders a markdown cell. The HTML that marked produces is sanitised with
// DOMPurify before it reaches the DOM, so a shared notebook cannot run script through markdown;
// it is also made inert: no styles (a `position: fixed` block could cover the page and its
// shared-link banner), no forms or inputs, and no image or other resource fetched on open — an
// image becomes a "remote image (click to load)" placeholder, so opening a link tells no server
// that it was opened. The cell's box contains its content (paint containment), whatever it holds.
import DOMPurify from "dompurify";
import { css, html, LitElement } from "lit";
import { unsafeHTML } from "lit/directives/unsafe-html.js";
import { marked } from "marked";
import { cellStyles } from "./styles.ts";

/** Tags a markdown cell never renders: styles, forms and their controls, embedded documents and media. */
const FORBID_TAGS = [
  "style",
  "link",
  "meta",
  "base",
  "form",
  "input",
  "button",
  "select",
  "option",
  "optgroup",
  "textarea",
  "fieldset",
  "iframe",
  "frame",
  "frameset",
  "object",
  "embed",
  "video",
  "audio",
  "source",
  "track",
  "picture",
  "dialog",
  "template",
  "svg",
  "math",
  "marquee",
];
/** Attributes a markdown cell never keeps: inline style, class/id (the page's own styles), and every other fetching or top-layer attribute. */
const FORBID_ATTR = [
  "style",
  "class",
  "id",
  "background",
  "poster",
  "srcset",
  "action",
  "formaction",
  "ping",
  "usemap",
  "popover",
  "lowsrc",
  "dynsrc",
];

/** The placeholder's text for an image that was not loaded. */
export const REMOTE_IMAGE_TEXT = "remote image (click to load)";

function sanitize(raw: string): string {
  return DOMPurify.sanitize(raw, { USE_PROFILES: { html: true }, FORBID_TAGS, FORBID_ATTR });
}

/**
 * Markdown to sanitised, inert HTML (no script, event handlers, javascript: URLs, styles or forms);
 * images load only when their src is in `load` (the user clicked its placeholder) or is a data: image.
 */
export function renderMarkdown(source: string, load: ReadonlySet<string> = new Set()): string {
  const clean = sanitize(marked.parse(source, { async: false, gfm: true }));
  if (!/<img/i.test(clean)) return clean;
  // An inert document (DOMParser's never loads images) to swap images for placeholders.
  const doc = new DOMParser().parseFromString(`<body>${clean}</body>`, "text/html");
  for (const img of [...doc.querySelectorAll("img")]) {
    const src = img.getAttribute("src") ?? "";
    if (/^data:image\//i.test(src) || load.has(src)) continue;
    const span = doc.createElement("span");
    span.setAttribute("data-remote-src", src);
    span.setAttribute("role", "button");
    span.setAttribute("tabindex", "0");
    span.setAttribute("title", src);
    const alt = img.getAttribute("alt");
    span.textContent = alt ? `${REMOTE_IMAGE_TEXT}: ${alt}` : REMOTE_IMAGE_TEXT;
    img.replaceWith(span);
  }
  return sanitize(doc.body.innerHTML);
}

export class RlCellMarkdown extends LitElement {
  static override properties = { source: { type: String }, loaded: { state: true } };
  static override styles = [
    cellStyles,
    css`
      .md {
        contain: layout paint;
        position: relative;
        overflow: auto;
      }
      .md :first-child {
        margin-top: 0;
      }
      .md :last-child {
        margin-bottom: 0;
      }
      .md pre {
        background: var(--rl-code-bg);
        padding: 8px 12px;
        border-radius: 6px;
        overflow-x: auto;
      }
      .md a {
        color: var(--rl-accent);
      }
      .md img {
        max-width: 100%;
      }
      .md [data-remote-src] {
        display: inline-block;
        padding: 2px 8px;
        border: 1px dashed var(--rl-border);
        border-radius: 4px;
        color: var(--rl-muted);
        font-size: 12px;
        cursor: pointer;
      }
    `,
  ];

  /** The cell's markdown text. */
  source = "";
  /** Image URLs the user chose to load. */
  private loaded: ReadonlySet<string> = new Set();

  override render() {
    return html`<div class="md" @click=${this.onClick} @keydown=${this.onKey}>${
      unsafeHTML(renderMarkdown(this.source, this.loaded))
    }</div>`;
  }

  private onClick(e: Event): void {
    const el = (e.target as Element | null)?.closest?.("[data-remote-src]");
    const src = el?.getAttribute("data-remote-src");
    if (src == null) return;
    e.preventDefault(); // a placeholder inside a link loads the image, it does not follow the link
    this.loaded = new Set([...this.loaded, src]);
  }

  private onKey(e: KeyboardEvent): void {
    if (e.key === "Enter" || e.key === " ") this.onClick(e);
  }
}

customElements.define("rl-cell-markdown", RlCellMarkdown);

declare global {
  interface HTMLElementTagNameMap {
    "rl-cell-markdown": RlCellMarkdown;
  }
}
