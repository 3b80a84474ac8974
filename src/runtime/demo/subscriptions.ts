// A subscription product: users, plans, subscriptions, product events and payments. Churn, MRR
// and activation are defined by the organisation (concept-defs.ts), not guessable from names.
import type { Rng } from "../../core/rng.ts";
import {
  addDays,
  daysBetween,
  type DemoDatabase,
  money,
  pick,
  q,
  type QuestionTemplate,
  randomDate,
  randomTime,
  type Rows,
  TODAY,
  weighted,
  zipf,
} from "./gen.ts";

const COUNTRIES = ["US", "DE", "GB", "IN", "BR", "FR", "CA", "AU"] as const;
const SOURCES = ["ads", "search", "friend", "partner"] as const;
const EVENTS = ["login", "export", "invite", "upgrade_view", "report_run"] as const;

/** Generates the subscriptions database. */
export function subscriptionsDatabase(rng: Rng): DemoDatabase {
  const plans: Rows = [[1, "Free", 0, "free"], [2, "Starter", 9, "paid"], [3, "Team", 29, "paid"], [
    4,
    "Business",
    99,
    "paid",
  ], [5, "Starter annual", 90, "paid"]];
  const users: Rows = [];
  const subs: Rows = [];
  const events: Rows = [];
  const payments: Rows = [];
  let subId = 1;
  let eventId = 1;
  let payId = 1;
  for (let id = 1; id <= 1800; id++) {
    const signup = randomDate(rng, "2024-01-01", "2026-06-15");
    users.push([
      id,
      signup,
      weighted(rng, COUNTRIES, [35, 10, 10, 15, 8, 7, 8, 7]),
      rng.next() < 0.25 ? null : pick(rng, SOURCES),
    ]);
    const engagement = rng.next(); // how long and how often this user keeps coming back
    const lastActive = addDays(signup, Math.floor(engagement ** 0.7 * daysBetween(signup, TODAY)));
    const nEvents = 1 + Math.floor(engagement * 30 * rng.next());
    for (let k = 0; k < nEvents; k++) {
      const day = k === 0 ? lastActive : randomDate(rng, signup, lastActive);
      events.push([eventId++, id, weighted(rng, EVENTS, [60, 12, 6, 8, 14]), randomTime(rng, day)]);
    }
    const plan = weighted(rng, [1, 2, 3, 4, 5], [40, 30, 15, 5, 10]);
    const ended = lastActive < addDays(TODAY, -60) && rng.next() < 0.7;
    const end = ended ? addDays(lastActive, rng.int(30)) : null;
    const status = end === null ? (rng.next() < 0.05 ? "past_due" : "active") : "cancelled";
    subs.push([subId, id, plan, signup, end, status]);
    const price = Number(plans[plan - 1][2]);
    if (price > 0) {
      const stepDays = plan === 5 ? 365 : 30;
      for (let d = signup; d <= (end ?? TODAY); d = addDays(d, stepDays)) {
        payments.push([payId++, subId, d, money(price), rng.next() < 0.03 ? 1 : 0]);
      }
    }
    subId++;
    if (plan === 2 && rng.next() < 0.15) {
      // An upgrade: a second subscription on a higher plan.
      const start = randomDate(rng, signup, TODAY);
      subs.push([subId++, id, 3 + zipf(rng, 2, 0.5), start, null, "active"]);
    }
  }
  return {
    id: "subscriptions",
    ddl: [
      `CREATE TABLE users (user_id INTEGER PRIMARY KEY, signup_date TEXT NOT NULL, country TEXT NOT NULL, referral_source TEXT)`,
      `CREATE TABLE plans (plan_id INTEGER PRIMARY KEY, name TEXT NOT NULL, monthly_price REAL NOT NULL, tier TEXT NOT NULL)`,
      `CREATE TABLE subscriptions (subscription_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(user_id), plan_id INTEGER NOT NULL REFERENCES plans(plan_id), start_date TEXT NOT NULL, end_date TEXT, status TEXT NOT NULL)`,
      `CREATE TABLE events (event_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(user_id), event_type TEXT NOT NULL, event_time TEXT NOT NULL)`,
      `CREATE TABLE payments (payment_id INTEGER PRIMARY KEY, subscription_id INTEGER NOT NULL REFERENCES subscriptions(subscription_id), paid_at TEXT NOT NULL, amount REAL NOT NULL, refunded INTEGER NOT NULL)`,
    ],
    tables: { users, plans, subscriptions: subs, events, payments },
  };
}

/** Generic question templates on the subscriptions database (the organisation's concepts are in concept-defs.ts). */
export const SUBSCRIPTION_TEMPLATES: QuestionTemplate[] = [
  {
    id: "subs.signups_year",
    difficulty: "simple",
    phrasings: ["How many users signed up in {year}?", "Number of sign-ups during {year}?"],
    params: [2024, 2025, 2026].map((year) => ({ year })),
    sql: (p) => `SELECT COUNT(*) FROM users WHERE strftime('%Y', signup_date) = '${p.year}'`,
  },
  {
    id: "subs.users_by_source",
    difficulty: "simple",
    phrasings: [
      "How many users came from each referral source?",
      "Count users per referral source, including unknown sources.",
    ],
    params: [{}],
    sql: () => `SELECT referral_source, COUNT(*) FROM users GROUP BY referral_source`,
  },
  {
    id: "subs.refunded_amount",
    difficulty: "moderate",
    phrasings: ["How much money was refunded in {year}?", "Total refunded payment amount during {year}?"],
    evidence: "a payment was refunded when refunded = 1",
    params: [2024, 2025, 2026].map((year) => ({ year })),
    sql: (p) => `SELECT SUM(amount) FROM payments WHERE refunded = 1 AND strftime('%Y', paid_at) = '${p.year}'`,
  },
  {
    id: "subs.plan_counts",
    difficulty: "simple",
    phrasings: [
      "How many active subscriptions does each plan have? Give plan names.",
      "Active subscriptions per plan name?",
    ],
    params: [{}],
    sql: () =>
      `SELECT p.name, COUNT(*) FROM subscriptions AS s JOIN plans AS p ON p.plan_id = s.plan_id WHERE s.status = 'active' GROUP BY p.name`,
  },
];
