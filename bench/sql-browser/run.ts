// Browser check of the SQL pool (not part of `npm test`: it needs its own Vite build and the shared
// datasets): builds bench/sql-browser/ with the project's vite.config.ts, serves it with one Spider
// database, opens it in the system Chromium and prints what the page's pool answered.
// Usage: deno run -A bench/sql-browser/run.ts
import { cpSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { launchChromium, serveStatic } from "../../tests/browser/harness.ts";
import { sharedDatasets } from "../../tests/shared.ts";

if (sharedDatasets === null) Deno.exit(0);
const here = fileURLToPath(new URL(".", import.meta.url));
const dist = fileURLToPath(new URL("../out/sql-browser", import.meta.url));
const build = await new Deno.Command("npx", { args: ["vite", "build", here, "--config", "vite.config.ts", "--outDir", dist, "--emptyOutDir", "--logLevel", "warn"], stdout: "inherit", stderr: "inherit" }).output();
if (!build.success) throw new Error("vite build failed");
mkdirSync(`${dist}/db/flight_4`, { recursive: true });
cpSync(`${sharedDatasets}/spider-train/database/flight_4/flight_4.sqlite`, `${dist}/db/flight_4/flight_4.sqlite`);
const server = serveStatic(dist);
const browser = await launchChromium({ webgpu: false });
try {
  const page = await browser.newPage();
  page.on("pageerror", (e) => console.error("pageerror:", e.message));
  await page.goto(server.url);
  await page.waitForFunction(() => document.title === "done", null, { timeout: 120_000 });
  console.log(await page.textContent("#out"));
} finally {
  await browser.close();
  await server.close();
}
