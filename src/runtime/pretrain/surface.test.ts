import { assert, assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { vary } from "./surface.ts";

const CASES: [string, string][] = [
  ["How many customers are there?", "SELECT COUNT(*) FROM customers"],
  ["Count the customers whose segment is vip.", "SELECT COUNT(*) FROM customers WHERE segment = 'vip'"],
  ["List the name of customers whose country is DE.", "SELECT name FROM customers WHERE country = 'DE'"],
  ["Which orders have quantity above 5? Give their order id.", "SELECT order_id FROM orders WHERE quantity > 5"],
  [
    "What is the average list price of products whose category is Books?",
    "SELECT AVG(list_price) FROM products WHERE category = 'Books'",
  ],
  ["Name the top 3 products by list price, by name.", "SELECT name FROM products ORDER BY list_price DESC LIMIT 3"],
];

Deno.test("surface: issue 49 — many wordings per question, every quoted value kept as written", () => {
  const rng = new Rng(5);
  for (const [q, sql] of CASES) {
    const forms = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const v = vary(q, sql, rng);
      forms.add(v);
      for (const m of sql.matchAll(/'([^']*)'/g)) assert(v.includes(m[1]), `"${v}" lost the value ${m[1]}`);
    }
    assert(forms.size >= 8, `${forms.size} wordings of "${q}": ${[...forms].slice(0, 5).join(" | ")}`);
  }
});

Deno.test("surface: numbers become words only where the SQL holds the same number outside a string", () => {
  const rng = new Rng(1);
  const seen = new Set<string>();
  for (let i = 0; i < 300; i++) {
    seen.add(
      vary(
        "Name the top 3 products by list price, by name.",
        "SELECT name FROM products ORDER BY list_price DESC LIMIT 3",
        rng,
      ),
    );
  }
  assert([...seen].some((v) => /\bthree\b/.test(v)), "3 is written as a word sometimes");
  for (let i = 0; i < 300; i++) {
    const v = vary("How many stores have code 3?", "SELECT COUNT(*) FROM stores WHERE code = '3'", rng);
    assert(!/\bthree\b/.test(v), `a quoted 3 stays a digit: ${v}`);
  }
  assertEquals(
    vary("How many customers are there?", "SELECT COUNT(*) FROM customers", new Rng(2)),
    vary("How many customers are there?", "SELECT COUNT(*) FROM customers", new Rng(2)),
  );
});

Deno.test("surface: a decimal keeps its digits (no '88.eighteen' for 88.18)", () => {
  const rng = new Rng(3);
  const cases: [string, string][] = [
    [
      "Which order items have unit price below 88.18? Give their discount.",
      "SELECT discount FROM order_items WHERE unit_price < 88.18",
    ],
    ["Count the order items whose unit price is 18.53.", "SELECT COUNT(*) FROM order_items WHERE unit_price = 18.53"],
    ["How many products have a list price of 3.5?", "SELECT COUNT(*) FROM products WHERE list_price = 3.5"],
  ];
  for (const [q, sql] of cases) {
    const value = sql.match(/\d+\.\d+/)![0];
    for (let i = 0; i < 300; i++) {
      const v = vary(q, sql, rng);
      assert(v.includes(value), `"${v}" lost the number ${value}`);
    }
  }
  // A whole number beside a decimal is still said in words where the SQL holds it.
  const seen = new Set<string>();
  for (let i = 0; i < 300; i++) {
    seen.add(
      vary(
        "Name the top 3 products with list price above 2.5.",
        "SELECT name FROM products WHERE list_price > 2.5 ORDER BY list_price DESC LIMIT 3",
        rng,
      ),
    );
  }
  assert([...seen].some((v) => /\bthree\b/.test(v) && v.includes("2.5")), [...seen].slice(0, 4).join(" | "));
});
