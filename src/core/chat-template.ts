// Rendering chat messages through a model's own Jinja chat template (@huggingface/jinja), the way
// transformers' apply_chat_template does, so prompts and token counts match what the model saw in training.
import { Environment, Interpreter, Template } from "@huggingface/jinja";
import type { ChatMessage } from "./prompts.ts";

/**
 * Bounds on one render. A chat template comes with the model (from a link, the Hub, anyone's
 * folder) and Jinja has loops: `range(1e8)` alone made a 100-million-element array and ended in a
 * fatal out-of-memory crash. Steps are the interpreter's evaluations (a Qwen2.5 render of a few
 * messages takes a few hundred); characters bound every intermediate string and the result.
 */
export const TEMPLATE_LIMITS = { steps: 100_000, chars: 4 * 2 ** 20, rangeItems: 100_000 } as const;

/** A chat template that went past TEMPLATE_LIMITS. */
export class TemplateLimitError extends Error {
  constructor(msg: string) {
    super(`chat template: ${msg}`);
    this.name = "TemplateLimitError";
  }
}

// @huggingface/jinja renders synchronously with no hook for limits, so its interpreter is wrapped
// here, once: the wrappers do nothing outside ChatTemplate.render (no budget is active), and
// inside it count evaluations, check string sizes and replace the `range` global with a bounded
// one. A Worker with a timeout would bound time too but make every render asynchronous and still
// let the worker's heap blow up before the timeout; counting stops the work itself.
let budget: { steps: number } | null = null;

type Evaluate = (this: unknown, statement: unknown, environment: unknown) => { value: unknown };
type SetVar = (this: unknown, name: string, value: unknown) => unknown;
const interp = Interpreter.prototype as unknown as { evaluate: Evaluate };
const env = Environment.prototype as unknown as { set: SetVar };
const evaluate = interp.evaluate;
const setVar = env.set;
interp.evaluate = function (statement, environment) {
  if (budget && --budget.steps < 0) {
    throw new TemplateLimitError(`rendering stopped after ${TEMPLATE_LIMITS.steps} steps (a loop that does not end?)`);
  }
  const out = evaluate.call(this, statement, environment);
  if (budget && typeof out?.value === "string" && out.value.length > TEMPLATE_LIMITS.chars) {
    throw new TemplateLimitError(`a string grew past ${TEMPLATE_LIMITS.chars} characters`);
  }
  return out;
};
env.set = function (name, value) {
  return setVar.call(this, name, budget && name === "range" ? boundedRange : value);
};

/** Jinja's range(), refusing more than TEMPLATE_LIMITS.rangeItems items before making any. */
function boundedRange(start: number, stop?: number, step = 1): number[] {
  if (stop === undefined) [start, stop] = [0, start];
  if (step === 0) throw new Error("range() step must not be zero");
  const n = Math.ceil((stop - start) / step);
  if (!Number.isFinite(n)) throw new TemplateLimitError(`range(${start}, ${stop}, ${step}) is not a finite range`);
  if (n > TEMPLATE_LIMITS.rangeItems) {
    throw new TemplateLimitError(`range() of ${n} items is over the limit of ${TEMPLATE_LIMITS.rangeItems}`);
  }
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(start + i * step);
  return out;
}

/** Options of one render. */
export interface RenderChatOptions {
  /** Append the assistant header so the model answers next (default true). */
  addGenerationPrompt?: boolean;
  /** Further template variables, for example `{ enable_thinking: false }` for Qwen3. */
  vars?: Record<string, unknown>;
}

/** A parsed chat template with its special tokens; parse once, render many times. */
export class ChatTemplate {
  private readonly template: Template;

  constructor(
    readonly source: string,
    readonly specialTokens: { bos_token?: string; eos_token?: string } = {},
  ) {
    try {
      this.template = new Template(source);
    } catch (e) {
      throw new Error(`chat template does not parse: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** The prompt text for `messages`; a render past TEMPLATE_LIMITS throws a TemplateLimitError. */
  render(messages: readonly ChatMessage[], opts: RenderChatOptions = {}): string {
    const outer = budget;
    budget = { steps: TEMPLATE_LIMITS.steps };
    try {
      return this.renderBounded(messages, opts);
    } finally {
      budget = outer;
    }
  }

  private renderBounded(messages: readonly ChatMessage[], opts: RenderChatOptions): string {
    return this.template.render({
      bos_token: this.specialTokens.bos_token ?? "",
      eos_token: this.specialTokens.eos_token ?? "",
      ...opts.vars,
      // Copies, so a template that mutates its input cannot touch the caller's messages.
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      add_generation_prompt: opts.addGenerationPrompt ?? true,
    });
  }
}

/**
 * The chat template of a Hugging Face `tokenizer_config.json` (parsed JSON): `chat_template` as a
 * string, or a list of named templates from which `name` is picked ("default" unless given).
 */
export function chatTemplateFromTokenizerConfig(config: unknown, name = "default"): ChatTemplate {
  if (typeof config !== "object" || config === null) throw new Error("tokenizer_config: expected an object");
  const c: Record<string, unknown> = { ...config };
  const raw = c.chat_template;
  let source: string | undefined;
  if (typeof raw === "string") {
    source = raw;
  } else if (Array.isArray(raw)) {
    const named = raw.filter(isNamedTemplate);
    source = named.find((t) => t.name === name)?.template;
    if (source === undefined) {
      throw new Error(
        `tokenizer_config: no chat template named "${name}" (has: ${named.map((t) => t.name).join(", ")})`,
      );
    }
  } else {
    throw new Error("tokenizer_config: no chat_template (it may be in chat_template.jinja beside it)");
  }
  return new ChatTemplate(source, { bos_token: tokenText(c.bos_token), eos_token: tokenText(c.eos_token) });
}

// Special tokens are written as a string or as an AddedToken object {content, ...}.
function tokenText(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "object" && v !== null && "content" in v && typeof v.content === "string") return v.content;
  return undefined;
}

function isNamedTemplate(v: unknown): v is { name: string; template: string } {
  return typeof v === "object" && v !== null && "name" in v && "template" in v &&
    typeof v.name === "string" && typeof v.template === "string";
}
