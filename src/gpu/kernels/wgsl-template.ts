// A small template expander for WGSL kernels that come in variants (ggml-webgpu's way: one readable template, a table
// of variants). A template is WGSL with three kinds of directive, each a comment line so that the file still reads
// as WGSL:
//   // #if NAME   // #if !NAME   // #else   // #endif     keep or drop the lines between (nesting allowed)
//   <indent>// #include FILE [NAME=value ...]            FILE's expansion (with those variables), indented by <indent>
// and {{NAME}} placeholders, replaced by the variable's value. Unknown variables and files, unbalanced blocks and
// leftover placeholders are errors. Pure: the caller hands over the files' texts.

/** Template variables: booleans for #if, strings and numbers for {{NAME}}. */
export type TemplateVars = Readonly<Record<string, string | number | boolean>>;

const DIRECTIVE = /^(\s*)\/\/ #(if|else|endif|include)\b\s*(.*)$/;

/** `text` expanded with `vars`; `files` gives the texts of included files by name. */
export function expandTemplate(
  name: string,
  text: string,
  vars: TemplateVars,
  files: Readonly<Record<string, string>>,
  depth = 0,
): string {
  if (depth > 8) throw new Error(`${name}: includes nested too deep`);
  const out: string[] = [];
  // One entry per open #if: whether its lines are kept, and whether the enclosing block keeps lines at all.
  const stack: { keep: boolean; outer: boolean; sawElse: boolean }[] = [];
  const keeping = () => stack.every((s) => s.keep);
  text.split("\n").forEach((line, i) => {
    const m = DIRECTIVE.exec(line);
    const where = `${name}:${i + 1}`;
    if (!m) {
      if (keeping()) out.push(line);
      return;
    }
    const [, indent, kind, arg] = m;
    if (kind === "if") {
      const neg = arg.startsWith("!");
      const v = vars[neg ? arg.slice(1) : arg];
      if (typeof v !== "boolean") throw new Error(`${where}: #if ${arg}: no boolean variable`);
      stack.push({ keep: neg ? !v : v, outer: keeping(), sawElse: false });
    } else if (kind === "else") {
      const top = stack.at(-1);
      if (!top || top.sawElse) throw new Error(`${where}: #else without #if`);
      top.keep = !top.keep;
      top.sawElse = true;
    } else if (kind === "endif") {
      if (!stack.pop()) throw new Error(`${where}: #endif without #if`);
    } else if (keeping()) {
      // "FILE NAME=value ...": the file expanded with those variables added.
      const [file, ...sets] = arg.split(/\s+/);
      const inc = files[file];
      if (inc === undefined) throw new Error(`${where}: #include ${file}: no such file`);
      const local: Record<string, string | number | boolean> = { ...vars };
      for (const kv of sets) {
        const eq = kv.indexOf("=");
        if (eq <= 0) throw new Error(`${where}: #include ${file}: '${kv}' is not NAME=value`);
        local[kv.slice(0, eq)] = kv.slice(eq + 1);
      }
      for (const l of expandTemplate(file, inc.replace(/\n$/, ""), local, files, depth + 1).split("\n")) {
        out.push(l === "" ? "" : indent + l);
      }
    }
  });
  if (stack.length) throw new Error(`${name}: #if without #endif`);
  return out.join("\n").replace(/\{\{(\w+)\}\}/g, (_, k: string) => {
    const v = vars[k];
    if (v === undefined || typeof v === "boolean") throw new Error(`${name}: {{${k}}}: no string or number variable`);
    return String(v);
  });
}
