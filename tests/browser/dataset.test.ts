// The dataset cell in the page: the demo's questions per split, filtered, and a database's
// tables, keys and sample rows read through the SQL worker pool (sql.js in a worker).
import { assert, assertEquals } from "../assert.ts";
import { launchChromium, screenshot, serveStatic, watchErrors } from "./harness.ts";

Deno.test({
  name: "dataset cell: browse the demo questions and a database's schema and rows",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = serveStatic();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1200 } });
      const errors = watchErrors(page);
      await page.goto(server.url);
      const trainLines = (await Deno.readTextFile(new URL("../../public/demo/train.jsonl", import.meta.url))).trim().split("\n").length;
      await page.getByTestId("browse-data").click();
      await page.getByTestId("question-count").waitFor();
      assertEquals(await page.getByTestId("question-count").textContent(), `${trainLines} of ${trainLines}, first 50 shown`);
      await page.getByTestId("question-filter").fill("churn");
      const count = (await page.getByTestId("question-count").textContent()) ?? "";
      const n = Number(count.split(" ")[0]);
      assert(n > 0 && n < trainLines, `filter narrows the list: ${count}`);
      assertEquals(await page.getByTestId("question-row").count(), n);
      await page.getByTestId("db-select").selectOption("shop");
      await page.getByTestId("db-tables").waitFor({ timeout: 30_000 });
      const text = (await page.getByTestId("db-tables").textContent()) ?? "";
      for (const t of ["customers", "orders", "order_items", "products", "returns"]) assert(text.includes(t), `table ${t} shown`);
      assert(/1,500 rows/.test(text), `row count of customers shown: ${text.slice(0, 300)}`);
      assert(text.includes("→ customers.customer_id"), "foreign key shown");
      await screenshot(page, "dataset-cell");
      assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
