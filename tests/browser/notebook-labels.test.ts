// Issue 48, item 10: the header's cell-type menu beside "Add" showed only its first option,
// "Notes", and read as a notes menu. It is labelled "New cell".
import { assert, assertEquals } from "../assert.ts";
import { ARTIFACTS, launchChromium, serveStatic, watchErrors } from "./harness.ts";

Deno.test({
  name: "notebook header: issue 48 — the cell-type menu beside Add is labelled",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = serveStatic(Deno.env.get("RLVR_TEST_DIST") || undefined);
    const browser = await launchChromium({ webgpu: false });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const errors = watchErrors(page);
      await page.goto(server.url);
      const select = page.getByTestId("add-type");
      await select.waitFor();
      // Its label is visible text on the page, not only an aria-label.
      const label = await select.evaluate((el) =>
        (el as HTMLSelectElement).labels?.[0]?.firstChild?.textContent?.trim() ?? ""
      );
      assertEquals(label, "New cell");
      assertEquals(await page.getByLabel("New cell").count(), 1);
      await page.getByTestId("add-type").selectOption("evaluate");
      const before = await page.locator("li[data-cell-id]").count();
      await page.getByTestId("add-cell").click();
      assertEquals(await page.locator("li[data-cell-id]").count(), before + 1);
      await page.locator("rl-notebook header").screenshot({ path: `${ARTIFACTS}/notebook-header.png` });
      assert(errors.length === 0, errors.join("; "));
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
