// The rft warm-up's choice of training samples (no GPU): correct or (keep "better") positive-advantage
// samples, never empty ones; with rftPerQuestion, at most that many different answers per question.
// And the notebook reader: rftPerQuestion defaults to 0 and is refused outside method "rft".
import { assert, assertEquals } from "../../../tests/assert.ts";
import { parseNotebook } from "../../core/notebook.ts";
import { rftSelect } from "./warmup.ts";

// Question 0: four draws, three of them the same correct answer; question 1: a correct one, an empty
// one marked correct, and a wrong one above its group's mean reward.
const samples = [
  { prompt: 0, tokens: [5, 6] },
  { prompt: 0, tokens: [5, 6] },
  { prompt: 0, tokens: [7] },
  { prompt: 0, tokens: [5, 6] },
  { prompt: 1, tokens: [8] },
  { prompt: 1, tokens: [] },
  { prompt: 1, tokens: [9] },
];
const correct = [true, true, true, true, true, true, false];
const advantages = [0.5, 0.5, 0.5, 0.5, 1, 1, 0.2];

Deno.test("rftSelect: every kept sample without a cap, duplicates included; empty answers never", () => {
  assertEquals(rftSelect(samples, correct, advantages, "correct", 0), [0, 1, 2, 3, 4]);
  assertEquals(rftSelect(samples, correct, advantages, "better", 0), [0, 1, 2, 3, 4, 6]);
});

Deno.test("rftSelect: rftPerQuestion keeps different answers only, the first drawn of each, at most N per question", () => {
  assertEquals(rftSelect(samples, correct, advantages, "correct", 1), [0, 4]);
  assertEquals(rftSelect(samples, correct, advantages, "correct", 2), [0, 2, 4]);
  assertEquals(rftSelect(samples, correct, advantages, "correct", 8), [0, 2, 4]);
  assertEquals(rftSelect(samples, correct, advantages, "better", 2), [0, 2, 4, 6]);
});

Deno.test("notebook: warmup.rftPerQuestion defaults to 0, reads a count, is refused outside rft", () => {
  const read = (params: Record<string, unknown>) =>
    parseNotebook({ version: 1, title: "x", cells: [{ id: "w", type: "warmup", params }] });
  const def = read({});
  assert(def.ok, JSON.stringify(!def.ok && def.errors));
  assertEquals((def.doc.cells[0].params as { rftPerQuestion: number }).rftPerQuestion, 0);
  const two = read({ rftPerQuestion: 2 });
  assert(two.ok && (two.doc.cells[0].params as { rftPerQuestion: number }).rftPerQuestion === 2);
  const bad = read({ method: "awpg", rftPerQuestion: 2 });
  assert(
    !bad.ok && JSON.stringify(bad.errors).includes("rftPerQuestion caps the samples of method"),
    JSON.stringify(!bad.ok && bad.errors),
  );
  assert(!read({ rftPerQuestion: -1 }).ok);
});
