// A tolerant SQLite tokenizer: every character of the input lands in exactly one token, so spans
// map back to the text, and unterminated strings, quoted names and comments run to the end
// instead of failing (model output is often cut off mid-token).

/** What a token is; keywords are words, told apart by the parser from their upper-cased text. */
export type TokenKind = "word" | "qident" | "string" | "number" | "blob" | "param" | "op" | "comment" | "ws";

/** One token: `text` is `src.slice(start, end)`. */
export interface Token {
  kind: TokenKind;
  text: string;
  start: number;
  end: number;
  /** A string, quoted name or block comment that reached the end of the input unclosed. */
  unterminated?: boolean;
}

const TWO_CHAR_OPS = new Set(["<=", ">=", "<>", "!=", "==", "||", "<<", ">>", "->"]);

function isWordStart(c: string): boolean {
  return /[A-Za-z_\u0080-\uffff]/.test(c);
}

function isWordChar(c: string): boolean {
  return /[A-Za-z0-9_$\u0080-\uffff]/.test(c);
}

/** Splits `src` into tokens covering it end to end; never throws. */
export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const push = (kind: TokenKind, end: number, unterminated = false) => {
    const t: Token = { kind, text: src.slice(i, end), start: i, end };
    if (unterminated) t.unterminated = true;
    out.push(t);
    i = end;
  };
  while (i < src.length) {
    const c = src[i];
    const d = src[i + 1] ?? "";
    if (/\s/.test(c)) {
      let j = i + 1;
      while (j < src.length && /\s/.test(src[j])) j++;
      push("ws", j);
    } else if (c === "-" && d === "-") {
      const nl = src.indexOf("\n", i);
      push("comment", nl < 0 ? src.length : nl);
    } else if (c === "/" && d === "*") {
      const close = src.indexOf("*/", i + 2);
      push("comment", close < 0 ? src.length : close + 2, close < 0);
    } else if ((c === "x" || c === "X") && d === "'") {
      const close = src.indexOf("'", i + 2);
      push("blob", close < 0 ? src.length : close + 1, close < 0);
    } else if (c === "'" || c === '"' || c === "`") {
      // A doubled quote escapes itself: 'it''s', "a""b".
      let j = i + 1;
      let closed = false;
      while (j < src.length) {
        if (src[j] === c) {
          if (src[j + 1] === c) {
            j += 2;
            continue;
          }
          closed = true;
          j++;
          break;
        }
        j++;
      }
      push(c === "'" ? "string" : "qident", j, !closed);
    } else if (c === "[") {
      const close = src.indexOf("]", i + 1);
      push("qident", close < 0 ? src.length : close + 1, close < 0);
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(d))) {
      const m = /^(?:0[xX][0-9A-Fa-f]+|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)/.exec(
        src.slice(i, i + 64),
      );
      let j = i + (m ? m[0].length : 1);
      // "1st" is not a number followed by a word in SQLite either; keep it one token.
      while (j < src.length && isWordChar(src[j])) j++;
      push("number", j);
    } else if (isWordStart(c)) {
      let j = i + 1;
      while (j < src.length && isWordChar(src[j])) j++;
      push("word", j);
    } else if (c === "?" || ((c === ":" || c === "@" || c === "$") && isWordStart(d))) {
      let j = i + 1;
      while (j < src.length && isWordChar(src[j])) j++;
      push("param", j);
    } else if (TWO_CHAR_OPS.has(c + d)) {
      push("op", i + 2);
    } else {
      push("op", i + 1);
    }
  }
  return out;
}

/** Tokens without whitespace and comments. */
export function significant(tokens: readonly Token[]): Token[] {
  return tokens.filter((t) => t.kind !== "ws" && t.kind !== "comment");
}

/** True when `t` is the word `kw` (case-insensitive). */
export function isWord(t: Token | undefined, kw: string): boolean {
  return t !== undefined && t.kind === "word" && t.text.toUpperCase() === kw;
}

/**
 * The text of `src` with whitespace runs outside strings and quoted names squeezed to one space
 * and trimmed: Spider's golds are written `age  >  56`. Line comments keep their newline.
 */
export function squeezeSpaces(src: string): string {
  const toks = tokenize(src);
  let s = "";
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k];
    if (t.kind === "ws") {
      if (s !== "" && k < toks.length - 1) {
        s += toks[k - 1]?.kind === "comment" && toks[k - 1].text.startsWith("--") ? "\n" : " ";
      }
    } else {
      s += t.text;
    }
  }
  return s.trim();
}
