#!/usr/bin/env node
// The formatting check: `deno fmt --check` with deno.json's "fmt" settings (line width 120; TypeScript and JavaScript
// under src, workers, tests, bench, scripts, bin), and with --max-line N also no line of those files or of the WGSL
// kernels wider than N (deno fmt does not wrap comments or strings). Exits 1 and names the files on a failure.
// Usage: node scripts/check-format.mjs [--max-line N] [FILE ...]
// Reformat with: node_modules/deno/deno fmt [FILE ...]
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const deno = join(root, "node_modules", "deno", process.platform === "win32" ? "deno.exe" : "deno");
const args = process.argv.slice(2);
const at = args.indexOf("--max-line");
const maxLine = at >= 0 ? Number(args[at + 1]) : undefined;
const files = args.filter((a, i) => !a.startsWith("--") && (at < 0 || i !== at + 1));
let failed = false;

const fmt = spawnSync(deno, ["fmt", "--check", ...files], {
  cwd: root,
  encoding: "utf8",
  env: { ...process.env, NO_COLOR: "1" },
});
if (fmt.status !== 0) {
  const out = `${fmt.stdout}${fmt.stderr}`;
  const named = [...out.matchAll(/^from (\S+):$/gm)].map((m) => relative(root, m[1]));
  console.error(
    `check-format: deno fmt would change ${named.length || "some"} file(s):\n  ${named.slice(0, 30).join("\n  ")}`,
  );
  console.error(out.split("\n").filter((l) => /^error/.test(l)).join("\n"));
  console.error("run: node_modules/deno/deno fmt");
  failed = true;
}

if (maxLine !== undefined) {
  const EXT = /\.(ts|mjs|js|wgsl)$/;
  const walk = (dir, out = []) => {
    for (const name of readdirSync(dir)) {
      if (name === "node_modules" || name.startsWith(".")) continue;
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p, out);
      else if (EXT.test(name)) out.push(p);
    }
    return out;
  };
  const list = files.length
    ? files.map((f) => join(root, f))
    : ["src", "workers", "tests", "bench", "scripts", "bin"].flatMap((d) => walk(join(root, d)));
  const wide = [];
  for (const f of list) {
    readFileSync(f, "utf8").split("\n").forEach((line, i) => {
      if (line.length > maxLine) wide.push(`${relative(root, f)}:${i + 1} (${line.length})`);
    });
  }
  if (wide.length) {
    console.error(
      `check-format: ${wide.length} line(s) wider than ${maxLine}:\n  ${wide.slice(0, 30).join("\n  ")}${
        wide.length > 30 ? "\n  ..." : ""
      }`,
    );
    failed = true;
  }
}
if (!failed) console.log("check-format: ok");
process.exit(failed ? 1 : 0);
