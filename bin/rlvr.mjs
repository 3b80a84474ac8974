#!/usr/bin/env node
// `rlvr`: runs src/cli/main.ts under the Deno that `npm ci` installed (the npm package `deno`),
// with WebGPU, file and network permissions, reading packages from node_modules.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);
let deno;
try {
  deno = join(dirname(require.resolve("deno/package.json")), process.platform === "win32" ? "deno.exe" : "deno");
} catch {
  deno = "";
}
if (!deno || !existsSync(deno)) {
  console.error("rlvr: Deno was not found in node_modules; run `npm ci` in " + root);
  console.log(JSON.stringify({ ok: false, error: "deno not installed" }));
  process.exit(1);
}
const r = spawnSync(
  deno,
  [
    "run",
    "-A",
    "--no-check",
    "--config",
    join(root, "deno.json"),
    join(root, "src", "cli", "main.ts"),
    ...process.argv.slice(2),
  ],
  { stdio: "inherit", env: { XDG_RUNTIME_DIR: "/tmp", DENO_NO_UPDATE_CHECK: "1", ...process.env } },
);
process.exit(r.status ?? 1);
