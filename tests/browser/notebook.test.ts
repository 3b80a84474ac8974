// The notebook as a user meets it: editing cells, share links that reproduce the document in a
// fresh page, a crafted link whose markdown tries to run script, import of a bad file, autosave
// across a reload.
import { Buffer } from "node:buffer";
import LZString from "lz-string";
import { assert, assertEquals } from "../assert.ts";
import { launchChromium, screenshot, serveStatic, watchErrors } from "./harness.ts";

const server = serveStatic();
const browser = await launchChromium();

async function freshPage() {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  const page = await ctx.newPage();
  return { ctx, page, errors: watchErrors(page) };
}

async function cellIds(page: import("playwright-core").Page): Promise<string[]> {
  return await page.locator("li.cell").evaluateAll((els) => els.map((e) => e.getAttribute("data-cell-id") ?? ""));
}

Deno.test({
  name: "notebook: add, move and remove cells; a share link opens the same document in a fresh page",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { ctx, page, errors } = await freshPage();
    await page.goto(server.url);
    await page.getByTestId("nb-title").waitFor();
    const before = await cellIds(page);
    assert(before.length >= 3, `built-in notebook has cells: ${before}`);
    await page.getByTestId("add-type").selectOption("grpo");
    await page.getByTestId("add-cell").click();
    const afterAdd = await cellIds(page);
    assertEquals(afterAdd.length, before.length + 1);
    const added = afterAdd[afterAdd.length - 1];
    // Edit a parameter, move the new cell up once, rename the notebook.
    const cell = page.locator(`li[data-cell-id="${added}"]`);
    await cell.locator('[data-field="G"]').fill("12");
    await cell.locator('[data-field="G"]').dispatchEvent("change");
    await cell.getByRole("button", { name: "Move up" }).click();
    await page.getByTestId("nb-title").fill("My shared run");
    await page.getByTestId("nb-title").dispatchEvent("change");
    const order = await cellIds(page);
    assertEquals(order.indexOf(added), order.length - 2);
    // A bad value is refused with a reason and the document keeps the old one.
    await page.locator(`li[data-cell-id="${added}"] [data-field="G"]`).fill("-3");
    await page.locator(`li[data-cell-id="${added}"] [data-field="G"]`).dispatchEvent("change");
    await page.locator(`li[data-cell-id="${added}"] .field-error`).waitFor();
    await page.getByTestId("share").click();
    const url = await page.getByTestId("share-url").inputValue();
    assert(url.includes("#nb="), `share url ${url}`);
    await screenshot(page, "notebook-share");
    const doc = JSON.parse(LZString.decompressFromEncodedURIComponent(url.split("#nb=")[1]) ?? "null");
    assertEquals(doc.title, "My shared run");
    const grpo = doc.cells.find((c: { id: string }) => c.id === added);
    assertEquals(grpo.params.G, 12, "the refused value did not replace the accepted one");
    // A fresh browser context (no autosave) opening the link gets the same document, and runs nothing.
    const other = await freshPage();
    await other.page.goto(url);
    await other.page.getByTestId("from-link").waitFor();
    assertEquals(await other.page.getByTestId("nb-title").inputValue(), "My shared run");
    assertEquals(await cellIds(other.page), order);
    await other.page.getByTestId("share").click();
    const url2 = await other.page.getByTestId("share-url").inputValue();
    assertEquals(JSON.parse(LZString.decompressFromEncodedURIComponent(url2.split("#nb=")[1]) ?? "null"), doc);
    // Remove a cell.
    await page.locator(`li[data-cell-id="${added}"]`).getByTestId("remove").click();
    assertEquals((await cellIds(page)).includes(added), false);
    assert(
      errors.length === 0 && other.errors.length === 0,
      `no page errors: ${[...errors, ...other.errors].join("; ")}`,
    );
    await other.ctx.close();
    await ctx.close();
  },
});

Deno.test({
  name: "notebook: a link whose markdown tries to run script runs nothing",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const attack = [
      "# Hello",
      "<script>window.__pwned = 'script'</script>",
      '<img src="x" onerror="window.__pwned = \'onerror\'">',
      "[click](javascript:window.__pwned='href')",
      '<a href="javascript:window.__pwned=\'a\'" id="evil">a</a>',
      '<iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>',
      '<svg><script>window.__pwned="svg"</script></svg>',
      "<details open ontoggle=\"window.__pwned='toggle'\">x</details>",
    ].join("\n\n");
    const doc = { version: 1, title: "Innocent", cells: [{ id: "m", type: "markdown", params: { source: attack } }] };
    const hash = "#nb=" + LZString.compressToEncodedURIComponent(JSON.stringify(doc));
    const { ctx, page } = await freshPage();
    let dialogs = 0;
    page.on("dialog", (d) => {
      dialogs++;
      void d.dismiss();
    });
    await page.goto(server.url + hash);
    await page.getByTestId("from-link").waitFor();
    await page.locator("rl-cell-markdown h1").waitFor();
    // Click every link the markdown produced; none may execute script.
    for (const a of await page.locator("rl-cell-markdown a").all()) {
      await a.click({ timeout: 2000 }).catch(() => undefined);
    }
    await page.waitForTimeout(500);
    const pwned = await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned ?? null);
    assertEquals(pwned, null, "no injected script ran");
    assertEquals(dialogs, 0);
    const html = await page.locator("rl-cell-markdown").evaluate((el) => el.shadowRoot?.innerHTML ?? "");
    assert(!/<script|onerror|ontoggle|javascript:|<iframe/i.test(html), `sanitised html: ${html}`);
    await screenshot(page, "notebook-xss-link");
    await ctx.close();
  },
});

Deno.test({
  name: "notebook: a bad import file changes nothing; edits survive a reload through autosave",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { ctx, page } = await freshPage();
    await page.goto(server.url);
    await page.getByTestId("nb-title").fill("Autosaved");
    await page.getByTestId("nb-title").dispatchEvent("change");
    const ids = await cellIds(page);
    await page.getByTestId("import-file").setInputFiles({
      name: "bad.json",
      mimeType: "application/json",
      buffer: Buffer.from('{"version": 1, "cells": [{"type": "shell", "params": {}}]}'),
    });
    const msg = await page.getByTestId("message").textContent();
    assert(/not a notebook.*unknown cell type.*Nothing was changed/s.test(msg ?? ""), `import error: ${msg}`);
    assertEquals(await cellIds(page), ids);
    await page.reload();
    await page.getByTestId("nb-title").waitFor();
    assertEquals(await page.getByTestId("nb-title").inputValue(), "Autosaved");
    await page.getByTestId("import-file").setInputFiles({
      name: "good.json",
      mimeType: "application/json",
      buffer: Buffer.from(
        '{"version": 1, "title": "Imported", "cells": [{"type": "markdown", "params": {"source": "imported"}}]}',
      ),
    });
    await page.waitForFunction(() =>
      document.querySelector("rl-notebook")?.shadowRoot?.querySelectorAll("li.cell").length === 1
    );
    assertEquals(await page.getByTestId("nb-title").inputValue(), "Imported");
    await ctx.close();
  },
});

Deno.test({
  name: "notebook: teardown",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await browser.close();
    await server.close();
  },
});
