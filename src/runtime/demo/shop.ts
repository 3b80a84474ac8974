// An online shop: customers, products, orders, order items and returns, with seasonal orders,
// a few heavy customers, optional fields left NULL, and refunds and cancellations to exclude.
import type { Rng } from "../../core/rng.ts";
import {
  addDays,
  type DemoDatabase,
  logNormal,
  money,
  personName,
  pick,
  q,
  type QuestionTemplate,
  randomDate,
  type Rows,
  TODAY,
  weighted,
  zipf,
} from "./gen.ts";

const COUNTRIES = ["US", "DE", "FR", "GB", "PL", "BR", "JP", "IN", "ES", "NL"] as const;
const COUNTRY_W = [30, 14, 10, 12, 6, 7, 5, 8, 4, 4] as const;
const CATEGORIES = ["Books", "Electronics", "Garden", "Kitchen", "Toys", "Sports", "Beauty", "Office"] as const;
const CHANNELS = ["web", "app", "marketplace"] as const;
const REASONS = ["damaged", "wrong size", "not as described", "changed mind", "late delivery"] as const;

/** Generates the shop database. */
export function shopDatabase(rng: Rng): DemoDatabase {
  const customers: Rows = [];
  for (let id = 1; id <= 1500; id++) {
    const name = personName(rng);
    const email = rng.next() < 0.93 ? `${name.toLowerCase().replace(/[^a-z]+/g, ".")}${id}@example.com` : null;
    const segment = rng.next() < 0.15 ? null : weighted(rng, ["consumer", "business", "vip"], [80, 17, 3]);
    customers.push([
      id,
      name,
      email,
      weighted(rng, COUNTRIES, COUNTRY_W),
      randomDate(rng, "2022-01-01", "2026-05-31"),
      segment,
    ]);
  }
  const products: Rows = [];
  for (let id = 1; id <= 120; id++) {
    const category = CATEGORIES[(id - 1) % CATEGORIES.length];
    const price = money(Math.max(2, logNormal(rng, category === "Electronics" ? 120 : 25, 0.7)));
    products.push([id, `${category} item ${id}`, category, price, rng.next() < 0.1 ? 0 : 1]);
  }
  const orders: Rows = [];
  const items: Rows = [];
  const returns: Rows = [];
  let itemId = 1;
  let returnId = 1;
  for (let id = 1; id <= 6000; id++) {
    const customer = customers[zipf(rng, customers.length, 0.6)];
    const signup = String(customer[4]);
    // Seasonality: more orders in November and December.
    let date = randomDate(rng, signup < "2023-01-01" ? "2023-01-01" : signup, TODAY);
    if (rng.next() < 0.15) {
      date = `${pick(rng, ["2023", "2024", "2025"])}-${pick(rng, ["11", "12"])}-${
        String(1 + rng.int(28)).padStart(2, "0")
      }`;
    }
    if (date < signup) date = signup;
    const status = weighted(rng, ["delivered", "shipped", "cancelled", "refunded"], [78, 8, 8, 6]);
    orders.push([id, customer[0], date, status, weighted(rng, CHANNELS, [55, 35, 10])]);
    const n = 1 + zipf(rng, 6, 0.2);
    for (let k = 0; k < n; k++) {
      const product = products[zipf(rng, products.length, 0.3)];
      const discount = rng.next() < 0.7 ? 0 : weighted(rng, [0.05, 0.1, 0.2], [5, 4, 1]);
      items.push([itemId, id, product[0], 1 + zipf(rng, 4, 0.5), product[3], discount]);
      if (status === "delivered" && rng.next() < 0.04) {
        returns.push([
          returnId++,
          itemId,
          addDays(date, 3 + rng.int(25)),
          rng.next() < 0.2 ? null : pick(rng, REASONS),
        ]);
      }
      itemId++;
    }
  }
  return {
    id: "shop",
    ddl: [
      `CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, country TEXT NOT NULL, signup_date TEXT NOT NULL, segment TEXT)`,
      `CREATE TABLE products (product_id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, list_price REAL NOT NULL, is_active INTEGER NOT NULL)`,
      `CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(customer_id), order_date TEXT NOT NULL, status TEXT NOT NULL, channel TEXT NOT NULL)`,
      `CREATE TABLE order_items (order_item_id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(order_id), product_id INTEGER NOT NULL REFERENCES products(product_id), quantity INTEGER NOT NULL, unit_price REAL NOT NULL, discount REAL NOT NULL)`,
      `CREATE TABLE returns (return_id INTEGER PRIMARY KEY, order_item_id INTEGER NOT NULL REFERENCES order_items(order_item_id), return_date TEXT NOT NULL, reason TEXT)`,
    ],
    tables: { customers, products, orders, order_items: items, returns },
  };
}

const cats = CATEGORIES.slice(0, 6).map((category) => ({ category }));
const countries = COUNTRIES.slice(0, 6).map((country) => ({ country }));

/** Generic question templates on the shop database (the organisation's concepts are in concept-defs.ts). */
export const SHOP_TEMPLATES: QuestionTemplate[] = [
  {
    id: "shop.count_customers_country",
    difficulty: "simple",
    phrasings: [
      "How many customers are from {country}?",
      "Count the customers whose country is {country}.",
      "Number of {country} customers?",
    ],
    params: countries,
    sql: (p) => `SELECT COUNT(*) FROM customers WHERE country = ${q(p.country)}`,
  },
  {
    id: "shop.products_in_category",
    difficulty: "simple",
    phrasings: [
      "List the names of active products in the {category} category.",
      "Which {category} products are currently active? Give their names.",
    ],
    evidence: "a product is active when is_active = 1",
    params: cats,
    sql: (p) => `SELECT name FROM products WHERE category = ${q(p.category)} AND is_active = 1`,
  },
  {
    id: "shop.orders_per_status",
    difficulty: "simple",
    phrasings: ["How many orders are there for each status?", "Give the number of orders per order status."],
    params: [{}],
    sql: () => `SELECT status, COUNT(*) FROM orders GROUP BY status`,
  },
  {
    id: "shop.customers_without_email",
    difficulty: "simple",
    phrasings: ["How many customers have no email address on file?", "Count customers whose email is missing."],
    params: [{}],
    sql: () => `SELECT COUNT(*) FROM customers WHERE email IS NULL`,
  },
  {
    id: "shop.vip_orders_month",
    difficulty: "moderate",
    phrasings: [
      "How many orders did VIP customers place in {month} {year}?",
      "Number of orders by vip-segment customers during {month} {year}?",
    ],
    params: [["November", "11"], ["December", "12"]].flatMap(([month, mm]) =>
      [2024, 2025].map((year) => ({ month, mm, year }))
    ),
    sql: (p) =>
      `SELECT COUNT(*) FROM orders AS o JOIN customers AS c ON c.customer_id = o.customer_id WHERE c.segment = 'vip' AND strftime('%Y-%m', o.order_date) = '${p.year}-${p.mm}'`,
  },
  {
    id: "shop.never_ordered",
    difficulty: "moderate",
    phrasings: ["How many customers have never placed an order?", "Count the customers without any order."],
    params: [{}],
    sql: () => `SELECT COUNT(*) FROM customers WHERE customer_id NOT IN (SELECT customer_id FROM orders)`,
  },
];
