// The `test-written` split: questions written by hand, one by one, in the words an analyst types —
// not made by the frames of concepts.ts nor by any generator. They ask about the trained concepts
// (three training databases) and about the held-out clinic's concepts. Each gold query was written
// with its question and checked by executing it (build.test.ts: every one returns rows). The split
// is for measurement only: no setting of the corpus, the model or the notebook was chosen on it.
// Gold queries spell every entity concept as its predicate, verbatim (concept-defs.ts), so that the
// definition an answer should use is the same text in the gold and the evidence.
import { ENTITY_CONCEPTS } from "./concept-defs.ts";

/** One hand-written question: database, concepts it asks about, the question, its gold SQL. */
export interface WrittenQuestion {
  db: string;
  concepts: string[];
  question: string;
  sql: string;
}

const P: Record<string, string> = Object.fromEntries(ENTITY_CONCEPTS.map((c) => [c.id, c.predicate]));
const active = P["shop.active"], atRisk = P["shop.at_risk"], loyal = P["shop.loyal"], big = P["shop.big_order"];
const churned = P["subs.churned"],
  subsActive = P["subs.active"],
  paying = P["subs.paying"],
  activated = P["subs.activated"],
  power = P["subs.power"];
const honours = P["school.honours"],
  stAtRisk = P["school.at_risk"],
  fullLoad = P["school.full_load"],
  senior = P["school.senior"];
const frequent = P["clinic.frequent"],
  unreliable = P["clinic.unreliable"],
  seniorPatient = P["clinic.senior"],
  busy = P["clinic.busy"];
const REV =
  "SELECT SUM(oi.quantity * oi.unit_price) FROM order_items AS oi JOIN orders AS o ON o.order_id = oi.order_id";
const MRR = "SELECT SUM(p.monthly_price) FROM subscriptions AS s JOIN plans AS p ON p.plan_id = s.plan_id";
const MRR_W = "s.status IN ('active', 'past_due') AND p.tier = 'paid'";

const w = (db: string, concepts: string[], question: string, sql: string): WrittenQuestion => ({
  db,
  concepts,
  question,
  sql,
});

/** The questions on the training databases' concepts. */
export const WRITTEN_TRAINED: WrittenQuestion[] = [
  // shop: active customer
  w(
    "shop",
    ["shop.active"],
    "Which of our active customers are based in PL? Give their names.",
    `SELECT name FROM customers WHERE ${active} AND country = 'PL'`,
  ),
  w(
    "shop",
    ["shop.active"],
    "how many customers are active right now",
    `SELECT COUNT(*) FROM customers WHERE ${active}`,
  ),
  w(
    "shop",
    ["shop.active"],
    "Show me the emails of active customers in the vip segment.",
    `SELECT email FROM customers WHERE ${active} AND segment = 'vip'`,
  ),
  w(
    "shop",
    ["shop.active"],
    "Number of active customers per country?",
    `SELECT country, COUNT(*) FROM customers WHERE ${active} GROUP BY country`,
  ),
  w(
    "shop",
    ["shop.active"],
    "I need a count of our active business customers.",
    `SELECT COUNT(*) FROM customers WHERE ${active} AND segment = 'business'`,
  ),
  w(
    "shop",
    ["shop.active"],
    "Of the customers who joined in 2025, how many are still active?",
    `SELECT COUNT(*) FROM customers WHERE ${active} AND strftime('%Y', signup_date) = '2025'`,
  ),
  w(
    "shop",
    ["shop.active", "shop.loyal"],
    "Count the active customers that are also loyal.",
    `SELECT COUNT(*) FROM customers WHERE ${active} AND ${loyal}`,
  ),
  // shop: at-risk customer
  w(
    "shop",
    ["shop.at_risk"],
    "How many customers are at risk at the moment?",
    `SELECT COUNT(*) FROM customers WHERE ${atRisk}`,
  ),
  w(
    "shop",
    ["shop.at_risk"],
    "Give me the names of at-risk customers in DE.",
    `SELECT name FROM customers WHERE ${atRisk} AND country = 'DE'`,
  ),
  w(
    "shop",
    ["shop.at_risk"],
    "At-risk customers by segment: how many in each?",
    `SELECT segment, COUNT(*) FROM customers WHERE ${atRisk} GROUP BY segment`,
  ),
  w(
    "shop",
    ["shop.at_risk"],
    "count at risk customers who signed up in 2024",
    `SELECT COUNT(*) FROM customers WHERE ${atRisk} AND strftime('%Y', signup_date) = '2024'`,
  ),
  w(
    "shop",
    ["shop.at_risk"],
    "Which at-risk customers are in the consumer segment? Just the names please.",
    `SELECT name FROM customers WHERE ${atRisk} AND segment = 'consumer'`,
  ),
  w(
    "shop",
    ["shop.at_risk"],
    "What share of our customers are at risk?",
    `SELECT AVG(CASE WHEN ${atRisk} THEN 1.0 ELSE 0.0 END) FROM customers`,
  ),
  w(
    "shop",
    ["shop.at_risk", "shop.loyal"],
    "Names of loyal customers who are at risk as well?",
    `SELECT name FROM customers WHERE ${loyal} AND ${atRisk}`,
  ),
  // shop: loyal customer
  w(
    "shop",
    ["shop.loyal", "shop.revenue"],
    "How much revenue did loyal customers bring in?",
    `${REV} WHERE o.status = 'delivered' AND ${loyal}`,
  ),
  w(
    "shop",
    ["shop.loyal"],
    "How many loyal customers do we have in the US?",
    `SELECT COUNT(*) FROM customers WHERE ${loyal} AND country = 'US'`,
  ),
  w(
    "shop",
    ["shop.loyal"],
    "List the loyal vip customers by name.",
    `SELECT name FROM customers WHERE ${loyal} AND segment = 'vip'`,
  ),
  w(
    "shop",
    ["shop.loyal"],
    "Loyal customers per segment, please.",
    `SELECT segment, COUNT(*) FROM customers WHERE ${loyal} GROUP BY segment`,
  ),
  w(
    "shop",
    ["shop.loyal"],
    "Do we have loyal customers in JP? Give me their names.",
    `SELECT name FROM customers WHERE ${loyal} AND country = 'JP'`,
  ),
  w(
    "shop",
    ["shop.loyal"],
    "Count the loyal customers that signed up in 2023.",
    `SELECT COUNT(*) FROM customers WHERE ${loyal} AND strftime('%Y', signup_date) = '2023'`,
  ),
  // shop: big order
  w(
    "shop",
    ["shop.big_order"],
    "How many big orders were placed in 2025?",
    `SELECT COUNT(*) FROM orders WHERE ${big} AND strftime('%Y', order_date) = '2025'`,
  ),
  w(
    "shop",
    ["shop.big_order"],
    "Show the ids of big orders that came through the app.",
    `SELECT order_id FROM orders WHERE ${big} AND channel = 'app'`,
  ),
  w(
    "shop",
    ["shop.big_order"],
    "Big orders by channel - how many each?",
    `SELECT channel, COUNT(*) FROM orders WHERE ${big} GROUP BY channel`,
  ),
  w(
    "shop",
    ["shop.big_order"],
    "What number of big orders came in during 2026?",
    `SELECT COUNT(*) FROM orders WHERE ${big} AND strftime('%Y', order_date) = '2026'`,
  ),
  w(
    "shop",
    ["shop.big_order"],
    "How many of the big orders ended up refunded?",
    `SELECT COUNT(*) FROM orders WHERE ${big} AND status = 'refunded'`,
  ),
  w(
    "shop",
    ["shop.big_order"],
    "give me the number of big orders on the marketplace",
    `SELECT COUNT(*) FROM orders WHERE ${big} AND channel = 'marketplace'`,
  ),
  // shop: revenue
  w(
    "shop",
    ["shop.revenue"],
    "What was our revenue in 2025?",
    `${REV} WHERE o.status = 'delivered' AND strftime('%Y', o.order_date) = '2025'`,
  ),
  w(
    "shop",
    ["shop.revenue"],
    "Revenue from the web channel, how much was it?",
    `${REV} WHERE o.status = 'delivered' AND o.channel = 'web'`,
  ),
  w(
    "shop",
    ["shop.revenue"],
    "How much revenue did customers in DE generate?",
    `${REV} JOIN customers AS c ON c.customer_id = o.customer_id WHERE o.status = 'delivered' AND c.country = 'DE'`,
  ),
  w(
    "shop",
    ["shop.revenue"],
    "Total revenue from vip customers?",
    `${REV} JOIN customers AS c ON c.customer_id = o.customer_id WHERE o.status = 'delivered' AND c.segment = 'vip'`,
  ),
  w(
    "shop",
    ["shop.revenue"],
    "revenue for the Books category in 2024?",
    `${REV} JOIN products AS pr ON pr.product_id = oi.product_id WHERE o.status = 'delivered' AND pr.category = 'Books' AND strftime('%Y', o.order_date) = '2024'`,
  ),
  w(
    "shop",
    ["shop.revenue"],
    "What's the revenue per channel?",
    `SELECT o.channel, SUM(oi.quantity * oi.unit_price) FROM order_items AS oi JOIN orders AS o ON o.order_id = oi.order_id WHERE o.status = 'delivered' GROUP BY o.channel`,
  ),
  w(
    "shop",
    ["shop.revenue"],
    "Which 3 customers brought us the most revenue? Names only.",
    `SELECT c.name FROM order_items AS oi JOIN orders AS o ON o.order_id = oi.order_id JOIN customers AS c ON c.customer_id = o.customer_id WHERE o.status = 'delivered' GROUP BY c.customer_id ORDER BY SUM(oi.quantity * oi.unit_price) DESC LIMIT 3`,
  ),
  // subscriptions: churned user
  w("subscriptions", ["subs.churned"], "How many users have churned?", `SELECT COUNT(*) FROM users WHERE ${churned}`),
  w(
    "subscriptions",
    ["subs.churned"],
    "Which churned users are from CA? Give me their ids.",
    `SELECT user_id FROM users WHERE ${churned} AND country = 'CA'`,
  ),
  w(
    "subscriptions",
    ["subs.churned"],
    "Churned users per country?",
    `SELECT country, COUNT(*) FROM users WHERE ${churned} GROUP BY country`,
  ),
  w(
    "subscriptions",
    ["subs.churned"],
    "How many users referred by a friend ended up churned?",
    `SELECT COUNT(*) FROM users WHERE ${churned} AND referral_source = 'friend'`,
  ),
  w(
    "subscriptions",
    ["subs.churned"],
    "Of the users who signed up in 2025, how many have churned?",
    `SELECT COUNT(*) FROM users WHERE ${churned} AND strftime('%Y', signup_date) = '2025'`,
  ),
  w(
    "subscriptions",
    ["subs.churned"],
    "list ids of churned users that came from ads",
    `SELECT user_id FROM users WHERE ${churned} AND referral_source = 'ads'`,
  ),
  w(
    "subscriptions",
    ["subs.churned", "subs.power"],
    "Count power users who have churned anyway.",
    `SELECT COUNT(*) FROM users WHERE ${power} AND ${churned}`,
  ),
  // subscriptions: active user
  w(
    "subscriptions",
    ["subs.active"],
    "How many active users do we have?",
    `SELECT COUNT(*) FROM users WHERE ${subsActive}`,
  ),
  w(
    "subscriptions",
    ["subs.active"],
    "active users in the US - count?",
    `SELECT COUNT(*) FROM users WHERE ${subsActive} AND country = 'US'`,
  ),
  w(
    "subscriptions",
    ["subs.active"],
    "Show me active users by referral source.",
    `SELECT referral_source, COUNT(*) FROM users WHERE ${subsActive} GROUP BY referral_source`,
  ),
  w(
    "subscriptions",
    ["subs.active"],
    "Count the active users who joined in 2026.",
    `SELECT COUNT(*) FROM users WHERE ${subsActive} AND strftime('%Y', signup_date) = '2026'`,
  ),
  w(
    "subscriptions",
    ["subs.active"],
    "Give the ids of active users from AU.",
    `SELECT user_id FROM users WHERE ${subsActive} AND country = 'AU'`,
  ),
  w(
    "subscriptions",
    ["subs.active", "subs.paying"],
    "How many active users are paying?",
    `SELECT COUNT(*) FROM users WHERE ${subsActive} AND ${paying}`,
  ),
  // subscriptions: paying user
  w(
    "subscriptions",
    ["subs.paying"],
    "How many paying users are there in DE?",
    `SELECT COUNT(*) FROM users WHERE ${paying} AND country = 'DE'`,
  ),
  w(
    "subscriptions",
    ["subs.paying"],
    "Which paying users came through search? ids please",
    `SELECT user_id FROM users WHERE ${paying} AND referral_source = 'search'`,
  ),
  w(
    "subscriptions",
    ["subs.paying"],
    "Paying users per country.",
    `SELECT country, COUNT(*) FROM users WHERE ${paying} GROUP BY country`,
  ),
  w(
    "subscriptions",
    ["subs.paying"],
    "Count users who are paying and signed up in 2024.",
    `SELECT COUNT(*) FROM users WHERE ${paying} AND strftime('%Y', signup_date) = '2024'`,
  ),
  w(
    "subscriptions",
    ["subs.paying"],
    "What share of all users are paying?",
    `SELECT AVG(CASE WHEN ${paying} THEN 1.0 ELSE 0.0 END) FROM users`,
  ),
  // subscriptions: activated user
  w(
    "subscriptions",
    ["subs.activated"],
    "How many users are activated?",
    `SELECT COUNT(*) FROM users WHERE ${activated}`,
  ),
  w(
    "subscriptions",
    ["subs.activated"],
    "How many activated users are from BR?",
    `SELECT COUNT(*) FROM users WHERE ${activated} AND country = 'BR'`,
  ),
  w(
    "subscriptions",
    ["subs.activated"],
    "List activated users referred by partners (ids).",
    `SELECT user_id FROM users WHERE ${activated} AND referral_source = 'partner'`,
  ),
  w(
    "subscriptions",
    ["subs.activated"],
    "activated users by country",
    `SELECT country, COUNT(*) FROM users WHERE ${activated} GROUP BY country`,
  ),
  w(
    "subscriptions",
    ["subs.activated", "subs.paying"],
    "How many users are both activated and paying?",
    `SELECT COUNT(*) FROM users WHERE ${activated} AND ${paying}`,
  ),
  // subscriptions: power user
  w("subscriptions", ["subs.power"], "How many power users do we have?", `SELECT COUNT(*) FROM users WHERE ${power}`),
  w(
    "subscriptions",
    ["subs.power"],
    "Show the ids of power users in GB.",
    `SELECT user_id FROM users WHERE ${power} AND country = 'GB'`,
  ),
  w(
    "subscriptions",
    ["subs.power"],
    "Power users per referral source?",
    `SELECT referral_source, COUNT(*) FROM users WHERE ${power} GROUP BY referral_source`,
  ),
  w(
    "subscriptions",
    ["subs.power"],
    "How many power users signed up in 2025?",
    `SELECT COUNT(*) FROM users WHERE ${power} AND strftime('%Y', signup_date) = '2025'`,
  ),
  // subscriptions: MRR
  w("subscriptions", ["subs.mrr"], "What's our MRR right now?", `${MRR} WHERE ${MRR_W}`),
  w(
    "subscriptions",
    ["subs.mrr"],
    "How much MRR comes from users in the US?",
    `${MRR} JOIN users AS u ON u.user_id = s.user_id WHERE ${MRR_W} AND u.country = 'US'`,
  ),
  w(
    "subscriptions",
    ["subs.mrr"],
    "MRR by country, please.",
    `SELECT u.country, SUM(p.monthly_price) FROM subscriptions AS s JOIN plans AS p ON p.plan_id = s.plan_id JOIN users AS u ON u.user_id = s.user_id WHERE ${MRR_W} GROUP BY u.country`,
  ),
  w(
    "subscriptions",
    ["subs.mrr"],
    "MRR from users who came in through ads?",
    `${MRR} JOIN users AS u ON u.user_id = s.user_id WHERE ${MRR_W} AND u.referral_source = 'ads'`,
  ),
  w("subscriptions", ["subs.mrr"], "What is the MRR of the Team plan?", `${MRR} WHERE ${MRR_W} AND p.name = 'Team'`),
  w(
    "subscriptions",
    ["subs.mrr"],
    "give me MRR per plan",
    `SELECT p.name, SUM(p.monthly_price) FROM subscriptions AS s JOIN plans AS p ON p.plan_id = s.plan_id WHERE ${MRR_W} GROUP BY p.name`,
  ),
  // school: honours student
  w(
    "school",
    ["school.honours"],
    "How many honours students does the school have?",
    `SELECT COUNT(*) FROM students WHERE ${honours}`,
  ),
  w(
    "school",
    ["school.honours"],
    "List the names of honours students on the north campus.",
    `SELECT name FROM students WHERE ${honours} AND campus = 'north'`,
  ),
  w(
    "school",
    ["school.honours"],
    "Honours students per campus?",
    `SELECT campus, COUNT(*) FROM students WHERE ${honours} GROUP BY campus`,
  ),
  w(
    "school",
    ["school.honours"],
    "How many of the students who enrolled in 2024 are honours students?",
    `SELECT COUNT(*) FROM students WHERE ${honours} AND enrolled_year = 2024`,
  ),
  w(
    "school",
    ["school.honours"],
    "Which honours students enrolled in 2023? Names.",
    `SELECT name FROM students WHERE ${honours} AND enrolled_year = 2023`,
  ),
  // school: at-risk student
  w("school", ["school.at_risk"], "How many students are at risk?", `SELECT COUNT(*) FROM students WHERE ${stAtRisk}`),
  w(
    "school",
    ["school.at_risk"],
    "Show at-risk students on the east campus (names).",
    `SELECT name FROM students WHERE ${stAtRisk} AND campus = 'east'`,
  ),
  w(
    "school",
    ["school.at_risk"],
    "At-risk students by enrolment year?",
    `SELECT enrolled_year, COUNT(*) FROM students WHERE ${stAtRisk} GROUP BY enrolled_year`,
  ),
  w(
    "school",
    ["school.at_risk"],
    "count students at risk who enrolled in 2025",
    `SELECT COUNT(*) FROM students WHERE ${stAtRisk} AND enrolled_year = 2025`,
  ),
  w(
    "school",
    ["school.at_risk"],
    "What fraction of students on the west campus are at risk?",
    `SELECT AVG(CASE WHEN ${stAtRisk} THEN 1.0 ELSE 0.0 END) FROM students WHERE campus = 'west'`,
  ),
  // school: full-load student
  w(
    "school",
    ["school.full_load"],
    "How many full-load students do we have?",
    `SELECT COUNT(*) FROM students WHERE ${fullLoad}`,
  ),
  w(
    "school",
    ["school.full_load"],
    "List the full-load students from the south campus.",
    `SELECT name FROM students WHERE ${fullLoad} AND campus = 'south'`,
  ),
  w(
    "school",
    ["school.full_load"],
    "Full-load students per campus.",
    `SELECT campus, COUNT(*) FROM students WHERE ${fullLoad} GROUP BY campus`,
  ),
  w(
    "school",
    ["school.full_load"],
    "How many full-load students enrolled in 2025?",
    `SELECT COUNT(*) FROM students WHERE ${fullLoad} AND enrolled_year = 2025`,
  ),
  w(
    "school",
    ["school.full_load", "school.at_risk"],
    "Among full-load students, how many are at risk?",
    `SELECT COUNT(*) FROM students WHERE ${fullLoad} AND ${stAtRisk}`,
  ),
  // school: senior teacher
  w(
    "school",
    ["school.senior"],
    "how many senior teachers work here?",
    `SELECT COUNT(*) FROM teachers WHERE ${senior}`,
  ),
  w(
    "school",
    ["school.senior"],
    "Which senior teachers work in Physics? Names.",
    `SELECT name FROM teachers WHERE ${senior} AND department_id IN (SELECT department_id FROM departments WHERE name = 'Physics')`,
  ),
  w(
    "school",
    ["school.senior"],
    "How many senior teachers does the Mathematics department have?",
    `SELECT COUNT(*) FROM teachers WHERE ${senior} AND department_id IN (SELECT department_id FROM departments WHERE name = 'Mathematics')`,
  ),
  w(
    "school",
    ["school.senior"],
    "Senior teachers per department name?",
    `SELECT d.name, COUNT(*) FROM teachers AS t JOIN departments AS d ON d.department_id = t.department_id WHERE ${senior} GROUP BY d.name`,
  ),
  w("school", ["school.senior"], "List all senior teachers' names.", `SELECT name FROM teachers WHERE ${senior}`),
  w(
    "school",
    ["school.senior"],
    "How many courses are taught by senior teachers?",
    `SELECT COUNT(*) FROM courses WHERE teacher_id IN (SELECT teacher_id FROM teachers WHERE ${senior})`,
  ),
];

/** The questions on the held-out clinic's concepts. */
export const WRITTEN_CLINIC: WrittenQuestion[] = [
  w(
    "clinic",
    ["clinic.frequent"],
    "How many frequent patients does the clinic have?",
    `SELECT COUNT(*) FROM patients WHERE ${frequent}`,
  ),
  w(
    "clinic",
    ["clinic.frequent"],
    "List the names of frequent patients with private insurance.",
    `SELECT name FROM patients WHERE ${frequent} AND insurance = 'private'`,
  ),
  w(
    "clinic",
    ["clinic.frequent"],
    "Frequent patients by sex?",
    `SELECT sex, COUNT(*) FROM patients WHERE ${frequent} GROUP BY sex`,
  ),
  w(
    "clinic",
    ["clinic.frequent"],
    "How many female patients are frequent patients?",
    `SELECT COUNT(*) FROM patients WHERE ${frequent} AND sex = 'F'`,
  ),
  w(
    "clinic",
    ["clinic.unreliable"],
    "Which patients are unreliable? Give names.",
    `SELECT name FROM patients WHERE ${unreliable}`,
  ),
  w(
    "clinic",
    ["clinic.unreliable"],
    "count unreliable patients on public insurance",
    `SELECT COUNT(*) FROM patients WHERE ${unreliable} AND insurance = 'public'`,
  ),
  w(
    "clinic",
    ["clinic.unreliable", "clinic.senior"],
    "How many unreliable patients are seniors?",
    `SELECT COUNT(*) FROM patients WHERE ${unreliable} AND ${seniorPatient}`,
  ),
  w(
    "clinic",
    ["clinic.unreliable"],
    "Unreliable patients per insurance type.",
    `SELECT insurance, COUNT(*) FROM patients WHERE ${unreliable} GROUP BY insurance`,
  ),
  w(
    "clinic",
    ["clinic.senior"],
    "How many senior patients are on record?",
    `SELECT COUNT(*) FROM patients WHERE ${seniorPatient}`,
  ),
  w(
    "clinic",
    ["clinic.senior"],
    "List the senior patients who are male.",
    `SELECT name FROM patients WHERE ${seniorPatient} AND sex = 'M'`,
  ),
  w(
    "clinic",
    ["clinic.senior"],
    "Senior patients by insurance?",
    `SELECT insurance, COUNT(*) FROM patients WHERE ${seniorPatient} GROUP BY insurance`,
  ),
  w(
    "clinic",
    ["clinic.senior", "clinic.frequent"],
    "How many senior patients count as frequent patients?",
    `SELECT COUNT(*) FROM patients WHERE ${seniorPatient} AND ${frequent}`,
  ),
  w("clinic", ["clinic.busy"], "How many busy doctors do we have?", `SELECT COUNT(*) FROM doctors WHERE ${busy}`),
  w("clinic", ["clinic.busy"], "Names of the busy doctors, please.", `SELECT name FROM doctors WHERE ${busy}`),
  w(
    "clinic",
    ["clinic.busy"],
    "Busy doctors per specialty.",
    `SELECT specialty, COUNT(*) FROM doctors WHERE ${busy} GROUP BY specialty`,
  ),
  w(
    "clinic",
    ["clinic.busy"],
    "How many appointments do the busy doctors have in total?",
    `SELECT COUNT(*) FROM appointments WHERE ${busy}`,
  ),
  w(
    "clinic",
    ["clinic.busy"],
    "How many of the busy doctors work in orthopedics?",
    `SELECT COUNT(*) FROM doctors WHERE ${busy} AND specialty = 'orthopedics'`,
  ),
  w(
    "clinic",
    ["clinic.unreliable"],
    "What share of patients are unreliable?",
    `SELECT AVG(CASE WHEN ${unreliable} THEN 1.0 ELSE 0.0 END) FROM patients`,
  ),
  w(
    "clinic",
    ["clinic.frequent", "clinic.unreliable"],
    "How many frequent patients are not unreliable?",
    `SELECT COUNT(*) FROM patients WHERE ${frequent} AND NOT ${unreliable}`,
  ),
  w(
    "clinic",
    ["clinic.senior", "clinic.unreliable"],
    "Give me the names of senior patients who are unreliable and have private insurance.",
    `SELECT name FROM patients WHERE ${seniorPatient} AND ${unreliable} AND insurance = 'private'`,
  ),
];

/** Every hand-written question, trained concepts first. */
export const WRITTEN: WrittenQuestion[] = [...WRITTEN_TRAINED, ...WRITTEN_CLINIC];
