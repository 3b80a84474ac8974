// The dataset cell in the page: the demo's questions per split, filtered, and a database's
// tables, keys and sample rows read through the SQL worker pool (sql.js in a worker); and the same
// view over files the user uploads.
import { assert, assertEquals } from "../assert.ts";
import { ARTIFACTS, launchChromium, screenshot, serveStatic, watchErrors } from "./harness.ts";
import { parseNotebook } from "../../src/core/notebook.ts";
import { encodeShareHash } from "../../src/core/share.ts";
import { loadSqlJsDeno } from "../../src/runtime/sql-wasm.ts";

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
      const trainLines =
        (await Deno.readTextFile(new URL("../../public/demo/train.jsonl", import.meta.url))).trim().split("\n").length;
      await page.getByTestId("browse-data").click();
      await page.getByTestId("question-count").waitFor();
      assertEquals(
        await page.getByTestId("question-count").textContent(),
        `${trainLines} of ${trainLines}, first 50 shown`,
      );
      await page.getByTestId("question-filter").fill("churn");
      const count = (await page.getByTestId("question-count").textContent()) ?? "";
      const n = Number(count.split(" ")[0]);
      assert(n > 0 && n < trainLines, `filter narrows the list: ${count}`);
      assertEquals(await page.getByTestId("question-row").count(), n);
      await page.getByTestId("db-select").selectOption("shop");
      await page.getByTestId("db-tables").waitFor({ timeout: 30_000 });
      const text = (await page.getByTestId("db-tables").textContent()) ?? "";
      for (const t of ["customers", "orders", "order_items", "products", "returns"]) {
        assert(text.includes(t), `table ${t} shown`);
      }
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

// Issue 48 item 9: the demo's dataset cell, run, then switched to source "upload", kept name "demo", format "rlvr" and
// status "done" although no upload had run. It now takes the upload's fields and says not run.
Deno.test({
  name: "dataset cell: a run demo dataset switched to upload says not run, with the upload's name and format",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = serveStatic();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1200 } });
      const errors = watchErrors(page);
      await page.goto(server.url);
      const cell = page.locator('li[data-cell-id="data"]');
      const status = () => cell.getByTestId("run-status").getAttribute("data-status");
      await cell.getByTestId("run-cell").click();
      await page.waitForFunction(
        () =>
          document.querySelector("rl-notebook")?.shadowRoot?.querySelector('li[data-cell-id="data"] rl-cell-run')
            ?.shadowRoot?.querySelector("[data-testid=run-status]")?.getAttribute("data-status") === "done",
        null,
        { timeout: 60_000 },
      );
      const field = (k: string) => cell.locator(`[data-field="${k}"]`);
      assertEquals([await field("name").inputValue(), await field("format").inputValue()], ["demo", "rlvr"]);

      await field("source").selectOption("upload");
      await cell.getByTestId("upload").waitFor();
      assertEquals(
        [await field("name").inputValue(), await field("format").inputValue()],
        ["my-database", "spider"],
        "the upload's fields, not the demo's",
      );
      assertEquals(await status(), "idle", "the demo's run says nothing of the upload");
      assert(/not run yet/.test((await cell.getByTestId("run-status").textContent()) ?? ""));
      assertEquals(await cell.getByTestId("cell-error").count(), 0);
      await cell.screenshot({ path: `${ARTIFACTS}/dataset-switched-to-upload.png` });
      assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});

// Source "upload": the Hub notebook's dataset cell, opened from a share link. Files are made at
// test time: a SQLite database built with sql.js, a questions file with a bad line, a text file
// named .sqlite and a JSON file that does not parse; then, when ../shared has Spider, a folder in
// Spider's layout.
Deno.test({
  name: "dataset cell: uploaded questions and databases (bad files refused with reasons) and a Spider folder",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-upload-" });
    const SQL = await loadSqlJsDeno();
    const db = new SQL.Database();
    db.run(
      "CREATE TABLE owners (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE pets (id INTEGER PRIMARY KEY, owner_id INTEGER REFERENCES owners(id), name TEXT, kind TEXT);",
    );
    db.run(
      "INSERT INTO owners VALUES (1, 'Ada'), (2, 'Bo'); INSERT INTO pets VALUES (1, 1, 'Rex', 'dog'), (2, 1, 'Tom', 'cat'), (3, 2, 'Kit', 'cat');",
    );
    await Deno.writeFile(`${dir}/pets.sqlite`, db.export());
    db.close();
    const q = (db_id: string, question: string, query: string) => JSON.stringify({ db_id, question, query });
    await Deno.writeTextFile(
      `${dir}/questions.jsonl`,
      [
        q("pets", "How many pets are cats?", "SELECT count(*) FROM pets WHERE kind = 'cat'"),
        q("pets", "Name every owner.", "SELECT name FROM owners"),
        '{"db_id": "pets", "question": "broken',
        q("zoo", "How many animals?", "SELECT count(*) FROM animals"),
      ].join("\n") + "\n",
    );
    await Deno.writeTextFile(`${dir}/notes.sqlite`, "these are notes, not a database\n".repeat(8));
    await Deno.writeTextFile(`${dir}/broken.json`, '[\n  {"db_id": "pets", "question": }\n]\n');
    const hub = parseNotebook(
      JSON.parse(await Deno.readTextFile(new URL("../../notebooks/hub-qwen-coder.json", import.meta.url))),
    );
    assert(hub.ok);

    const server = serveStatic();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1200 } });
      const errors = watchErrors(page);
      await page.goto(server.url + encodeShareHash(hub.doc));
      const cell = page.locator("li[data-cell-type=dataset]");
      await cell.getByTestId("upload").waitFor();

      await cell.getByTestId("upload-questions").setInputFiles(`${dir}/broken.json`);
      const err = cell.getByTestId("upload-error");
      await err.waitFor();
      const errText = (await err.textContent()) ?? "";
      assert(/broken\.json does not parse as a questions file: .*line 2/.test(errText), errText);

      await cell.getByTestId("upload-questions").setInputFiles(`${dir}/questions.jsonl`);
      await cell.getByTestId("question-count").waitFor();
      assertEquals(await cell.getByTestId("upload-error").count(), 0, "the new batch clears the old error");
      let summary = (await cell.getByTestId("upload-summary").textContent()) ?? "";
      assert(
        /questions\.jsonl, 3 questions \(spider\), 1 unreadable record left out/.test(summary.replace(/\s+/g, " ")),
        summary,
      );
      const problems = (await cell.locator("p.error").allTextContents()).join(" ");
      assert(/questions\.jsonl line 3: not valid JSON/.test(problems), `bad line reported by number: ${problems}`);
      assertEquals(await cell.getByTestId("question-count").textContent(), "3 of 3");

      await cell.getByTestId("upload-dbs").setInputFiles([`${dir}/pets.sqlite`, `${dir}/notes.sqlite`]);
      await cell.getByTestId("upload-error").waitFor();
      const dbErr = (await cell.getByTestId("upload-error").textContent()) ?? "";
      assert(/notes\.sqlite is not a SQLite database/.test(dbErr), dbErr);
      summary = (await cell.getByTestId("upload-summary").textContent()) ?? "";
      assert(/Databases: pets \(\d+ KB\)/.test(summary.replace(/\s+/g, " ")), summary);
      assert(
        /zoo/.test((await cell.getByTestId("upload-missing").textContent()) ?? ""),
        "the database the questions name but nobody uploaded is listed",
      );
      assertEquals(
        await cell.getByTestId("question-count").textContent(),
        "3 of 3",
        "the questions survived the bad database file",
      );

      await cell.getByTestId("question-filter").fill("owner");
      assertEquals(await cell.getByTestId("question-count").textContent(), "1 of 3");
      await cell.getByTestId("db-select").selectOption("pets");
      await cell.getByTestId("db-tables").waitFor({ timeout: 30_000 });
      const tables = (await cell.getByTestId("db-tables").textContent()) ?? "";
      for (const s of ["owners", "pets", "(3 rows)", "→ owners.id", "Rex", "PK"]) {
        assert(tables.includes(s), `${s} shown: ${tables.slice(0, 300)}`);
      }
      await screenshot(page, "dataset-upload");
      await cell.screenshot({ path: `${ARTIFACTS}/dataset-upload-cell.png` });

      const spider = new URL("../../../shared/datasets/spider-train/", import.meta.url);
      let hasSpider = true;
      try {
        await Deno.stat(new URL("database/student_assessment/student_assessment.sqlite", spider));
      } catch {
        hasSpider = false;
      }
      if (!hasSpider) {
        console.log("NOTICE: ../shared/datasets/spider-train is absent; the Spider folder upload is skipped");
      } else {
        const root = `${dir}/spider`;
        const wanted = ["student_assessment", "student_1"];
        const lines = (await Deno.readTextFile(new URL("questions.jsonl", spider))).split("\n").filter((l) =>
          wanted.some((w) => l.includes(`"db_id": "${w}"`) || l.includes(`"db_id":"${w}"`))
        );
        assert(lines.length > 0, "Spider questions of the picked databases");
        for (const w of wanted) {
          await Deno.mkdir(`${root}/database/${w}`, { recursive: true });
          await Deno.copyFile(new URL(`database/${w}/${w}.sqlite`, spider), `${root}/database/${w}/${w}.sqlite`);
        }
        await Deno.writeTextFile(`${root}/questions.jsonl`, lines.join("\n") + "\n");
        await Deno.copyFile(new URL("tables.json", spider), `${root}/tables.json`);
        await cell.getByTestId("upload-folder").setInputFiles(root);
        await page.waitForFunction(
          (n) =>
            document.querySelector("rl-notebook")?.shadowRoot?.querySelector("rl-cell-dataset")?.shadowRoot
              ?.querySelector("[data-testid=question-count]")?.textContent?.endsWith(` of ${n}`),
          lines.length,
          { timeout: 30_000 },
        );
        assertEquals(
          await cell.getByTestId("split-select").inputValue(),
          "spider/questions.jsonl",
          "the folder's questions file is the one shown and run",
        );
        await cell.getByTestId("db-select").selectOption("student_assessment");
        await page.waitForFunction(
          () =>
            /Student_Course_Registrations/.test(
              document.querySelector("rl-notebook")?.shadowRoot?.querySelector("rl-cell-dataset")?.shadowRoot
                ?.querySelector("[data-testid=db-tables]")?.textContent ?? "",
            ),
          null,
          { timeout: 30_000 },
        );
        const t = (await cell.getByTestId("db-tables").textContent()) ?? "";
        for (const s of ["People_Addresses", "Candidate_Assessments", "→ People.person_id"]) {
          assert(t.includes(s), `${s} shown: ${t.slice(0, 300)}`);
        }
        await cell.screenshot({ path: `${ARTIFACTS}/dataset-upload-folder-cell.png` });
      }
      assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
    } finally {
      await browser.close();
      await server.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
