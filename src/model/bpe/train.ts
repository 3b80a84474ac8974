// Byte-level BPE training: a word frequency table from pre-tokenized text, then merges learned
// greedily by pair counts weighted by word frequency. Counts are updated incrementally per merge
// (only words holding the merged pair are touched) and the best pair comes from a max-heap with
// lazy deletion. Ties are broken by the lower left id, then the lower right id, so the result
// depends only on the word table, not on the order words were seen.
import { bytesToUnicode, preTokenize } from "./bytelevel.ts";

/** A learned byte-level BPE: tokens by id (256 bytes, then merges), the merges in rank order, added tokens after. */
export interface BpeModel {
  /** Token string of every id below `vocab.length` (added tokens included, at the end). */
  vocab: string[];
  /** Merges in rank order, as pairs of token strings. */
  merges: [string, string][];
  /** Added tokens: their id, text and whether they are special (skipped by decode with skipSpecialTokens). */
  added: { id: number; content: string; special: boolean }[];
}

/** Options of trainBpe. */
export interface BpeTrainOptions {
  /** Total tokens: 256 bytes + merges + added tokens. */
  vocabSize: number;
  /** Special tokens (e.g. <|endoftext|>), never split and never learned from. */
  specials: readonly string[];
  /** Non-special added tokens (e.g. <think>). */
  addedTokens?: readonly string[];
  /** A pair seen fewer times than this is never merged (default 2). */
  minFrequency?: number;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Splits `text` around occurrences of `tokens` (longest first); odd indices of the result are token matches. */
export function splitAdded(text: string, tokens: readonly string[]): string[] {
  if (tokens.length === 0) return [text];
  const re = new RegExp(`(${[...tokens].sort((a, b) => b.length - a.length).map(escapeRe).join("|")})`, "u");
  return text.split(re);
}

/** Adds the byte-level words of `text` (added tokens cut out) to a frequency table. */
export function countWords(
  text: string,
  tokens: readonly string[],
  into: Map<string, number> = new Map(),
): Map<string, number> {
  const parts = splitAdded(text, tokens);
  for (let i = 0; i < parts.length; i += 2) {
    for (const w of preTokenize(parts[i])) into.set(w, (into.get(w) ?? 0) + 1);
  }
  return into;
}

// A max-heap of (count, left, right): highest count first, then the lowest left id, then right id.
class PairHeap {
  private c: number[] = [];
  private a: number[] = [];
  private b: number[] = [];

  get size(): number {
    return this.c.length;
  }

  private better(i: number, j: number): boolean {
    const { c, a, b } = this;
    if (c[i] !== c[j]) return c[i] > c[j];
    if (a[i] !== a[j]) return a[i] < a[j];
    return b[i] < b[j];
  }

  private swap(i: number, j: number): void {
    for (const arr of [this.c, this.a, this.b]) [arr[i], arr[j]] = [arr[j], arr[i]];
  }

  push(count: number, left: number, right: number): void {
    this.c.push(count);
    this.a.push(left);
    this.b.push(right);
    let i = this.c.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.better(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }

  pop(): [number, number, number] | null {
    const n = this.c.length;
    if (n === 0) return null;
    const top: [number, number, number] = [this.c[0], this.a[0], this.b[0]];
    this.swap(0, n - 1);
    this.c.pop();
    this.a.pop();
    this.b.pop();
    let i = 0;
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < n - 1 && this.better(l, m)) m = l;
      if (r < n - 1 && this.better(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
    return top;
  }
}

const KEY = 65536;

/** Learns merges from a word frequency table until the vocabulary is full or no pair is frequent enough. */
export function trainBpe(words: Map<string, number>, o: BpeTrainOptions): BpeModel {
  const addedList = [...o.specials, ...(o.addedTokens ?? [])];
  const target = o.vocabSize - addedList.length;
  if (target < 256) {
    throw new Error(
      `trainBpe: vocabSize ${o.vocabSize} leaves no room for the 256 byte tokens and ${addedList.length} added tokens`,
    );
  }
  if (o.vocabSize > KEY) throw new Error(`trainBpe: vocabSize ${o.vocabSize} is over ${KEY}`);
  const minFreq = o.minFrequency ?? 2;
  const vocab = bytesToUnicode();
  const idOf = new Map(vocab.map((t, i) => [t, i]));
  const symbols: number[][] = [];
  const freq: number[] = [];
  // Sorted so that nothing depends on the table's insertion order.
  for (const w of [...words.keys()].sort()) {
    symbols.push([...w].map((ch) => {
      const id = idOf.get(ch);
      if (id === undefined) throw new Error(`trainBpe: ${JSON.stringify(ch)} is not a byte-level symbol`);
      return id;
    }));
    freq.push(words.get(w) ?? 0);
  }
  const counts = new Map<number, number>();
  const where = new Map<number, Set<number>>();
  symbols.forEach((s, w) => {
    for (let i = 0; i + 1 < s.length; i++) {
      const k = s[i] * KEY + s[i + 1];
      counts.set(k, (counts.get(k) ?? 0) + freq[w]);
      let set = where.get(k);
      if (!set) where.set(k, set = new Set());
      set.add(w);
    }
  });
  const heap = new PairHeap();
  for (const [k, c] of counts) heap.push(c, Math.floor(k / KEY), k % KEY);
  const merges: [string, string][] = [];
  while (vocab.length < target) {
    const top = heap.pop();
    if (!top) break;
    const [c, left, right] = top;
    const k = left * KEY + right;
    if (counts.get(k) !== c) continue; // stale entry
    if (c < minFreq) break;
    const str = vocab[left] + vocab[right];
    let id = idOf.get(str);
    if (id === undefined) {
      id = vocab.length;
      vocab.push(str);
      idOf.set(str, id);
    }
    merges.push([vocab[left], vocab[right]]);
    const delta = new Map<number, number>();
    const bump = (key: number, d: number) => delta.set(key, (delta.get(key) ?? 0) + d);
    for (const w of where.get(k) ?? []) {
      const s = symbols[w];
      const f = freq[w];
      let has = false;
      for (let i = 0; i + 1 < s.length; i++) if (s[i] === left && s[i + 1] === right) has = true;
      if (!has) continue;
      for (let i = 0; i + 1 < s.length; i++) bump(s[i] * KEY + s[i + 1], -f);
      const next: number[] = [];
      for (let i = 0; i < s.length; i++) {
        if (i + 1 < s.length && s[i] === left && s[i + 1] === right) {
          next.push(id);
          i++;
        } else next.push(s[i]);
      }
      symbols[w] = next;
      for (let i = 0; i + 1 < next.length; i++) {
        const nk = next[i] * KEY + next[i + 1];
        bump(nk, f);
        let set = where.get(nk);
        if (!set) where.set(nk, set = new Set());
        set.add(w);
      }
    }
    where.delete(k);
    for (const [key, d] of delta) {
      if (d === 0) continue;
      const n = (counts.get(key) ?? 0) + d;
      if (n > 0) {
        counts.set(key, n);
        heap.push(n, Math.floor(key / KEY), key % KEY);
      } else counts.delete(key);
    }
  }
  const added = addedList.map((content, i) => ({ id: vocab.length + i, content, special: i < o.specials.length }));
  return { vocab: [...vocab, ...addedList], merges, added };
}
