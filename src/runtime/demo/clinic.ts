// A clinic, held out entirely from training: patients, doctors, appointments, prescriptions.
import type { Rng } from "../../core/rng.ts";
import {
  type DemoDatabase,
  personName,
  pick,
  q,
  type QuestionTemplate,
  randomDate,
  randomTime,
  type Rows,
  TODAY,
  weighted,
} from "./gen.ts";

const SPECIALTIES = ["cardiology", "dermatology", "pediatrics", "general", "orthopedics"] as const;
const DRUGS = ["amoxicillin", "ibuprofen", "metformin", "lisinopril", "atorvastatin", "cetirizine"] as const;

/** Generates the clinic database. */
export function clinicDatabase(rng: Rng): DemoDatabase {
  const doctors: Rows = [];
  for (let id = 1; id <= 30; id++) doctors.push([id, personName(rng), SPECIALTIES[(id - 1) % SPECIALTIES.length]]);
  const patients: Rows = [];
  for (let id = 1; id <= 900; id++) {
    patients.push([
      id,
      personName(rng),
      randomDate(rng, "1940-01-01", "2024-12-31"),
      rng.next() < 0.5 ? "F" : "M",
      rng.next() < 0.2 ? null : pick(rng, ["public", "private"]),
    ]);
  }
  const appts: Rows = [];
  const rx: Rows = [];
  let rid = 1;
  for (let id = 1; id <= 4000; id++) {
    const day = randomDate(rng, "2025-01-01", TODAY);
    const status = weighted(rng, ["completed", "no_show", "cancelled"], [82, 8, 10]);
    appts.push([id, 1 + rng.int(patients.length), 1 + rng.int(doctors.length), randomTime(rng, day), status]);
    if (status === "completed" && rng.next() < 0.45) rx.push([rid++, id, pick(rng, DRUGS), 5 + 5 * rng.int(6)]);
  }
  return {
    id: "clinic",
    ddl: [
      `CREATE TABLE doctors (doctor_id INTEGER PRIMARY KEY, name TEXT NOT NULL, specialty TEXT NOT NULL)`,
      `CREATE TABLE patients (patient_id INTEGER PRIMARY KEY, name TEXT NOT NULL, birth_date TEXT NOT NULL, sex TEXT NOT NULL, insurance TEXT)`,
      `CREATE TABLE appointments (appointment_id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients(patient_id), doctor_id INTEGER NOT NULL REFERENCES doctors(doctor_id), starts_at TEXT NOT NULL, status TEXT NOT NULL)`,
      `CREATE TABLE prescriptions (prescription_id INTEGER PRIMARY KEY, appointment_id INTEGER NOT NULL REFERENCES appointments(appointment_id), drug TEXT NOT NULL, days INTEGER NOT NULL)`,
    ],
    tables: { doctors, patients, appointments: appts, prescriptions: rx },
  };
}

/** Question templates on the clinic database (all held out). */
export const CLINIC_TEMPLATES: QuestionTemplate[] = [
  {
    id: "clinic.doctors_specialty",
    difficulty: "simple",
    phrasings: ["How many doctors work in {specialty}?", "Number of {specialty} doctors?"],
    params: SPECIALTIES.map((specialty) => ({ specialty })),
    sql: (p) => `SELECT COUNT(*) FROM doctors WHERE specialty = ${q(p.specialty)}`,
  },
  {
    id: "clinic.no_show_rate",
    difficulty: "moderate",
    phrasings: ["What fraction of appointments were no-shows?", "No-show rate of all appointments?"],
    evidence: "no-show rate = appointments with status 'no_show' / all appointments",
    params: [{}],
    sql: () => `SELECT CAST(SUM(status = 'no_show') AS REAL) / COUNT(*) FROM appointments`,
  },
  {
    id: "clinic.prescriptions_drug",
    difficulty: "moderate",
    phrasings: [
      "How many prescriptions of {drug} were written by {specialty} doctors?",
      "Count {drug} prescriptions from {specialty}.",
    ],
    params: DRUGS.slice(0, 3).flatMap((drug) => SPECIALTIES.slice(0, 2).map((specialty) => ({ drug, specialty }))),
    sql: (p) =>
      `SELECT COUNT(*) FROM prescriptions AS r JOIN appointments AS a ON a.appointment_id = r.appointment_id JOIN doctors AS d ON d.doctor_id = a.doctor_id WHERE r.drug = ${
        q(p.drug)
      } AND d.specialty = ${q(p.specialty)}`,
  },
  {
    id: "clinic.uninsured_patients",
    difficulty: "simple",
    phrasings: ["How many patients have no insurance recorded?", "Count patients with unknown insurance."],
    params: [{}],
    sql: () => `SELECT COUNT(*) FROM patients WHERE insurance IS NULL`,
  },
  {
    id: "clinic.busiest_doctor",
    difficulty: "challenging",
    phrasings: [
      "Which doctor completed the most appointments? Give the name.",
      "Name the doctor with the most completed appointments.",
    ],
    params: [{}],
    sql: () =>
      `SELECT d.name FROM doctors AS d JOIN appointments AS a ON a.doctor_id = d.doctor_id WHERE a.status = 'completed' GROUP BY d.doctor_id ORDER BY COUNT(*) DESC LIMIT 1`,
  },
];
