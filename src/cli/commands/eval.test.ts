import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { loadSqlJs } from "../../runtime/sql-wasm.ts";
import { command } from "./eval.ts";

/** A temp directory with <root>/shop/shop.sqlite, a BIRD question file and a BIRD prediction dict. */
async function fixture(): Promise<{ dir: string; root: string }> {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-eval-" });
  const root = `${dir}/db`;
  await Deno.mkdir(`${root}/shop`, { recursive: true });
  const SQL = await loadSqlJs();
  const db = new SQL.Database();
  db.exec(
    "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, price REAL); INSERT INTO items VALUES (1,'pen',1.5),(2,'ink',0.5),(3,'pad',3.0);",
  );
  await Deno.writeFile(`${root}/shop/shop.sqlite`, (db as unknown as { export(): Uint8Array }).export());
  db.close();
  const q = (i: number, gold: string, difficulty: string, db_id = "shop") => ({
    question_id: 100 + i,
    db_id,
    question: `q${i}`,
    evidence: "",
    SQL: gold,
    difficulty,
  });
  const questions: unknown[] = [
    q(0, "SELECT count(*) FROM items", "simple"),
    q(1, "SELECT name FROM items WHERE price > 1", "moderate"),
    q(2, "SELECT id FROM items", "simple"),
    q(3, "SELECT nope FROM items", "moderate"),
    q(4, "SELECT 1", "moderate", "ghost"),
    q(5, "SELECT 1", "simple"),
    q(6, "SELECT 2", "moderate"),
    q(7, "SELECT 6", "simple"),
    q(8, "SELECT 6", "simple"),
    q(9, "SELECT count(*), sum(price) FROM items", "simple"),
    { db_id: "shop" },
  ];
  const sep = "\t----- bird -----\t";
  const preds: Record<string, string> = {
    "0": `SELECT count(id) FROM items${sep}shop`,
    "1": `SELECT name FROM items WHERE price > 100${sep}shop`,
    "2": `DROP TABLE items${sep}shop`,
    "3": `SELECT 1${sep}shop`,
    "4": `SELECT 1${sep}ghost`,
    "5": `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT max(i) FROM c${sep}shop`,
    "7": `SELECT '6'${sep}shop`,
    "8": `SELECT 6.0${sep}shop`,
    "9": `SELECT count(*), sum(price) FROM items${sep}shop`,
  };
  await Deno.writeTextFile(`${dir}/questions.json`, JSON.stringify(questions, null, 1));
  await Deno.writeTextFile(`${dir}/pred.json`, JSON.stringify(preds));
  return { dir, root };
}

Deno.test({
  name: "eval command: BIRD files, every rule scored, bad items reported, the rest still scored",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { dir, root } = await fixture();
    try {
      const result = await command.run([
        "--questions",
        `${dir}/questions.json`,
        "--db-root",
        root,
        "--pred",
        `${dir}/pred.json`,
        "--timeout-ms",
        "400",
        "--workers",
        "1",
        "--isolation",
        "process",
        "--out",
        `${dir}/out.jsonl`,
      ]);
      // Scored: 0..9 less gold failure (3) and missing database (4) = 8; correct 0, 8, 9.
      assertEquals(
        { n: result.n, correct: result.correct, ex: result.ex, errors: result.errors, timeouts: result.timeouts },
        { n: 8, correct: 3, ex: 3 / 8, errors: 2, timeouts: 1 },
      );
      assertEquals(result.difficulty, { moderate: { n: 2, correct: 0, ex: 0 }, simple: { n: 6, correct: 3, ex: 0.5 } });
      assertEquals([result.gold_failed, result.malformed, result.missing_db, result.missing_databases], [1, 1, 1, [
        "ghost",
      ]]);
      const out = (await Deno.readTextFile(`${dir}/out.jsonl`)).trim().split("\n").map((l) => JSON.parse(l));
      assertEquals(out.map((o) => o.index), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      assertEquals(out.map((o) => o.correct), [
        true,
        false,
        false,
        false,
        false,
        false,
        false,
        false,
        true,
        true,
        false,
      ]);
      const errs: (string | null)[] = out.map((o) => o.error);
      assertEquals([errs[0], errs[1], errs[8], errs[9]], [null, null, null, null]);
      assert(/^forbidden/.test(errs[2] ?? ""), String(errs[2]));
      assert(/^gold failed: syntax: no such column: nope/.test(errs[3] ?? ""), String(errs[3]));
      assert(/^database: .*ghost/.test(errs[4] ?? ""), String(errs[4]));
      assert(/^timeout/.test(errs[5] ?? ""), String(errs[5]));
      assert(/^empty: no prediction/.test(errs[6] ?? ""), String(errs[6]));
      assert(/^malformed question \(item 10\)/.test(errs[10] ?? ""), String(errs[10]));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "eval command: Spider-style files (JSONL questions, one SQL per line), ordered vs set",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { dir, root } = await fixture();
    try {
      await Deno.writeTextFile(
        `${dir}/q.jsonl`,
        [
          '{"db_id":"shop","question":"a","query":"SELECT id FROM items ORDER BY id"}',
          '{"db_id":"shop","question":"b","query":"SELECT name FROM items"}',
        ].join("\n"),
      );
      await Deno.writeTextFile(
        `${dir}/p.sql`,
        "SELECT id FROM items ORDER BY id DESC\nSELECT name FROM items UNION ALL SELECT name FROM items\n",
      );
      const run = (mode: string) =>
        command.run([
          "--questions",
          `${dir}/q.jsonl`,
          "--db-root",
          root,
          "--pred",
          `${dir}/p.sql`,
          "--compare",
          mode,
          "--workers",
          "1",
          "--isolation",
          "process",
        ]);
      assertEquals((await run("set")).correct, 2);
      assertEquals((await run("bag")).correct, 1);
      assertEquals((await run("ordered")).correct, 0);
      await assertRejects(() => run("fuzzy"), /--compare must be one of/);
      await assertRejects(
        () => command.run(["--questions", `${dir}/missing.json`, "--db-root", root, "--pred", `${dir}/p.sql`]),
        /cannot read questions file .*missing\.json/,
      );
      await assertRejects(
        () => command.run(["--questions", `${dir}/q.jsonl`, "--db-root", `${dir}/nowhere`, "--pred", `${dir}/p.sql`]),
        /--db-root .*nowhere is not a directory/,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "eval command: an empty, binary or garbage questions file is an error naming it; an unwritable --out fails before any scoring (issue 47 item 9)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { dir, root } = await fixture();
    try {
      const files: [string, string | Uint8Array][] = [
        ["empty.jsonl", ""],
        ["blank.jsonl", "\n\n  \n"],
        ["binary.jsonl", new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 10, 0xff, 0xfe, 10])],
        ["garbage.json", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n"],
        ["objects.json", '[{"a": 1}, 2]'],
      ];
      for (const [name, body] of files) {
        const path = `${dir}/${name}`;
        if (typeof body === "string") await Deno.writeTextFile(path, body);
        else await Deno.writeFile(path, body);
        const e = await assertRejects(
          () => command.run(["--questions", path, "--db-root", root, "--pred", `${dir}/pred.json`]),
          /no questions/,
        );
        assert(e.message.includes(path), e.message);
        // Issue 47 item 13: a parse error quotes none of the wrong file's content.
        assert(!e.message.includes("root:x:0"), e.message);
      }
      // --out in a folder that does not exist: refused at once, before the questions are scored
      // (scoring would print question 3's gold failure to standard error).
      const printed: string[] = [];
      const error = console.error;
      console.error = (...a: unknown[]) => printed.push(a.join(" "));
      try {
        await assertRejects(
          () =>
            command.run([
              "--questions",
              `${dir}/questions.json`,
              "--db-root",
              root,
              "--pred",
              `${dir}/pred.json`,
              "--out",
              `${dir}/no/such/dir/out.jsonl`,
              "--workers",
              "1",
              "--isolation",
              "process",
            ]),
          /^cannot write --out .*no\/such\/dir\/out\.jsonl/,
        );
      } finally {
        console.error = error;
      }
      assertEquals(printed.filter((l) => /gold SQL failed|questions in/.test(l)), []);
      await assertRejects(
        () =>
          command.run([
            "--questions",
            `${dir}/questions.json`,
            "--db-root",
            root,
            "--pred",
            `${dir}/pred.json`,
            "--out",
            dir,
          ]),
        /--out .* is not a regular file/,
      );
      // Every database refused (here: a zero-byte file): an error naming it, not "ok" with n 0.
      await Deno.mkdir(`${dir}/empty-db/shop`, { recursive: true });
      await Deno.writeFile(`${dir}/empty-db/shop/shop.sqlite`, new Uint8Array());
      await assertRejects(
        () =>
          command.run([
            "--questions",
            `${dir}/questions.json`,
            "--db-root",
            `${dir}/empty-db`,
            "--pred",
            `${dir}/pred.json`,
            "--workers",
            "1",
          ]),
        /^no question of .*questions\.json could be scored \(2 database\(s\) missing or unreadable: .*shop\.sqlite is empty \(0 bytes\)/,
      );
      // The check leaves no file behind when none was there.
      await command.run([
        "--questions",
        `${dir}/questions.json`,
        "--db-root",
        root,
        "--pred",
        `${dir}/pred.json`,
        "--workers",
        "1",
        "--timeout-ms",
        "400",
        "--isolation",
        "process",
        "--out",
        `${dir}/fresh.jsonl`,
      ]);
      assert((await Deno.readTextFile(`${dir}/fresh.jsonl`)).split("\n").length > 5);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
