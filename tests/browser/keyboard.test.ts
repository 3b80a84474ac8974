// Keyboard use of the notebook in Chromium: moving between cells, entering and leaving fields,
// Shift+Enter dispatching rl-run-cell and moving on, adding through the type menu, d d with undo,
// Alt+arrows, Ctrl+S export, the help overlay; keys typed into fields never act on cells. Then the
// Notebooks menu, and the layout at laptop sizes (screenshots in test-results/).
import type { Page } from "playwright-core";
import { assert, assertEquals } from "../assert.ts";
import { KEY_BINDINGS } from "../../src/ui/keyboard.ts";
import { ARTIFACTS, launchChromium, screenshot, serveStatic, watchErrors } from "./harness.ts";

async function cellIds(page: Page): Promise<string[]> {
  return await page.locator("li.cell").evaluateAll((els) => els.map((e) => e.getAttribute("data-cell-id") ?? ""));
}

/** The selected cell's id (the outlined one). */
async function selected(page: Page): Promise<string | null> {
  const ids = await page.locator("li.cell.kbd-selected").evaluateAll((els) =>
    els.map((e) => e.getAttribute("data-cell-id"))
  );
  assert(ids.length <= 1, `one selection at most: ${ids}`);
  return ids[0] ?? null;
}

/** The focused element through shadow roots: "TAG#cell-id-of-its-cell". */
async function focused(page: Page): Promise<string> {
  return await page.evaluate(() => {
    let el: Element | null = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    let at: Element | null = el;
    while (at && !at.matches("li.cell")) at = at.parentElement ?? ((at.getRootNode() as ShadowRoot).host ?? null);
    return `${el?.tagName ?? ""}#${at?.getAttribute("data-cell-id") ?? ""}`;
  });
}

async function autosaved(
  page: Page,
): Promise<{ cells: { id: string; type: string; params: Record<string, unknown> }[] }> {
  return JSON.parse(await page.evaluate(() => localStorage.getItem("rlvr-notebook-autosave") ?? "null"));
}

Deno.test({
  name: "keyboard: navigate, edit, run, add, delete with undo, move, export and help without the mouse",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = serveStatic();
    const browser = await launchChromium();
    try {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
      const page = await ctx.newPage();
      const errors = watchErrors(page);
      await page.goto(server.url);
      await page.getByTestId("nb-title").waitFor();
      const start = await cellIds(page);
      assertEquals(start.slice(0, 4), ["intro", "gpu", "data", "model"]);
      // Record run requests and keep them from running (this test is about keys, not runs).
      await page.evaluate(() => {
        const w = window as unknown as { runs: string[]; letRun?: boolean };
        w.runs = [];
        document.querySelector("rl-notebook")?.addEventListener("rl-run-cell", (e) => {
          if (!w.letRun) e.preventDefault();
          w.runs.push((e as CustomEvent<{ cellId: string }>).detail.cellId);
        });
      });

      // j/k and arrows from nowhere (the page body has focus).
      await page.keyboard.press("j");
      assertEquals(await selected(page), "intro");
      assertEquals(await focused(page), "LI#intro");
      await page.keyboard.press("j");
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("k");
      await page.keyboard.press("j");
      assertEquals(await selected(page), "data");
      await screenshot(page, "keyboard-selected");

      // Shift+Enter: rl-run-cell for the cell, then the next cell is selected.
      await page.keyboard.press("Shift+Enter");
      assertEquals(await page.evaluate(() => (window as unknown as { runs: string[] }).runs), ["data"]);
      assertEquals(await selected(page), "model");

      // Enter: into the cell's first field; keys typed there stay there; Esc comes back to the cell.
      await page.keyboard.press("Enter");
      assertEquals(await focused(page), "SELECT#model");
      await page.keyboard.press("j");
      await page.keyboard.press("d");
      await page.keyboard.press("d");
      assertEquals(await selected(page), "model");
      assertEquals((await cellIds(page)).length, start.length, "d d typed in a field deleted nothing");
      await page.keyboard.press("Escape");
      assertEquals(await focused(page), "LI#model");

      // A note: Enter opens its editor with the cursor in it; every letter typed is text.
      for (let i = 0; i < 3; i++) await page.keyboard.press("k");
      assertEquals(await selected(page), "intro");
      await page.keyboard.press("Enter");
      assertEquals(await focused(page), "TEXTAREA#intro");
      await page.keyboard.press("Control+End");
      await page.keyboard.type(" jk dd ab z?");
      await page.keyboard.press("Escape");
      assertEquals(await focused(page), "LI#intro");
      assertEquals((await cellIds(page)).length, start.length);
      const md = (await autosaved(page)).cells[0].params.source;
      assert(typeof md === "string" && md.endsWith(" jk dd ab z?"), `typed text saved: ${String(md).slice(-40)}`);

      // b: the type menu, chosen with the keyboard; the new cell goes below and is selected.
      await page.keyboard.press("b");
      await page.getByTestId("add-menu").waitFor();
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("Enter");
      let ids = await cellIds(page);
      assertEquals(ids.length, start.length + 1);
      const added = ids[1];
      assertEquals(
        await page.locator(`li[data-cell-id="${added}"]`).getAttribute("data-cell-type"),
        "dataset",
        "third entry of the menu",
      );
      assertEquals(await selected(page), added);
      // a, then Esc: the menu closes and nothing is added.
      await page.keyboard.press("a");
      await page.getByTestId("add-menu").waitFor();
      await page.keyboard.press("Escape");
      assertEquals(await page.getByTestId("add-menu").count(), 0);
      assertEquals((await cellIds(page)).length, start.length + 1);

      // d j d is not d d; d d deletes; z brings the cell back where it was.
      await page.keyboard.press("d");
      await page.keyboard.press("k");
      await page.keyboard.press("d");
      assertEquals((await cellIds(page)).length, start.length + 1);
      await page.keyboard.press("j");
      assertEquals(await selected(page), added);
      await page.keyboard.press("d");
      await page.keyboard.press("d");
      assertEquals(await cellIds(page), start);
      await page.getByTestId("undo-note").waitFor();
      await screenshot(page, "keyboard-undo-note");
      await page.keyboard.press("z");
      assertEquals(await cellIds(page), ids);
      assertEquals(await selected(page), added);

      // Alt+Down / Alt+Up move the selected cell.
      await page.keyboard.press("Alt+ArrowDown");
      ids = await cellIds(page);
      assertEquals(ids.indexOf(added), 2);
      await page.keyboard.press("Alt+ArrowUp");
      await page.keyboard.press("Alt+ArrowUp");
      assertEquals((await cellIds(page))[0], added);
      assertEquals(await selected(page), added);

      // Ctrl+S exports the notebook file.
      const download = page.waitForEvent("download");
      await page.keyboard.press("Control+s");
      const file = await download;
      assert(file.suggestedFilename().endsWith(".rlvr.json"), file.suggestedFilename());
      const exported = JSON.parse(await Deno.readTextFile((await file.path()) ?? ""));
      assertEquals(exported.cells.map((c: { id: string }) => c.id), await cellIds(page));

      // ? opens the help listing every shortcut; Esc closes it; the toolbar button opens it too.
      await page.keyboard.press("Shift+?");
      await page.getByTestId("keys-overlay").waitFor();
      assertEquals(await page.locator("[data-testid=keys-overlay] tr").count(), KEY_BINDINGS.length);
      await screenshot(page, "keyboard-help");
      await page.keyboard.press("Escape");
      assertEquals(await page.getByTestId("keys-overlay").count(), 0);
      await page.getByTestId("keys-help").click();
      await page.getByTestId("keys-overlay").waitFor();
      await page.getByTestId("keys-close").click();
      assertEquals(await page.getByTestId("keys-overlay").count(), 0);

      // Not cancelled, Shift+Enter runs the cell through the page's run controller (the dataset cell: it loads the demo's splits).
      await page.evaluate(() => ((window as unknown as { letRun: boolean }).letRun = true));
      for (let i = 0; i < 8 && (await selected(page)) !== "data"; i++) await page.keyboard.press("j");
      assertEquals(await selected(page), "data");
      await page.keyboard.press("Shift+Enter");
      assertEquals(await selected(page), "model");
      const status = page.locator('li[data-cell-id="data"] [data-testid=run-status]');
      await page.waitForFunction(
        () => {
          const s = document.querySelector("rl-notebook")?.shadowRoot?.querySelector(
            'li[data-cell-id="data"] rl-cell-run',
          )?.shadowRoot?.querySelector("[data-testid=run-status]")?.getAttribute("data-status");
          return s === "done" || s === "failed";
        },
        null,
        { timeout: 60_000 },
      );
      assertEquals(await status.getAttribute("data-status"), "done");
      assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
      await ctx.close();
    } finally {
      await browser.close();
      await server.close();
    }
  },
});

Deno.test({
  name: "notebooks menu: open the Hub notebook and go back; layout at 1366x768 and 1280x800",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = serveStatic();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
      const errors = watchErrors(page);
      await page.goto(server.url);
      await page.getByTestId("nb-title").waitFor();
      const demoTitle = await page.getByTestId("nb-title").inputValue();
      await page.screenshot({ path: `${ARTIFACTS}/layout-1366x768.png` });
      await page.getByTestId("notebooks").selectOption("hub-qwen-coder");
      assertEquals(await page.getByTestId("nb-title").inputValue(), "Qwen2.5-Coder-0.5B-Instruct on your own database");
      await page.locator("li[data-cell-type=dataset]").getByTestId("upload").waitFor();
      const model = page.locator("li[data-cell-id=model]");
      assertEquals(await model.locator('[data-field="repo"]').inputValue(), "Qwen/Qwen2.5-Coder-0.5B-Instruct");
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.screenshot({ path: `${ARTIFACTS}/layout-1280x800-hub.png` });
      await page.getByTestId("notebook-back").click();
      assertEquals(await page.getByTestId("nb-title").inputValue(), demoTitle);
      await page.screenshot({ path: `${ARTIFACTS}/layout-1280x800.png` });
      await page.keyboard.press("Shift+?");
      await page.getByTestId("keys-overlay").waitFor();
      await page.screenshot({ path: `${ARTIFACTS}/layout-1280x800-help.png` });
      assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
