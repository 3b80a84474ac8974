// SQL highlighting as Lit templates (text nodes only, never innerHTML), so generated SQL — which
// is untrusted text — can never inject markup.
import { html, type TemplateResult } from "lit";

const KEYWORDS = new Set(
  ("select from where group by order having limit offset join inner left right outer full cross on as and or not in " +
    "is null like between case when then else end distinct union all except intersect with asc desc count sum avg min max cast exists " +
    "insert update delete create drop table values into set recursive over partition").split(" "),
);

const TOKEN =
  /(--[^\n]*|\/\*[\s\S]*?\*\/)|('(?:[^']|'')*'?)|("(?:[^"]|"")*"?|`[^`]*`?)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)|(\s+|[^\sA-Za-z0-9_'"`-]+|-)/g;

/** Lit template of `sql` with keywords, strings, numbers and comments in classes kw/str/num/com. */
export function highlightSql(sql: string): TemplateResult[] {
  const out: TemplateResult[] = [];
  for (const m of sql.matchAll(TOKEN)) {
    const [tok, com, str, ident, num, word] = m;
    if (com) out.push(html`<span class="com">${tok}</span>`);
    else if (str) out.push(html`<span class="str">${tok}</span>`);
    else if (ident) out.push(html`<span class="id">${tok}</span>`);
    else if (num) out.push(html`<span class="num">${tok}</span>`);
    else if (word && KEYWORDS.has(word.toLowerCase())) out.push(html`<span class="kw">${tok}</span>`);
    else out.push(html`${tok}`);
  }
  return out;
}
