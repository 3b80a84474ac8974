// The GRPO reward inspector in the notebook (issue 48, items 7 and 10): a group of G samples
// placed where the GRPO cell shows it, at G = 4, 8 and 16 and at 1280 and 800 px, leaves the
// notebook column as wide as it was and the page without a sideways scroll. Each card shows every
// reward component's weight and the gold SQL, and an evaluation's samples get no step slider.
import { mkdirSync } from "node:fs";
import type { Page } from "playwright-core";
import { assert, assertEquals } from "../assert.ts";
import type { SampleRecord } from "../../src/runtime/records.ts";
import { ARTIFACTS, launchChromium, serveStatic, watchErrors } from "./harness.ts";

const GOLD =
  "SELECT u.user_id, u.signup_date, COUNT(o.order_id) AS orders FROM users AS u LEFT JOIN orders AS o ON o.user_id = u.user_id GROUP BY u.user_id";

function sample(i: number, phase: "grpo" | "eval", step: number): SampleRecord {
  const correct = i % 3 === 0;
  const rows = [[1, "2024-01-03", 4], [2, "2024-02-11", 0], [3, "2024-03-30", 12]];
  return {
    v: 1,
    phase,
    step,
    cell: phase === "grpo" ? "grpo" : "base-concepts",
    taskId: "q-17",
    dbId: "shop",
    question: "How many orders did each user place since signing up?",
    sampleIndex: i,
    prompt: "<|im_start|>user\n...schema...<|im_end|>",
    completion: `<answer>${GOLD}</answer>`,
    reasoning: null,
    extraction: {
      sql: correct
        ? GOLD
        : `SELECT user_id, signup_date, COUNT(*) AS order_count_including_cancelled_and_refunded FROM users_with_a_rather_long_table_name_${i} GROUP BY user_id`,
      source: "answer-tag",
    } as SampleRecord["extraction"],
    predicted: {
      columns: ["user_id", "signup_date", "order_count_including_cancelled_and_refunded"],
      rows: correct ? rows : [[1, "2024-01-03", 5]],
      rowCount: correct ? 3 : 1,
      truncated: false,
      capped: false,
    },
    gold: { columns: ["user_id", "signup_date", "orders"], rows, rowCount: 3, truncated: false, capped: false },
    goldSql: GOLD,
    error: null,
    correct,
    execMs: 3,
    // error_penalty 0: its weight is read off another sample of the group, where it is not 0.
    reward: correct
      ? { total: 1, components: { execution: 1, error_penalty: 0 }, weighted: { execution: 1, error_penalty: 0 } }
      : {
        total: -0.5,
        components: { execution: 0, error_penalty: -1 },
        weighted: { execution: 0, error_penalty: -0.5 },
      },
    advantage: phase === "grpo" ? (correct ? 0.9 : -0.4) : null,
    completionTokens: 40 + i,
    logprob: -12.5,
    finishReason: "stop",
  } as SampleRecord;
}

/** Places an inspector with `records` where the GRPO cell's run section shows one; returns the notebook column's width before and after. */
function mount(page: Page, records: SampleRecord[]): Promise<{ before: number; after: number; scroll: number }> {
  return page.evaluate(async (recs) => {
    const nb = document.querySelector("rl-notebook")!;
    const li = nb.shadowRoot!.querySelector('li[data-cell-id="grpo"]')!;
    const before = nb.getBoundingClientRect().width;
    const run = li.querySelector("rl-cell-run")!;
    run.shadowRoot!.querySelector("#test-inspector")?.remove();
    const details = document.createElement("details");
    details.id = "test-inspector";
    details.open = true;
    const insp = document.createElement("rl-reward-inspector") as HTMLElement & { records: unknown; step: number };
    insp.records = recs;
    insp.step = (recs as { step: number }[])[0].step;
    details.append(insp);
    run.shadowRoot!.append(details);
    await new Promise((r) => setTimeout(r, 200));
    details.scrollIntoView();
    return {
      before,
      after: nb.getBoundingClientRect().width,
      scroll: document.documentElement.scrollWidth - window.innerWidth,
    };
  }, records as unknown[]);
}

Deno.test({
  name:
    "reward inspector: issue 48 — the layout holds at G = 4, 8, 16 and 1280 / 800 px; weights, gold SQL, no step slider on an evaluation",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = serveStatic(Deno.env.get("RLVR_TEST_DIST") || undefined);
    const browser = await launchChromium({ webgpu: false });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      const errors = watchErrors(page);
      await page.goto(server.url);
      await page.locator('li[data-cell-id="grpo"] rl-cell-run').waitFor();
      mkdirSync(ARTIFACTS, { recursive: true });
      for (const width of [1280, 800]) {
        await page.setViewportSize({ width, height: 1000 });
        for (const G of [4, 8, 16]) {
          const m = await mount(page, [
            ...Array.from({ length: G }, (_, i) => sample(i, "grpo", 3)),
            sample(0, "grpo", 4),
          ]);
          assertEquals(m.after, m.before, `G=${G} at ${width}px: the notebook column keeps its width`);
          assert(m.scroll <= 0, `G=${G} at ${width}px: the page scrolls sideways by ${m.scroll}px`);
          const cards = page.locator("#test-inspector [data-testid=sample]");
          assertEquals(await cards.count(), G);
          // Every card lies inside the notebook column.
          const nb = (await page.locator("rl-notebook").boundingBox())!;
          for (const b of await cards.evaluateAll((els) => els.map((e) => e.getBoundingClientRect().right))) {
            assert(b <= nb.x + nb.width + 0.5, `card right edge ${b} past ${nb.x + nb.width}`);
          }
          if (G === 4 || G === 16) {
            await page.locator("#test-inspector").screenshot({ path: `${ARTIFACTS}/inspector-g${G}-${width}.png` });
          }
        }
      }
      // Item 10: the weight of each component, also where the sample's value is 0 (read off the group).
      const wrong = page.locator('#test-inspector [data-testid=sample][data-sample="1"]');
      const right = page.locator('#test-inspector [data-testid=sample][data-sample="0"]');
      assertEquals(
        (await wrong.locator('[data-component="error_penalty"]').innerText()).replace(/\s+/g, " ").trim(),
        "error_penalty -1.00 × 0.5 = -0.50",
      );
      assertEquals(
        (await right.locator('[data-component="error_penalty"]').innerText()).replace(/\s+/g, " ").trim(),
        "error_penalty 0.00 × 0.5 = 0.00",
      );
      // The gold SQL beside the gold rows.
      await page.locator("#test-inspector [data-testid=gold-sql]").first().waitFor();
      assert(
        (await page.locator("#test-inspector [data-testid=gold-sql]").first().textContent())!.includes(
          "LEFT JOIN orders",
        ),
        "gold SQL shown",
      );
      assertEquals(
        await page.locator("#test-inspector [data-testid=inspector-step]").count(),
        1,
        "a training run has a step slider",
      );
      // An evaluation: one set of greedy answers, no "Step 0" slider.
      await mount(
        page,
        Array.from({ length: 4 }, (_, i) => ({ ...sample(0, "eval", 0), sampleIndex: 0, taskId: `q-${i}` })),
      );
      assertEquals(
        await page.locator("#test-inspector [data-testid=inspector-step]").count(),
        0,
        "no step slider on an evaluation",
      );
      assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
