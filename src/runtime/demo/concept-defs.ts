// The organisation's definitions on the demo databases. They are deliberately this organisation's
// own choices (60 days without a login, not 90; revenue from delivered orders at list price), and
// they differ from the definitions earlier demo data carried, which the shipped model was
// pretrained on (docs/demo.md). `clinic` is the held-out database: its concepts are only ever
// evaluated.
import { TODAY } from "./gen.ts";
import type { Concept, Definition, Entity, EntityConcept, MeasureConcept } from "./concepts.ts";

const year = (col: string) => `strftime('%Y', ${col})`;

/** Entities concepts classify, keyed "<db>.<table>". */
export const ENTITIES: Record<string, Entity> = {
  "shop.customers": {
    db: "shop",
    table: "customers",
    noun: ["customer", "customers"],
    display: { col: "name", noun: "names" },
    attributes: [
      {
        id: "country",
        noun: "country",
        filter: "country = {v}",
        phrase: "from {v}",
        group: "country",
        values: ["US", "DE", "GB", "FR", "BR", "IN", "JP"],
        heldOut: 2,
      },
      {
        id: "segment",
        noun: "segment",
        filter: "segment = {v}",
        phrase: "in the {v} segment",
        group: "segment",
        values: ["consumer", "business", "vip"],
        heldOut: 1,
      },
      {
        id: "signup",
        noun: "signup year",
        filter: `${year("signup_date")} = {v}`,
        phrase: "who signed up in {v}",
        group: year("signup_date"),
        values: ["2022", "2023", "2024", "2025"],
        heldOut: 1,
      },
    ],
  },
  "shop.orders": {
    db: "shop",
    table: "orders",
    noun: ["order", "orders"],
    display: { col: "order_id", noun: "order ids" },
    attributes: [
      {
        id: "channel",
        noun: "channel",
        filter: "channel = {v}",
        phrase: "placed through the {v} channel",
        group: "channel",
        values: ["web", "app", "marketplace"],
        heldOut: 1,
      },
      {
        id: "year",
        noun: "order year",
        filter: `${year("order_date")} = {v}`,
        phrase: "placed in {v}",
        group: year("order_date"),
        values: ["2023", "2024", "2025", "2026"],
        heldOut: 1,
      },
    ],
  },
  "subscriptions.users": {
    db: "subscriptions",
    table: "users",
    noun: ["user", "users"],
    display: { col: "user_id", noun: "user ids" },
    attributes: [
      {
        id: "country",
        noun: "country",
        filter: "country = {v}",
        phrase: "from {v}",
        group: "country",
        values: ["US", "DE", "GB", "IN", "BR", "FR", "CA"],
        heldOut: 2,
      },
      {
        id: "source",
        noun: "referral source",
        filter: "referral_source = {v}",
        phrase: "referred by {v}",
        group: "referral_source",
        values: ["ads", "search", "friend", "partner"],
        heldOut: 1,
      },
      {
        id: "signup",
        noun: "signup year",
        filter: `${year("signup_date")} = {v}`,
        phrase: "who signed up in {v}",
        group: year("signup_date"),
        values: ["2024", "2025", "2026"],
        heldOut: 1,
      },
    ],
  },
  "school.students": {
    db: "school",
    table: "students",
    noun: ["student", "students"],
    display: { col: "name", noun: "names" },
    attributes: [
      {
        id: "campus",
        noun: "campus",
        filter: "campus = {v}",
        phrase: "on the {v} campus",
        group: "campus",
        values: ["north", "south", "east", "west"],
        heldOut: 1,
      },
      {
        id: "year",
        noun: "enrolment year",
        filter: "enrolled_year = {v}",
        phrase: "who enrolled in {v}",
        group: "enrolled_year",
        values: [2022, 2023, 2024, 2025, 2026],
        heldOut: 1,
      },
    ],
  },
  "school.teachers": {
    db: "school",
    table: "teachers",
    noun: ["teacher", "teachers"],
    display: { col: "name", noun: "names" },
    attributes: [
      {
        id: "department",
        noun: "department",
        filter: "department_id IN (SELECT department_id FROM departments WHERE name = {v})",
        phrase: "in the {v} department",
        values: ["Mathematics", "Physics", "History", "Languages", "Computer Science", "Biology"],
        heldOut: 2,
      },
    ],
  },
  "clinic.patients": {
    db: "clinic",
    table: "patients",
    noun: ["patient", "patients"],
    display: { col: "name", noun: "names" },
    attributes: [
      {
        id: "sex",
        noun: "sex",
        filter: "sex = {v}",
        phrase: "of sex {v}",
        group: "sex",
        values: ["F", "M"],
        heldOut: 0,
      },
      {
        id: "insurance",
        noun: "insurance",
        filter: "insurance = {v}",
        phrase: "with {v} insurance",
        group: "insurance",
        values: ["public", "private"],
        heldOut: 0,
      },
    ],
  },
  "clinic.doctors": {
    db: "clinic",
    table: "doctors",
    noun: ["doctor", "doctors"],
    display: { col: "name", noun: "names" },
    attributes: [
      {
        id: "specialty",
        noun: "specialty",
        filter: "specialty = {v}",
        phrase: "in {v}",
        group: "specialty",
        values: ["cardiology", "dermatology", "pediatrics", "general", "orthopedics"],
        heldOut: 0,
      },
    ],
  },
};

const since = (days: number) => `date('${TODAY}', '-${days} days')`;

/** Concepts about entities (a row is one or is not). */
export const ENTITY_CONCEPTS: EntityConcept[] = [
  {
    kind: "entity",
    id: "shop.active",
    entity: "shop.customers",
    term: ["active customer", "active customers"],
    state: "active",
    predicate: `customer_id IN (SELECT customer_id FROM orders WHERE order_date > ${since(120)})`,
  },
  {
    kind: "entity",
    id: "shop.at_risk",
    entity: "shop.customers",
    term: ["at-risk customer", "at-risk customers"],
    state: "at risk",
    predicate: "customer_id IN (SELECT customer_id FROM orders WHERE status = 'refunded')",
  },
  {
    kind: "entity",
    id: "shop.loyal",
    entity: "shop.customers",
    term: ["loyal customer", "loyal customers"],
    state: "loyal",
    predicate: "customer_id IN (SELECT customer_id FROM orders GROUP BY customer_id HAVING COUNT(*) >= 4)",
  },
  {
    kind: "entity",
    id: "shop.big_order",
    entity: "shop.orders",
    term: ["big order", "big orders"],
    state: "big orders",
    predicate: "order_id IN (SELECT order_id FROM order_items GROUP BY order_id HAVING SUM(quantity) >= 6)",
  },
  {
    kind: "entity",
    id: "subs.churned",
    entity: "subscriptions.users",
    term: ["churned user", "churned users"],
    state: "churned",
    predicate: `user_id NOT IN (SELECT user_id FROM events WHERE event_type = 'login' AND event_time > ${since(60)})`,
  },
  {
    kind: "entity",
    id: "subs.active",
    entity: "subscriptions.users",
    term: ["active user", "active users"],
    state: "active",
    predicate: `user_id IN (SELECT user_id FROM events WHERE event_time > ${since(30)})`,
  },
  {
    kind: "entity",
    id: "subs.paying",
    entity: "subscriptions.users",
    term: ["paying user", "paying users"],
    state: "paying",
    predicate:
      "user_id IN (SELECT user_id FROM subscriptions WHERE status IN ('active', 'past_due') AND plan_id IN (SELECT plan_id FROM plans WHERE tier = 'paid'))",
  },
  {
    kind: "entity",
    id: "subs.activated",
    entity: "subscriptions.users",
    term: ["activated user", "activated users"],
    state: "activated",
    predicate:
      "user_id IN (SELECT user_id FROM events WHERE event_type = 'report_run') AND user_id IN (SELECT user_id FROM events WHERE event_type = 'invite')",
  },
  {
    kind: "entity",
    id: "subs.power",
    entity: "subscriptions.users",
    term: ["power user", "power users"],
    state: "power users",
    predicate: "user_id IN (SELECT user_id FROM events GROUP BY user_id HAVING COUNT(*) >= 15)",
  },
  {
    kind: "entity",
    id: "school.honours",
    entity: "school.students",
    term: ["honours student", "honours students"],
    state: "honours students",
    predicate:
      "student_id IN (SELECT student_id FROM enrollments WHERE grade IS NOT NULL GROUP BY student_id HAVING AVG(grade) >= 80)",
  },
  {
    kind: "entity",
    id: "school.at_risk",
    entity: "school.students",
    term: ["at-risk student", "at-risk students"],
    state: "at risk",
    predicate: "student_id IN (SELECT student_id FROM enrollments WHERE grade < 45)",
  },
  {
    kind: "entity",
    id: "school.full_load",
    entity: "school.students",
    term: ["full-load student", "full-load students"],
    state: "on a full load",
    predicate:
      "student_id IN (SELECT student_id FROM enrollments WHERE term = '2026-spring' GROUP BY student_id HAVING COUNT(*) >= 3)",
  },
  {
    kind: "entity",
    id: "school.senior",
    entity: "school.teachers",
    term: ["senior teacher", "senior teachers"],
    state: "senior",
    predicate: "hired_on < '2012-01-01'",
  },
  {
    kind: "entity",
    id: "clinic.frequent",
    entity: "clinic.patients",
    term: ["frequent patient", "frequent patients"],
    state: "frequent patients",
    predicate: "patient_id IN (SELECT patient_id FROM appointments GROUP BY patient_id HAVING COUNT(*) >= 6)",
  },
  {
    kind: "entity",
    id: "clinic.unreliable",
    entity: "clinic.patients",
    term: ["unreliable patient", "unreliable patients"],
    state: "unreliable",
    predicate: "patient_id IN (SELECT patient_id FROM appointments WHERE status = 'no_show')",
  },
  {
    kind: "entity",
    id: "clinic.senior",
    entity: "clinic.patients",
    term: ["senior patient", "senior patients"],
    state: "seniors",
    predicate: "birth_date < '1960-01-01'",
  },
  {
    kind: "entity",
    id: "clinic.busy",
    entity: "clinic.doctors",
    term: ["busy doctor", "busy doctors"],
    state: "busy",
    predicate:
      "doctor_id IN (SELECT doctor_id FROM appointments WHERE status = 'completed' GROUP BY doctor_id HAVING COUNT(*) >= 110)",
  },
];

const REVENUE_SUM = "SUM(oi.quantity * oi.unit_price)";
const REVENUE_FROM = "FROM order_items AS oi JOIN orders AS o ON o.order_id = oi.order_id";
const MRR_SUM = "SUM(p.monthly_price)";
const MRR_FROM = "FROM subscriptions AS s JOIN plans AS p ON p.plan_id = s.plan_id";
const MRR_WHERE = "s.status IN ('active', 'past_due') AND p.tier = 'paid'";

/** Concepts that are measures; their templates hold the SQL. */
export const MEASURE_CONCEPTS: MeasureConcept[] = [
  {
    kind: "measure",
    id: "shop.revenue",
    db: "shop",
    term: "revenue",
    templates: [
      {
        id: "revenue.year",
        heldOut: 1,
        params: ["2023", "2024", "2025", "2026"].map((y) => ({ y })),
        phrasings: [
          "How much revenue came in during {y}?",
          "What was the total revenue in {y}?",
          "Total revenue for {y}?",
        ],
        sql: (p) =>
          `SELECT ${REVENUE_SUM} ${REVENUE_FROM} WHERE o.status = 'delivered' AND strftime('%Y', o.order_date) = '${p.y}'`,
      },
      {
        id: "revenue.channel",
        heldOut: 1,
        params: ["web", "app", "marketplace"].map((ch) => ({ ch })),
        phrasings: [
          "How much revenue did the {ch} channel bring?",
          "What is the revenue of the {ch} channel?",
          "Revenue from orders placed through {ch}?",
        ],
        sql: (p) => `SELECT ${REVENUE_SUM} ${REVENUE_FROM} WHERE o.status = 'delivered' AND o.channel = '${p.ch}'`,
      },
      {
        id: "revenue.country",
        heldOut: 2,
        params: ["US", "DE", "GB", "FR", "IN", "JP"].map((c) => ({ c })),
        phrasings: [
          "How much revenue came from customers in {c}?",
          "What is the revenue from {c} customers?",
          "Revenue of customers from {c}?",
        ],
        sql: (p) =>
          `SELECT ${REVENUE_SUM} ${REVENUE_FROM} JOIN customers AS c ON c.customer_id = o.customer_id WHERE o.status = 'delivered' AND c.country = '${p.c}'`,
      },
      {
        id: "revenue.by_category",
        heldOut: 0,
        test: true,
        params: ["2024", "2025"].map((y) => ({ y })),
        phrasings: [
          "Show the revenue of each product category in {y}.",
          "What was each category's revenue in {y}?",
          "Revenue per product category for {y}?",
        ],
        sql: (p) =>
          `SELECT pr.category, ${REVENUE_SUM} ${REVENUE_FROM} JOIN products AS pr ON pr.product_id = oi.product_id WHERE o.status = 'delivered' AND strftime('%Y', o.order_date) = '${p.y}' GROUP BY pr.category`,
      },
      {
        id: "revenue.top_customers",
        heldOut: 0,
        test: true,
        params: [3, 5].map((n) => ({ n })),
        phrasings: [
          "Name the {n} customers who brought the most revenue.",
          "Who are the top {n} customers by revenue? Give their names.",
          "List the names of the {n} customers with the highest revenue.",
        ],
        sql: (p) =>
          `SELECT c.name ${REVENUE_FROM} JOIN customers AS c ON c.customer_id = o.customer_id WHERE o.status = 'delivered' GROUP BY c.customer_id ORDER BY ${REVENUE_SUM} DESC LIMIT ${p.n}`,
      },
    ],
  },
  {
    kind: "measure",
    id: "subs.mrr",
    db: "subscriptions",
    term: "MRR",
    templates: [
      {
        id: "mrr.total",
        heldOut: 0,
        params: [{}],
        phrasings: ["What does the MRR come to today?", "What is the current MRR?", "Compute the MRR."],
        sql: () => `SELECT ${MRR_SUM} ${MRR_FROM} WHERE ${MRR_WHERE}`,
      },
      {
        id: "mrr.country",
        heldOut: 2,
        params: ["US", "DE", "GB", "IN", "BR", "FR", "CA"].map((c) => ({ c })),
        phrasings: [
          "How much MRR do users in {c} bring?",
          "What is the MRR from users in {c}?",
          "MRR of users from {c}?",
        ],
        sql: (p) =>
          `SELECT ${MRR_SUM} ${MRR_FROM} JOIN users AS u ON u.user_id = s.user_id WHERE ${MRR_WHERE} AND u.country = '${p.c}'`,
      },
      {
        id: "mrr.source",
        heldOut: 1,
        params: ["ads", "search", "friend", "partner"].map((r) => ({ r })),
        phrasings: [
          "How much MRR comes from users referred by {r}?",
          "What is the MRR of users referred by {r}?",
          "MRR from the {r} referral source?",
        ],
        sql: (p) =>
          `SELECT ${MRR_SUM} ${MRR_FROM} JOIN users AS u ON u.user_id = s.user_id WHERE ${MRR_WHERE} AND u.referral_source = '${p.r}'`,
      },
      {
        id: "mrr.by_plan",
        heldOut: 0,
        test: true,
        params: [{}],
        phrasings: [
          "Break the MRR down by plan name.",
          "What is the MRR of each plan? Give plan names.",
          "MRR per plan name?",
        ],
        sql: () => `SELECT p.name, ${MRR_SUM} ${MRR_FROM} WHERE ${MRR_WHERE} GROUP BY p.name`,
      },
    ],
  },
];

/** Every concept. */
export const CONCEPTS: Concept[] = [...ENTITY_CONCEPTS, ...MEASURE_CONCEPTS];

/** Each concept's definition as a question's evidence carries it. */
export function definitions(): Definition[] {
  const out: Definition[] = ENTITY_CONCEPTS.map((c) => ({
    id: c.id,
    db: ENTITIES[c.entity].db,
    term: c.term[0],
    fragment: c.predicate,
    definition: `${c.term[0]} refers to ${ENTITIES[c.entity].noun[1]} with ${c.predicate}`,
  }));
  out.push(
    {
      id: "shop.revenue",
      db: "shop",
      term: "revenue",
      fragment: `${REVENUE_SUM} ${REVENUE_FROM} WHERE o.status = 'delivered'`,
      definition: `revenue refers to ${REVENUE_SUM} ${REVENUE_FROM} WHERE o.status = 'delivered'`,
    },
    {
      id: "subs.mrr",
      db: "subscriptions",
      term: "MRR",
      fragment: `${MRR_SUM} ${MRR_FROM} WHERE ${MRR_WHERE}`,
      definition: `MRR refers to ${MRR_SUM} ${MRR_FROM} WHERE ${MRR_WHERE}`,
    },
  );
  return out;
}
