// Gold SQL rewritten as a Chain of CTEs, keeping the gold's own text wherever it can: uncorrelated
// subqueries become steps, WHERE conjuncts that read one table become a filter step on it, a join
// becomes a step projecting the columns the rest needs, grouping (and HAVING) a step, ORDER BY with
// LIMIT a step, set operations a step per operand; the final SELECT projects the answer. No
// execution here: the caller runs each candidate against the gold and keeps the first that
// returns the same rows (rlvr cocte).
import type { CteStep } from "./cocte.ts";
import {
  correlated,
  key,
  outputNames,
  project,
  RewriteError,
  type SrcInfo,
  subName,
  unquoteName,
  usesQualifier,
} from "./cocte-analysis.ts";
import { commentOf, exprName, ident, NameAllocator, renderChain } from "./cocte-names.ts";
import {
  aggregates,
  type ColumnRef,
  columnRefs,
  conjuncts,
  hasPositionalTerm,
  hasStar,
  replaceSpans,
  splitAlias,
  subqueries,
} from "./sql-expr.ts";
import { type Core, parseSelect, type Source } from "./sql-struct.ts";
import { squeezeSpaces } from "./sql-lex.ts";

/** A rewrite a candidate may leave out (the fallbacks when the full one does not return the gold's rows). */
export type RewriteFeature = "subquery" | "pushdown" | "join" | "group" | "order";

/** Options of the rewrite. */
export interface RewriteOptions {
  /** Column names per table (any case). Without it, unqualified names in joins and correlation are not resolved. */
  schema?: Readonly<Record<string, readonly string[]>>;
  /** Rewrites to leave out. */
  skip?: readonly RewriteFeature[];
}

/** A chain, or why none was built. */
export type Rewrite = { ok: true; cocte: string; steps: CteStep[]; final: string } | { ok: false; reason: string };

class Ctx {
  readonly steps: CteStep[] = [];
  readonly names: NameAllocator;
  readonly schema: Map<string, Set<string>> | null;
  readonly skip: Set<RewriteFeature>;

  constructor(opts: RewriteOptions) {
    this.schema = opts.schema
      ? new Map(
        Object.entries(opts.schema).map(([t, cs]) => [t.toLowerCase(), new Set(cs.map((c) => c.toLowerCase()))]),
      )
      : null;
    this.names = new NameAllocator(this.schema?.keys() ?? []);
    this.skip = new Set(opts.skip ?? []);
  }

  /** A step for `sql` named from `base`, unless `sql` only reads a step whole (then that step). */
  step(sql: string, base: string, comment: string): string {
    const m = /^SELECT \* FROM ([A-Za-z_][A-Za-z0-9_]*)$/.exec(sql);
    if (m && this.steps.some((s) => s.name === m[1])) return m[1];
    const name = this.names.alloc(base);
    this.steps.push({ name, sql, comment });
    return name;
  }
}

/** The gold as a chain of CTEs (the fullest rewrite), or why not. */
export function toChainOfCtes(gold: string, opts: RewriteOptions = {}): Rewrite {
  return chainCandidates(gold, opts)[0];
}

/** Ordered fallback sets: the full rewrite first, then ones that leave out the riskier rewrites. */
const FALLBACKS: readonly (readonly RewriteFeature[])[] = [
  [],
  ["order"],
  ["group"],
  ["join"],
  ["group", "order"],
  ["subquery"],
  ["join", "group", "order"],
  ["pushdown"],
  ["pushdown", "join", "group", "order"],
];

/** Distinct candidate chains, fullest first; one failure when none could be built. */
export function chainCandidates(gold: string, opts: RewriteOptions = {}): Rewrite[] {
  const out: Rewrite[] = [];
  const seen = new Set<string>();
  let failure = "";
  for (const extra of FALLBACKS) {
    const r = rewriteOnce(gold, { ...opts, skip: [...(opts.skip ?? []), ...extra] });
    if (!r.ok) failure ||= r.reason;
    else if (!seen.has(r.cocte)) {
      seen.add(r.cocte);
      out.push(r);
    }
  }
  return out.length ? out : [{ ok: false, reason: failure || "no rewrite" }];
}

function rewriteOnce(gold: string, opts: RewriteOptions): Rewrite {
  const sql = typeof gold === "string" ? gold.trim().replace(/[\s;]+$/, "") : "";
  if (sql === "") return { ok: false, reason: "empty query" };
  if (/^\s*WITH\b/i.test(sql)) return { ok: false, reason: "the query already has a WITH clause" };
  const ctx = new Ctx(opts);
  try {
    let final = decompose(sql, ctx, true);
    if (ctx.steps.length === 0) {
      wrap(sql, ctx);
      final = wrapFinal(sql, ctx);
    }
    return { ok: true, cocte: renderChain(ctx.steps, final), steps: ctx.steps, final };
  } catch (e) {
    if (e instanceof RewriteError) return { ok: false, reason: e.message };
    return { ok: false, reason: `internal: ${e instanceof Error ? e.message : String(e)}` };
  }
}

// A single simple SELECT with no step of its own: its one table becomes a step, read whole.
function wrap(sql: string, ctx: Ctx): void {
  const sel = parseSelect(sql);
  const core = sel?.parts.length === 1 ? sel.parts[0] : null;
  const src = core?.from?.sources;
  if (!core || !src || src.length !== 1 || src[0].kind !== "table") {
    throw new RewriteError(
      src && src.length > 1 ? "a correlated subquery over a join: no step can be split off" : "no step to make",
    );
  }
  const s = src[0];
  const raw = sql.slice(s.span.start, s.span.end);
  ctx.step(`SELECT * FROM ${squeezeSpaces(raw)}`, `${s.table}_rows`, `the rows of ${s.table}`);
}

function wrapFinal(sql: string, ctx: Ctx): string {
  const sel = parseSelect(sql)!;
  const core = sel.parts[0];
  const s = core.from!.sources[0];
  const name = ctx.steps[ctx.steps.length - 1].name;
  const alias = s.alias ?? (usesQualifier(sql, s.table) ? s.table : null);
  const from = `${name}${alias ? ` AS ${ident(alias)}` : ""}`;
  return squeezeSpaces(sql.slice(0, s.span.start) + from + sql.slice(s.span.end));
}

/** Decomposes one SELECT statement: its steps go to `ctx`, its final statement is returned. */
function decompose(sql: string, ctx: Ctx, top = false): string {
  const sel = parseSelect(sql);
  if (!sel) {
    throw new RewriteError(
      /^\s*with\b/i.test(sql) ? "a WITH clause inside the query" : "not a SELECT this rewriter understands",
    );
  }
  if (sel.parts.length === 1) return decomposeCore(sql, sel.parts[0], ctx, top);
  const names = sel.parts.map((p, i) => {
    const text = sql.slice(p.span.start, p.span.end);
    const f = decompose(text, ctx);
    return ctx.step(
      f,
      `${sel.parts[i].from?.sources[0]?.table || "part"}_part_${i + 1}`,
      `operand ${i + 1} of ${sel.ops[Math.max(0, i - 1)]}: ${commentOf(text, 70)}`,
    );
  });
  let final = `SELECT * FROM ${names[0]}`;
  for (let i = 1; i < names.length; i++) final += ` ${sel.ops[i - 1]} SELECT * FROM ${names[i]}`;
  if (sel.orderBy) final += ` ORDER BY ${squeezeSpaces(sql.slice(sel.orderBy.start, sel.orderBy.end))}`;
  if (sel.limit) final += ` LIMIT ${squeezeSpaces(sql.slice(sel.limit.start, sel.limit.end))}`;
  return final;
}

function decomposeCore(sql: string, core: Core, ctx: Ctx, top: boolean): string {
  const slice = (s: { start: number; end: number } | null) => (s ? squeezeSpaces(sql.slice(s.start, s.end)) : null);
  const sources: Source[] = core.from?.sources ?? [];
  if (sources.length === 0) return squeezeSpaces(sql);
  let items = core.items.map((s) => slice(s)!);
  const origItems = [...items];
  let where = slice(core.where);
  let groupBy = slice(core.groupBy);
  let having = slice(core.having);
  let orderBy = slice(core.orderBy);
  let limit = slice(core.limit);
  const srcText = sources.map((s) => slice(s.target)!);
  const onText = sources.map((s) => slice(s.on));
  const usingText = sources.map((s) => slice(s.using));
  const whole = squeezeSpaces(sql);
  // Keep the qualifier every other clause uses: the alias, or the table name itself when it qualifies columns.
  const aliasOf = sources.map((s) => s.alias ?? (s.kind === "table" && usesQualifier(whole, s.table) ? s.table : null));
  let info: SrcInfo[] = sources.map((s) => ({
    key: (s.alias ?? s.table).toLowerCase(),
    cols: s.kind === "table"
      ? ctx.schema?.get(s.table.toLowerCase()) ?? null
      : outputNames(sql.slice(s.target.start + 1, s.target.end - 1)),
  }));
  for (const s of sources) if (s.table) ctx.names.take(s.table);
  const sourceText = (i: number) =>
    `${srcText[i]}${
      aliasOf[i] && aliasOf[i]!.toLowerCase() !== srcText[i].toLowerCase() ? ` AS ${ident(aliasOf[i]!)}` : ""
    }`;
  const fromText = () =>
    sourceText(0) + sources.slice(1).map((s, j) => {
      const i = j + 1;
      return `${s.join === "," ? "," : ` ${s.join}`} ${sourceText(i)}${onText[i] ? ` ON ${onText[i]}` : ""}${
        usingText[i] ? ` ${usingText[i]}` : ""
      }`;
    }).join("");
  const isColumn = (name: string, dq: boolean) => {
    const n = name.toLowerCase();
    if (info.some((s) => s.cols?.has(n))) return true;
    // A double-quoted name that is no column is a string to SQLite; a bare word may be an alias or an outer column.
    return !dq;
  };
  const natural = sources.some((s) => s.using || /NATURAL/.test(s.join));
  const owner = (r: ColumnRef): number => {
    if (r.qualifier !== null) return info.findIndex((s) => s.key === r.qualifier!.toLowerCase());
    const c = r.column.toLowerCase();
    const hits = info.map((s, i) => (s.cols?.has(c) ? i : -1)).filter((i) => i >= 0);
    if (hits.length === 1 || (hits.length > 1 && natural)) return hits[0];
    if (hits.length === 0 && info.length === 1 && info[0].cols === null) return 0;
    return -2;
  };
  const refsOf = (text: string | null) => (text ? columnRefs(text, isColumn) : []);

  // Aliases in ORDER BY (they win there), HAVING and GROUP BY (when no column has the name) read as their expressions.
  const aliases = new Map<string, string>();
  for (const it of items) {
    const { expr, alias } = splitAlias(it);
    if (alias) aliases.set(alias.toLowerCase(), expr);
  }
  const unalias = (text: string | null, aliasWins: boolean) => {
    if (!text || aliases.size === 0) return text;
    const edits = columnRefs(text, () => true).filter((r) =>
      r.qualifier === null && aliases.has(r.column.toLowerCase()) && (aliasWins || owner(r) < 0)
    )
      .map((r) => {
        const e = aliases.get(r.column.toLowerCase())!;
        return { span: r.span, text: /^[A-Za-z_][\w.]*(\([^()]*\))?$/.test(e) ? e : `(${e})` };
      });
    return replaceSpans(text, edits);
  };
  orderBy = unalias(orderBy, true);
  having = unalias(having, false);
  groupBy = unalias(groupBy, false);

  // 1. Uncorrelated subqueries in expressions become steps.
  let hasCorrelated = false;
  const extract = (text: string | null): string | null => {
    if (!text) return text;
    const edits: { span: { start: number; end: number }; text: string }[] = [];
    for (const sub of subqueries(text)) {
      const inner = text.slice(sub.start + 1, sub.end - 1).trim();
      if (correlated(inner, info, ctx.schema)) {
        hasCorrelated = true;
        continue;
      }
      if (ctx.skip.has("subquery")) continue;
      const name = ctx.step(decompose(inner, ctx), subName(inner), `subquery: ${commentOf(inner, 80)}`);
      edits.push({ span: sub, text: `(SELECT * FROM ${name})` });
    }
    return replaceSpans(text, edits);
  };
  items = items.map((t) => extract(t)!);
  where = extract(where);
  having = extract(having);
  // 2. Subqueries in FROM.
  sources.forEach((s, i) => {
    if (s.kind !== "subquery" || ctx.skip.has("subquery")) return;
    const inner = sql.slice(s.target.start + 1, s.target.end - 1).trim();
    srcText[i] = ctx.step(
      decompose(inner, ctx),
      s.alias ?? subName(inner),
      `derived table${s.alias ? ` ${s.alias}` : ""}: ${commentOf(inner, 70)}`,
    );
  });

  // 3. WHERE conjuncts that read one table filter that table first (not the null side of an outer join).
  const outerJoin = sources.some((s) => /RIGHT|FULL/.test(s.join));
  if (where && !ctx.skip.has("pushdown") && !outerJoin) {
    const keep: string[] = [];
    const pushed = new Map<number, string[]>();
    for (const c of conjuncts(where)) {
      const owners = new Set(refsOf(c).map(owner));
      const [i] = [...owners];
      if (owners.size !== 1 || i < 0 || /LEFT/.test(sources[i].join) || (hasCorrelated && subqueries(c).length > 0)) {
        keep.push(c);
      } else pushed.set(i, [...(pushed.get(i) ?? []), c]);
    }
    for (const [i, cs] of [...pushed].sort((a, b) => a[0] - b[0])) {
      const label = sources[i].table || sources[i].alias || "rows";
      srcText[i] = ctx.step(
        `SELECT * FROM ${sourceText(i)} WHERE ${cs.join(" AND ")}`,
        `filtered_${label}`,
        `${label} rows where ${commentOf(cs.join(" AND "))}`,
      );
    }
    where = keep.length ? keep.join(" AND ") : null;
  }

  // After a step that projects, the chain reads that step alone, its columns known in order.
  let currentCols: string[] | null = null;

  // 4. A join becomes a step projecting the columns the other clauses read (all of them under SELECT *).
  const rest = () => [...items, groupBy, having, orderBy];
  if (sources.length > 1 && !ctx.skip.has("join") && !hasCorrelated && items.length === 1 && items[0] === "*") {
    const tables = sources.map((s) => s.table || s.alias || "rows");
    const name = ctx.step(
      `SELECT * FROM ${fromText()}${where ? ` WHERE ${where}` : ""}`,
      tables.slice(0, 3).join("_"),
      `join ${tables.join(", ")}${where ? ` where ${commentOf(where, 60)}` : ""}`,
    );
    where = null;
    reset(name, null);
  }
  if (sources.length > 1 && !ctx.skip.has("join") && !hasCorrelated && !items.some(hasStar)) {
    // Equality between columns of two sources joins them; any other condition filters the joined rows next.
    const joinConds: string[] = [];
    const postConds: string[] = [];
    for (const c of where ? conjuncts(where) : []) {
      const rs = refsOf(c);
      const eq = rs.length === 2 && owner(rs[0]) !== owner(rs[1]) && /^[^=<>!]+=[^=<>!]+$/.test(c) &&
        aggregates(c).length === 0 && subqueries(c).length === 0;
      (eq ? joinConds : postConds).push(c);
    }
    const post = postConds.length ? postConds.join(" AND ") : null;
    const refs = [...rest(), post].map(refsOf);
    if (refs.every((rs) => rs.every((r) => owner(r) >= 0))) {
      // A top-level join read by nothing but the result columns keeps its join keys too, so its step shows how rows matched
      // (and is not the gold itself with another SELECT on top).
      const bare = top && !groupBy && !having && !orderBy && !post && !limit;
      const keys = bare
        ? [...onText, ...joinConds].flatMap((t) => (t ? refsOf(t).filter((r) => owner(r) >= 0).slice(0, 1) : []))
        : [];
      const proj = project([...refs.flat(), ...keys], owner, sources);
      const on = joinConds.join(" AND ");
      const body = `SELECT ${proj.list.length ? proj.list.join(", ") : "*"} FROM ${fromText()}${
        on ? ` WHERE ${on}` : ""
      }`;
      const tables = sources.map((s) => s.table || s.alias || "rows");
      const name = ctx.step(
        body,
        tables.slice(0, 3).join("_"),
        `join ${tables.join(", ")}${on ? ` on ${commentOf(on, 60)}` : ""}`,
      );
      const rename = (
        text: string | null,
        rs: ColumnRef[],
      ) => (text ? replaceSpans(text, rs.map((r) => ({ span: r.span, text: proj.name(r) }))) : text);
      const n = items.length;
      items = items.map((t, k) => rename(t, refs[k])!);
      [groupBy, having, orderBy] = [
        rename(groupBy, refs[n]),
        rename(having, refs[n + 1]),
        rename(orderBy, refs[n + 2]),
      ];
      const postRenamed = rename(post, refs[n + 3]);
      where = null;
      reset(name, proj.outputs);
      if (postRenamed) {
        reset(
          ctx.step(
            `SELECT * FROM ${name} WHERE ${postRenamed}`,
            `${name}_filtered`,
            `joined rows where ${commentOf(post!, 70)}`,
          ),
          proj.outputs,
        );
      }
    }
  }

  function reset(name: string, cols: Set<string> | null) {
    currentCols = cols ? [...cols] : null;
    sources.splice(1);
    srcText.splice(0, srcText.length, name);
    aliasOf.splice(0, aliasOf.length, null);
    info = [{ key: name.toLowerCase(), cols: cols ? new Set(cols) : null }];
  }

  // 5. Grouping (and HAVING) become steps.
  const aggIn = (t: string | null) => (t ? aggregates(t) : []);
  const anyAgg = () => [...items, having, orderBy].some((t) => aggIn(t).length > 0);
  const groupable = !ctx.skip.has("group") && !hasCorrelated && !items.some(hasStar) &&
    !(groupBy && hasPositionalTerm(groupBy));
  if (groupable && (groupBy || (anyAgg() && (having || limit)))) {
    const texts = [...items, having, orderBy];
    const aggNames = new Map<string, string>();
    const used = new Set<string>();
    const aggList: string[] = [];
    // An aggregate that a result column names with AS keeps that name.
    for (const it of items) {
      const { expr, alias } = splitAlias(it);
      const a = aggIn(expr);
      if (alias && a.length === 1 && a[0].start === 0 && a[0].end === expr.length && !aggNames.has(key(expr))) {
        aggNames.set(key(expr), ident(alias));
        used.add(alias.toLowerCase());
        aggList.push(`${expr} AS ${ident(alias)}`);
      }
    }
    const refs = texts.map((
      t,
    ) => (t ? refsOf(t).filter((r) => !aggIn(t).some((a) => r.span.start >= a.start && r.span.end <= a.end)) : []));
    if (refs.every((rs) => rs.every((r) => owner(r) >= 0))) {
      for (const t of texts) {
        for (const a of aggIn(t)) {
          const e = t!.slice(a.start, a.end);
          if (aggNames.has(key(e))) continue;
          let n = exprName(e);
          for (let i = 2; used.has(n); i++) n = `${exprName(e)}_${i}`;
          used.add(n);
          aggNames.set(key(e), n);
          aggList.push(`${e} AS ${n}`);
        }
      }
      const proj = project(refs.flat(), owner, sources, used);
      const body = `SELECT ${[...proj.list, ...aggList].join(", ")} FROM ${fromText()}${
        where ? ` WHERE ${where}` : ""
      }${groupBy ? ` GROUP BY ${groupBy}` : ""}`;
      const keyName = groupBy ? `per_${exprName(`x(${groupBy.split(",")[0]})`).replace(/^x_/, "")}` : "totals";
      const name = ctx.step(
        body,
        keyName,
        groupBy
          ? `one row per ${commentOf(groupBy, 50)} with ${
            commentOf(aggList.map((a) => a.split(" AS ")[0]).join(", "), 50) || "its key"
          }`
          : `totals: ${commentOf(aggList.join(", "), 70)}`,
      );
      const rename = (text: string | null, rs: ColumnRef[]) =>
        text
          ? replaceSpans(text, [
            ...rs.map((r) => ({ span: r.span, text: proj.name(r) })),
            ...aggIn(text).map((a) => ({ span: a, text: aggNames.get(key(text.slice(a.start, a.end)))! })),
          ])
          : text;
      items = items.map((t, k) => rename(t, refs[k])!);
      having = rename(having, refs[items.length]);
      orderBy = rename(orderBy, refs[items.length + 1]);
      where = null;
      groupBy = null;
      reset(name, new Set([...proj.outputs, ...used]));
      if (having) {
        reset(
          ctx.step(`SELECT * FROM ${name} WHERE ${having}`, `${name}_kept`, `groups where ${commentOf(having, 70)}`),
          new Set([...proj.outputs, ...used]),
        );
        having = null;
      }
    }
  }

  // 6. ORDER BY ... LIMIT becomes a step (not under DISTINCT or an aggregate still to come: LIMIT applies after them).
  if (
    limit && !ctx.skip.has("order") && !core.distinct && sources.length === 1 && !hasCorrelated && !anyAgg() &&
    !groupBy && !having && !(orderBy && hasPositionalTerm(orderBy))
  ) {
    const n = /^\d+$/.test(limit) ? limit : null;
    const body = `SELECT * FROM ${sourceText(0)}${where ? ` WHERE ${where}` : ""}${
      orderBy ? ` ORDER BY ${orderBy}` : ""
    } LIMIT ${limit}`;
    srcText[0] = ctx.step(
      body,
      n === "1" ? "top_row" : n ? `top_${n}` : "limited",
      `${orderBy ? `ordered by ${commentOf(orderBy, 60)}, ` : ""}${
        n === "1" ? "the first row" : `the first ${n ?? limit} rows`
      }`,
    );
    where = null;
    if (n === "1") orderBy = null;
    limit = null;
  }

  // 7. The final SELECT. Inside a subquery or a set operand, one that only restates its step's columns is that step.
  const cols = currentCols as string[] | null;
  if (
    !top && cols && !core.distinct && !where && !groupBy && !having && !orderBy && !limit && srcText.length === 1 &&
    !aliasOf[0] &&
    items.length === cols.length && items.every((t, k) => unquoteName(t).toLowerCase() === cols[k])
  ) {
    return `SELECT * FROM ${srcText[0]}`;
  }
  // Result columns keep their names where a rename changed a plain column.
  items = items.map((t, k) => {
    const a = splitAlias(t);
    if (a.alias !== null && a.expr === a.aliasRaw) return a.expr;
    const o = splitAlias(origItems[k]);
    const refs = o.alias ? [] : columnRefs(o.expr, () => true);
    const plain = refs.length === 1 && refs[0].span.start === 0 && refs[0].span.end === o.expr.length;
    return plain && t !== origItems[k] && t.toLowerCase() !== refs[0].raw.toLowerCase() ? `${t} AS ${refs[0].raw}` : t;
  });
  return `SELECT ${core.distinct ? "DISTINCT " : ""}${items.join(", ")} FROM ${fromText()}${
    where ? ` WHERE ${where}` : ""
  }` +
    `${groupBy ? ` GROUP BY ${groupBy}` : ""}${having ? ` HAVING ${having}` : ""}${
      orderBy ? ` ORDER BY ${orderBy}` : ""
    }${limit ? ` LIMIT ${limit}` : ""}`;
}
