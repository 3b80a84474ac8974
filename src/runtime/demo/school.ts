// A school: departments, teachers, students, courses and enrolments, with grades missing for
// courses still in progress.
import type { Rng } from "../../core/rng.ts";
import {
  type DemoDatabase,
  personName,
  pick,
  q,
  type QuestionTemplate,
  randomDate,
  type Rows,
  weighted,
  zipf,
} from "./gen.ts";

const DEPARTMENTS = ["Mathematics", "Physics", "History", "Languages", "Computer Science", "Biology"] as const;
const TERMS = ["2024-fall", "2025-spring", "2025-fall", "2026-spring"] as const;

/** Generates the school database. */
export function schoolDatabase(rng: Rng): DemoDatabase {
  const departments: Rows = DEPARTMENTS.map((d, i) => [i + 1, d, 2 + rng.int(4)]);
  const teachers: Rows = [];
  for (let id = 1; id <= 45; id++) {
    teachers.push([
      id,
      personName(rng),
      1 + ((id - 1) % DEPARTMENTS.length),
      randomDate(rng, "2005-01-01", "2025-08-01"),
    ]);
  }
  const courses: Rows = [];
  for (let id = 1; id <= 60; id++) {
    const teacher = teachers[rng.int(teachers.length)];
    courses.push([
      id,
      `${DEPARTMENTS[Number(teacher[2]) - 1]} ${100 + id}`,
      teacher[2],
      teacher[0],
      weighted(rng, [3, 4, 5, 6], [3, 5, 2, 1]),
    ]);
  }
  const students: Rows = [];
  for (let id = 1; id <= 800; id++) {
    students.push([
      id,
      personName(rng),
      2022 + rng.int(5),
      rng.next() < 0.1 ? null : pick(rng, ["north", "south", "east", "west"]),
    ]);
  }
  const enrollments: Rows = [];
  let eid = 1;
  for (const s of students) {
    const n = 3 + rng.int(6);
    const taken = new Set<number>();
    for (let k = 0; k < n; k++) {
      const course = 1 + zipf(rng, courses.length, 0.3);
      if (taken.has(course)) continue;
      taken.add(course);
      const term = TERMS[rng.int(TERMS.length)];
      const grade = term === "2026-spring" ? null : Math.max(20, Math.min(100, Math.round(72 + 12 * rng.normal())));
      enrollments.push([eid++, s[0], course, term, grade]);
    }
  }
  return {
    id: "school",
    ddl: [
      `CREATE TABLE departments (department_id INTEGER PRIMARY KEY, name TEXT NOT NULL, building_floor INTEGER NOT NULL)`,
      `CREATE TABLE teachers (teacher_id INTEGER PRIMARY KEY, name TEXT NOT NULL, department_id INTEGER NOT NULL REFERENCES departments(department_id), hired_on TEXT NOT NULL)`,
      `CREATE TABLE courses (course_id INTEGER PRIMARY KEY, title TEXT NOT NULL, department_id INTEGER NOT NULL REFERENCES departments(department_id), teacher_id INTEGER NOT NULL REFERENCES teachers(teacher_id), credits INTEGER NOT NULL)`,
      `CREATE TABLE students (student_id INTEGER PRIMARY KEY, name TEXT NOT NULL, enrolled_year INTEGER NOT NULL, campus TEXT)`,
      `CREATE TABLE enrollments (enrollment_id INTEGER PRIMARY KEY, student_id INTEGER NOT NULL REFERENCES students(student_id), course_id INTEGER NOT NULL REFERENCES courses(course_id), term TEXT NOT NULL, grade INTEGER)`,
    ],
    tables: { departments, teachers, courses, students, enrollments },
  };
}

const depts = DEPARTMENTS.slice(0, 5).map((department) => ({ department }));

/** Generic question templates on the school database (the organisation's concepts are in concept-defs.ts). */
export const SCHOOL_TEMPLATES: QuestionTemplate[] = [
  {
    id: "school.courses_in_dept",
    difficulty: "simple",
    phrasings: ["How many courses does the {department} department offer?", "Number of {department} courses?"],
    params: depts,
    sql: (p) =>
      `SELECT COUNT(*) FROM courses AS c JOIN departments AS d ON d.department_id = c.department_id WHERE d.name = ${
        q(p.department)
      }`,
  },
  {
    id: "school.students_by_year",
    difficulty: "simple",
    phrasings: ["How many students enrolled in each year?", "Count students per enrolment year."],
    params: [{}],
    sql: () => `SELECT enrolled_year, COUNT(*) FROM students GROUP BY enrolled_year`,
  },
  {
    id: "school.avg_grade_term",
    difficulty: "moderate",
    phrasings: ["What was the average grade in term {term}?", "Average grade of enrolments in {term}?"],
    params: TERMS.slice(0, 3).map((term) => ({ term })),
    sql: (p) => `SELECT AVG(grade) FROM enrollments WHERE term = ${q(p.term)}`,
  },
  {
    id: "school.teacher_load",
    difficulty: "moderate",
    phrasings: [
      "Which teachers teach more than {n} courses? Give their names.",
      "Names of teachers with over {n} courses?",
    ],
    params: [{ n: 1 }, { n: 2 }],
    sql: (p) =>
      `SELECT t.name FROM teachers AS t JOIN courses AS c ON c.teacher_id = t.teacher_id GROUP BY t.teacher_id HAVING COUNT(*) > ${p.n}`,
  },
  {
    id: "school.in_progress",
    difficulty: "moderate",
    phrasings: ["How many enrolments are still in progress?", "Count the enrolments without a final grade yet."],
    evidence: "an enrolment is in progress while its grade is NULL",
    params: [{}],
    sql: () => `SELECT COUNT(*) FROM enrollments WHERE grade IS NULL`,
  },
  {
    id: "school.dept_credits",
    difficulty: "challenging",
    phrasings: [
      "Which department's courses carry the most credits in total? Give its name.",
      "Name the department with the highest total course credits.",
    ],
    params: [{}],
    sql: () =>
      `SELECT d.name FROM departments AS d JOIN courses AS c ON c.department_id = d.department_id GROUP BY d.department_id ORDER BY SUM(c.credits) DESC LIMIT 1`,
  },
];
