// Completions as they finish, while the rest of the batch is still decoding: the GRPO stage scores
// each one then, so SQL runs in the workers during decoding instead of after it (issue #17). Built
// on the sampler's public progress report (the tokens each decoding step added), not inside the
// sampler: a row is finished at its EOS token or at maxNewTokens, and its text is decoded the way
// sampleBatch decodes it. Stop strings are not followed (their cut needs the sampler's own text),
// so callers pass no tracker when there are any. The final samples are still the reference: the
// stage compares each with its early text and rescores any that differ.
import type { SampleProgress } from "../../model/sampler.ts";

/** A completion the step its row finished: what scoring needs (no log-probabilities yet). */
export interface FinishedText {
  prompt: number;
  index: number;
  text: string;
  /** Generated tokens, EOS included (as Sample.tokens). */
  tokens: number;
}

/** Follows one sampler call's progress and reports each row once, when it ends. */
export class FinishTracker {
  private readonly rows = new Map<string, number[]>();
  private readonly done = new Set<string>();

  constructor(
    private readonly eos: ReadonlySet<number>,
    private readonly maxNewTokens: number,
    private readonly decode: (ids: readonly number[]) => string,
    private readonly onFinished: (f: FinishedText) => void,
  ) {}

  /** The sampler's onProgress. */
  progress(p: SampleProgress): void {
    for (const a of p.added) {
      const key = `${a.prompt}:${a.index}`;
      if (this.done.has(key)) continue;
      let toks = this.rows.get(key);
      if (!toks) this.rows.set(key, toks = []);
      toks.push(a.token);
      const eos = this.eos.has(a.token);
      if (!eos && toks.length < this.maxNewTokens) continue;
      this.done.add(key);
      this.rows.delete(key);
      const body = eos ? toks.slice(0, -1) : toks;
      // Some tokenizers reject an empty id list (as in sampleBatch).
      this.onFinished({
        prompt: a.prompt,
        index: a.index,
        text: body.length ? this.decode(body) : "",
        tokens: toks.length,
      });
    }
  }
}
