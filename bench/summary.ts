// The current figures and their trend, from bench/results/records.jsonl.
// Usage: deno run -A bench/summary.ts [--last N] [--docs]
//   prints, per suite, device and engine, the last N records (default 5) with each headline figure and its change
//   from the record before; --docs rewrites the current-figures table of docs/performance.md (the block between its
//   figures markers), which bench/summary.test.ts checks is current.
import { type BenchRecord, readRecords } from "./records.ts";

/**
 * The figures each suite's rows show, ours then the reference's, and the speed ratio they carry: ours / the reference's
 * for rates, the reference's / ours for times (`time`), so that above 1 is always ours faster.
 */
const HEADLINE: Record<string, { figures: string[]; reference: string[]; ratio?: [string, string]; time?: boolean }> = {
  "train-step": {
    figures: ["tok_s", "recompute_tok_s", "peak_bytes", "recompute_peak_bytes"],
    reference: ["torch_tok_s"],
    ratio: ["tok_s", "torch_tok_s"],
  },
  pretrain: { figures: ["tok_s"], reference: ["torch_tok_s"], ratio: ["tok_s", "torch_tok_s"] },
  "grpo-step": {
    figures: ["hub_step_s", "demo_step_s"],
    reference: ["torch_hub_step_s"],
    ratio: ["hub_step_s", "torch_hub_step_s"],
    time: true,
  },
  "dawn-toggles": {
    figures: ["default_ms_b8", "skip_validation_ms_b8", "default_ms_b64", "skip_validation_ms_b64"],
    reference: [],
  },
  decode: {
    figures: ["tok_s_b8", "tok_s_b64", "first_token_ms_b8"],
    reference: ["transformers_tok_s_b8", "transformers_tok_s_b64"],
    ratio: ["tok_s_b8", "transformers_tok_s_b8"],
  },
};

function headline(r: BenchRecord) {
  const h = HEADLINE[r.suite];
  const figures = h?.figures ?? Object.keys(r.figures);
  return { figures, reference: h?.reference ?? Object.keys(r.reference).slice(0, 2), ratio: h?.ratio, time: h?.time };
}

/** A figure for a table: bytes in GB, big numbers grouped, small ones to 3 significant digits. */
export function formatValue(name: string, v: number | undefined): string {
  if (v === undefined) return "";
  if (name.endsWith("bytes")) return `${(v / 1e9).toFixed(2)} GB`;
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString("en-US");
  return String(Number(v.toPrecision(3)));
}

/** Records grouped by suite, device and engine (figures compare only within a group), each in date order. */
export function groups(records: readonly BenchRecord[]): Map<string, BenchRecord[]> {
  const out = new Map<string, BenchRecord[]>();
  for (const r of records) {
    const key = `${r.suite} · ${r.device} · ${r.engine}`;
    out.set(key, [...(out.get(key) ?? []), r]);
  }
  for (const list of out.values()) list.sort((a, b) => Date.parse(a.date) - Date.parse(b.date));
  return new Map([...out].sort(([a], [b]) => a.localeCompare(b)));
}

const ratioOf = (r: BenchRecord, ratio?: [string, string], time = false) =>
  ratio && r.figures[ratio[0]] && r.reference[ratio[1]]
    ? (time ? r.reference[ratio[1]] / r.figures[ratio[0]] : r.figures[ratio[0]] / r.reference[ratio[1]])
    : undefined;

/** The trend: per group the last `last` records, each headline figure with its change from the record before. */
export function trend(records: readonly BenchRecord[], last = 5): string {
  const lines: string[] = [];
  for (const [key, list] of groups(records)) {
    const { figures, reference, ratio, time } = headline(list[list.length - 1]);
    lines.push(`\n${key} (${list.length} record${list.length > 1 ? "s" : ""})`);
    lines.push(
      `| date | commit | ${figures.join(" | ")} | ${reference.map((f) => `ref ${f}`).join(" | ")}${
        ratio ? " | ours / ref" : ""
      } |`,
    );
    lines.push(`|${"---|".repeat(2 + figures.length + reference.length + (ratio ? 1 : 0))}`);
    const shown = list.slice(-last);
    shown.forEach((r, i) => {
      const prev = i > 0 ? shown[i - 1] : list[list.length - shown.length - 1];
      const cell = (name: string, v: number | undefined, p: number | undefined) =>
        formatValue(name, v) +
        (v !== undefined && p ? ` (${v >= p ? "+" : ""}${((v / p - 1) * 100).toFixed(1)}%)` : "");
      const ours = figures.map((f) => cell(f, r.figures[f], prev?.figures[f]));
      const refs = reference.map((f) => formatValue(f, r.reference[f]));
      const q = ratioOf(r, ratio, time);
      lines.push(
        `| ${r.date.slice(0, 10)} | ${r.commit} | ${ours.join(" | ")} | ${refs.join(" | ")}${
          ratio ? ` | ${q === undefined ? "" : q.toFixed(2)} |` : " |"
        }`,
      );
    });
  }
  return lines.join("\n").trimStart();
}

/** Markdown inline code of s, pipes escaped for a table cell. */
const code = (s: string) => `\`${s.replaceAll("|", "\\|")}\``;

/** docs/performance.md's current-figures table: the newest record of each group, with its command. */
export function currentFigures(records: readonly BenchRecord[]): string {
  const rows = [
    "| suite | device · engine | figures (ours) | reference | ours / ref | commit, date | command |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const list of groups(records).values()) {
    const r = list[list.length - 1];
    const { figures, reference, ratio, time } = headline(r);
    const show = (names: string[], o: Record<string, number>) =>
      names.filter((f) => o[f] !== undefined).map((f) => `${f} ${formatValue(f, o[f])}`).join(", ");
    const q = ratioOf(r, ratio, time);
    rows.push(
      `| ${r.suite} | ${r.device} · ${r.engine} | ${show(figures, r.figures)} | ${show(reference, r.reference)} | ${
        q === undefined ? "" : q.toFixed(2)
      } | ${r.commit}, ${r.date.slice(0, 10)} | ${code(r.command)} |`,
    );
  }
  return rows.join("\n");
}

export const DOCS_BEGIN = "<!-- figures:begin (deno run -A bench/summary.ts --docs) -->";
export const DOCS_END = "<!-- figures:end -->";

/** The page with its figures block replaced by `table`; throws if the markers are missing. */
export function withFigures(page: string, table: string): string {
  const a = page.indexOf(DOCS_BEGIN), b = page.indexOf(DOCS_END);
  if (a < 0 || b < a) throw new Error(`docs/performance.md: the markers ${DOCS_BEGIN} ... ${DOCS_END} are missing`);
  return `${page.slice(0, a + DOCS_BEGIN.length)}\n${table}\n${page.slice(b)}`;
}

if (import.meta.main) {
  const root = new URL("..", import.meta.url).pathname;
  const records = readRecords(`${root}bench/results/records.jsonl`);
  const at = Deno.args.indexOf("--last");
  const last = at >= 0 ? Number(Deno.args[at + 1]) : 5;
  if (Deno.args.includes("--docs")) {
    const path = `${root}docs/performance.md`;
    Deno.writeTextFileSync(path, withFigures(Deno.readTextFileSync(path), currentFigures(records)));
    console.log(`${path}: figures from ${records.length} records`);
  } else {
    console.log(trend(records, last));
  }
}
