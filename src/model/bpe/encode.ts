// Our own encoder for a learned byte-level BPE (the library's tokenization is checked against it):
// added tokens cut out first, then per pre-tokenized word the lowest-ranked adjacent pair merged
// (leftmost first) until no learned merge applies. Words are cached.
import { byteLevelDecode, preTokenize } from "./bytelevel.ts";
import type { BpeModel } from "./train.ts";
import { splitAdded } from "./train.ts";

const KEY = 65536;

/** Encodes and decodes text with a BpeModel, independently of @huggingface/tokenizers. */
export class BpeEncoder {
  private readonly ranks = new Map<number, { rank: number; id: number }>();
  private readonly idOf = new Map<string, number>();
  private readonly addedIds = new Map<string, number>();
  private readonly cache = new Map<string, number[]>();

  constructor(readonly model: BpeModel) {
    model.vocab.forEach((t, i) => {
      if (!this.idOf.has(t)) this.idOf.set(t, i);
    });
    for (const a of model.added) this.addedIds.set(a.content, a.id);
    model.merges.forEach(([l, r], rank) => {
      const a = this.idOf.get(l), b = this.idOf.get(r), id = this.idOf.get(l + r);
      if (a === undefined || b === undefined || id === undefined) {
        throw new Error(`BpeEncoder: merge ${rank} "${l} ${r}" names unknown tokens`);
      }
      if (!this.ranks.has(a * KEY + b)) this.ranks.set(a * KEY + b, { rank, id });
    });
  }

  /** Token ids of one byte-level word. */
  encodeWord(word: string): number[] {
    const hit = this.cache.get(word);
    if (hit) return hit;
    let s = [...word].map((ch) => {
      const id = this.idOf.get(ch);
      if (id === undefined) throw new Error(`BpeEncoder: ${JSON.stringify(ch)} is not a byte symbol`);
      return id;
    });
    for (;;) {
      let best = Infinity, bestId = -1, left = -1, right = -1;
      for (let i = 0; i + 1 < s.length; i++) {
        const r = this.ranks.get(s[i] * KEY + s[i + 1]);
        if (r && r.rank < best) [best, bestId, left, right] = [r.rank, r.id, s[i], s[i + 1]];
      }
      if (bestId < 0) break;
      const next: number[] = [];
      for (let i = 0; i < s.length; i++) {
        if (i + 1 < s.length && s[i] === left && s[i + 1] === right) {
          next.push(bestId);
          i++;
        } else next.push(s[i]);
      }
      s = next;
    }
    if (this.cache.size < 200_000) this.cache.set(word, s);
    return s;
  }

  /** Token ids of `text`; added tokens (special or not) inside it map to their ids. */
  encode(text: string): number[] {
    const out: number[] = [];
    const parts = splitAdded(text, [...this.addedIds.keys()]);
    parts.forEach((p, i) => {
      if (i % 2 === 1) {
        const id = this.addedIds.get(p);
        if (id === undefined) throw new Error(`BpeEncoder: ${p} is not an added token`);
        out.push(id);
      } else if (p !== "") {
        for (const w of preTokenize(p)) for (const id of this.encodeWord(w)) out.push(id);
      }
    });
    return out;
  }

  /** Text of `ids` (added tokens verbatim, byte-level tokens decoded as UTF-8). */
  decode(ids: readonly number[]): string {
    let out = "", run = "";
    const added = new Set(this.model.added.map((a) => a.id));
    for (const id of ids) {
      const t = this.model.vocab[id];
      if (t === undefined) throw new Error(`BpeEncoder: id ${id} is outside the vocabulary`);
      if (added.has(id)) {
        out += byteLevelDecode(run) + t;
        run = "";
      } else run += t;
    }
    return out + byteLevelDecode(run);
  }
}
