// Prompts of tasks for one model and template: schema per database (cached), the prompt builder's
// token budget counted with the model's own tokenizer through its chat template, and the ids.
import { ChatTemplate } from "../../core/chat-template.ts";
import type { PromptParams } from "../../core/notebook-params.ts";
import { buildPrompt, type ChatMessage, getPromptTemplate, type PromptTemplate } from "../../core/prompts.ts";
import type { DbSchema } from "../../core/schema.ts";
import type { Task } from "../../core/types.ts";
import type { HfTokenizer } from "../../model/tokenizer.ts";

/** A model's text side: its chat template and tokenizer. */
export class ChatCodec {
  private readonly template: ChatTemplate | null;

  constructor(readonly tokenizer: HfTokenizer, chatTemplate: string | null) {
    const tok = tokenizer;
    this.template = chatTemplate
      ? new ChatTemplate(chatTemplate, { bos_token: tok.bos?.token, eos_token: tok.eos?.token })
      : null;
  }

  /** The prompt text of chat messages through the model's chat template (plain contents when it has none). */
  renderPrompt(messages: readonly ChatMessage[]): string {
    if (this.template) return this.template.render(messages);
    return messages.map((m) => m.content).join("\n\n") + "\n\n";
  }

  /** Token ids of a rendered prompt. */
  encode(text: string): number[] {
    return this.tokenizer.encode(text, { addSpecialTokens: this.tokenizer.addBosToken });
  }

  /** Token ids of text with no special tokens added (an answer, or the start of one). */
  encodePlain(text: string): number[] {
    return this.tokenizer.encode(text, { addSpecialTokens: false });
  }

  /** Text of token ids (special tokens kept). */
  decode(ids: readonly number[]): string {
    return ids.length ? this.tokenizer.decode(ids) : "";
  }
}

/** What prompts need of a model. */
export type PromptModel = Pick<ChatCodec, "renderPrompt" | "encode" | "encodePlain">;

/**
 * One task's prompt. `text` is the chat-rendered prompt, before the answer; `answerPrefix` the
 * answer's start that the template writes for the model (assistant prefill, "" for most templates);
 * `ids` what the model's generated tokens continue: `text`'s ids, then the prefix's. A sample's
 * answer is the prefix followed by its generated text (sampleTasks joins them).
 */
export interface TaskPrompt {
  text: string;
  ids: number[];
  /** `text`'s ids alone (equal to `ids` without an answer prefix). */
  textIds: number[];
  answerPrefix: string;
  template: PromptTemplate;
}

/** Builds and caches prompts for one model runtime and prompt settings. */
export class Prompter {
  private readonly cache = new Map<string, TaskPrompt>();
  readonly template: PromptTemplate;
  private readonly answerPrefix: string;
  /** The answer prefix's ids (encoded once: every prompt of the template ends with them). */
  private readonly prefixIds: number[];

  constructor(
    private readonly runtime: PromptModel,
    private readonly params: PromptParams,
    /** The schema of a database, as the prompts show it (cached). */
    readonly schemaOf: (dbId: string) => Promise<DbSchema>,
  ) {
    this.template = getPromptTemplate(params.template);
    this.answerPrefix = this.template.answerPrefix ?? "";
    this.prefixIds = this.answerPrefix ? runtime.encodePlain(this.answerPrefix) : [];
  }

  /** The prompt of `task` (built once per task id). */
  async prompt(task: Task): Promise<TaskPrompt> {
    const hit = this.cache.get(task.id);
    if (hit) return hit;
    const schema = await this.schemaOf(task.db_id);
    const rt = this.runtime;
    const { answerPrefix, prefixIds } = this;
    // The budget holds what the model continues: the rendered prompt and the answer's prefix.
    const built = buildPrompt(this.params.evidence ? task : { question: task.question }, schema, {
      template: this.template,
      examplesPerColumn: this.params.examplesPerColumn,
      descriptions: this.params.descriptions,
      maxPromptTokens: this.params.maxPromptTokens,
      countTokens: (text) => rt.encode(text).length + prefixIds.length,
      render: (ms) => rt.renderPrompt(ms),
    });
    const text = rt.renderPrompt(built.messages);
    const textIds = rt.encode(text);
    const ids = answerPrefix ? [...textIds, ...prefixIds] : textIds;
    const p: TaskPrompt = { text, ids, textIds, answerPrefix, template: this.template };
    this.cache.set(task.id, p);
    return p;
  }

  /** Prompts of many tasks, in order. */
  async prompts(tasks: readonly Task[]): Promise<TaskPrompt[]> {
    const out: TaskPrompt[] = [];
    for (const t of tasks) out.push(await this.prompt(t));
    return out;
  }
}

/** A schema loader that asks once per database. */
export function cachedSchemas(load: (dbId: string) => Promise<DbSchema>): (dbId: string) => Promise<DbSchema> {
  const cache = new Map<string, Promise<DbSchema>>();
  return (dbId) => {
    let p = cache.get(dbId);
    if (!p) {
      p = load(dbId);
      cache.set(dbId, p);
    }
    return p;
  };
}
