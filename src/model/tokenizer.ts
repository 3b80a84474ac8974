// Hugging Face tokenizers (tokenizer.json + tokenizer_config.json) through @huggingface/tokenizers,
// plus what the prompt builder needs: the chat template string and the bos/eos/pad tokens.
// Rendering the template is src/core/chat-template.ts's job.
import { Tokenizer } from "@huggingface/tokenizers";

/** A special token and its id. */
export interface SpecialToken {
  token: string;
  id: number;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** The token string of a tokenizer_config entry: a string, or an AddedToken object `{content}`. */
function tokenString(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (isRecord(v) && typeof v.content === "string") return v.content;
  return null;
}

/** The chat template of tokenizer_config.json: a string, or the "default" of a named list. */
export function chatTemplateOf(cfg: unknown): string | null {
  if (!isRecord(cfg)) return null;
  const t = cfg.chat_template;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) {
    const named = t.filter(isRecord);
    const d = named.find((x) => x.name === "default") ?? named[0];
    return d && typeof d.template === "string" ? d.template : null;
  }
  return null;
}

/** A loaded tokenizer with its special tokens and chat template. */
export class HfTokenizer {
  readonly inner: Tokenizer;
  readonly chatTemplate: string | null;
  readonly bos: SpecialToken | null;
  readonly eos: SpecialToken | null;
  readonly pad: SpecialToken | null;
  /** Whether encoding with special tokens prepends bos (tokenizer_config `add_bos_token`). */
  readonly addBosToken: boolean;
  /** One more than the largest token id, added tokens included. */
  readonly vocabSize: number;

  constructor(tokenizerJson: unknown, tokenizerConfig: unknown, chatTemplate?: string | null) {
    if (!isRecord(tokenizerJson) || !isRecord(tokenizerJson.model)) throw new Error("tokenizer.json: no model object");
    const cfg = isRecord(tokenizerConfig) ? tokenizerConfig : {};
    this.inner = new Tokenizer(tokenizerJson, cfg);
    this.chatTemplate = chatTemplate ?? chatTemplateOf(cfg);
    this.bos = this.special(cfg.bos_token);
    this.eos = this.special(cfg.eos_token);
    this.pad = this.special(cfg.pad_token);
    this.addBosToken = cfg.add_bos_token === true;
    let max = -1;
    for (const id of this.inner.get_vocab(true).values()) max = Math.max(max, id);
    this.vocabSize = max + 1;
  }

  private special(v: unknown): SpecialToken | null {
    const token = tokenString(v);
    if (token === null) return null;
    const id = this.inner.token_to_id(token);
    if (id === undefined) throw new Error(`tokenizer: special token ${JSON.stringify(token)} is not in the vocabulary`);
    return { token, id };
  }

  /** Token ids of `text`; special-token strings inside it map to their ids. */
  encode(text: string, o: { addSpecialTokens?: boolean } = {}): number[] {
    return this.inner.encode(text, { add_special_tokens: o.addSpecialTokens ?? false }).ids;
  }

  /** Text of `ids`, optionally without special tokens. */
  decode(ids: readonly number[], o: { skipSpecialTokens?: boolean } = {}): string {
    // The library refuses an empty id list; an empty completion is a normal case here.
    if (ids.length === 0) return "";
    return this.inner.decode([...ids], { skip_special_tokens: o.skipSpecialTokens ?? false });
  }

  /** Token string to id, or undefined. */
  tokenToId(token: string): number | undefined {
    return this.inner.token_to_id(token);
  }

  /** Id to token string, or undefined. */
  idToToken(id: number): string | undefined {
    return this.inner.id_to_token(id);
  }
}

/** Parses tokenizer.json and tokenizer_config.json texts into a tokenizer. */
export function loadTokenizer(
  tokenizerJsonText: string,
  tokenizerConfigText: string | null,
  chatTemplate?: string | null,
): HfTokenizer {
  const parse = (text: string, name: string): unknown => {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new Error(`${name}: not JSON (${e instanceof Error ? e.message : String(e)})`);
    }
  };
  return new HfTokenizer(
    parse(tokenizerJsonText, "tokenizer.json"),
    tokenizerConfigText === null ? {} : parse(tokenizerConfigText, "tokenizer_config.json"),
    chatTemplate,
  );
}
