// Rendering chat messages through a model's own Jinja chat template (@huggingface/jinja), the way
// transformers' apply_chat_template does, so prompts and token counts match what the model saw in training.
import { Template } from "@huggingface/jinja";
import type { ChatMessage } from "./prompts.ts";

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

  /** The prompt text for `messages`. */
  render(messages: readonly ChatMessage[], opts: RenderChatOptions = {}): string {
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
      throw new Error(`tokenizer_config: no chat template named "${name}" (has: ${named.map((t) => t.name).join(", ")})`);
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
