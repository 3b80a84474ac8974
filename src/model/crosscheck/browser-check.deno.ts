// Checks the browser-only model sources in the system Chromium: UrlSource with the OPFS cache
// (second load makes no request) and DirectoryHandleSource over a real FileSystemDirectoryHandle
// (an OPFS folder). Usage: deno run -A src/model/crosscheck/browser-check.deno.ts
import { chromium } from "playwright-core";
import { fromBf16, toBf16 } from "../half.ts";
import { referenceLogprobs } from "../reference.ts";
import type { RlvrModelApi } from "./browser-entry.web.ts";
import { hfFolderFiles, makeTinyModel } from "../tiny.ts";

const root = new URL("../../../", import.meta.url).pathname;
const bundle = await new Deno.Command(Deno.execPath(), {
  args: [
    "bundle",
    "--platform",
    "browser",
    "-o",
    "/tmp/rlvr-model-bundle.js",
    `${root}src/model/crosscheck/browser-entry.web.ts`,
  ],
  cwd: root,
}).output();
if (!bundle.success) throw new Error(`bundle failed: ${new TextDecoder().decode(bundle.stderr)}`);
const js = await Deno.readFile("/tmp/rlvr-model-bundle.js");

const m = makeTinyModel("qwen3", { seed: 61 });
const files = hfFolderFiles(m, { dtype: "BF16" });
const gets: string[] = [];
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
  const path = new URL(req.url).pathname;
  if (path === "/") {
    return new Response(`<!doctype html><script src="/bundle.js"></script>`, {
      headers: { "content-type": "text/html" },
    });
  }
  if (path === "/bundle.js") return new Response(js, { headers: { "content-type": "text/javascript" } });
  const f = files.get(path.replace(/^\/model\//, ""));
  if (!f) return new Response("not found", { status: 404 });
  if (req.method === "GET") gets.push(path);
  return new Response(req.method === "HEAD" ? null : new Uint8Array(f), {
    headers: { "content-length": String(f.byteLength) },
  });
});
const base = `http://127.0.0.1:${server.addr.port}`;
const browser = await chromium.launch({
  executablePath: Deno.env.get("CHROME_PATH") || "/usr/bin/chromium",
  args: ["--no-sandbox"],
});
try {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${base}/`);
  await page.waitForFunction(() => "rlvrModel" in globalThis);
  const ids = [1, 5, 270, 33, 9, 271, 100];
  const run = () =>
    page.evaluate(async ({ base, ids }) => {
      const M = Reflect.get(globalThis, "rlvrModel") as RlvrModelApi;
      const src = new M.UrlSource(`${base}/model`, { cache: M.opfsCache("rlvr-check") });
      const model = await M.loadHfModel(src);
      return {
        config: model.config,
        lp: M.referenceLogprobs(model.config, model.weights, [ids])[0],
        template: model.chatTemplate,
      };
    }, { base, ids });
  const first = await run();
  const afterFirst = gets.length;
  const second = await run();
  const afterSecond = gets.length;
  // DirectoryHandleSource over a real handle: copy the folder into OPFS, then load through the handle.
  const viaHandle = await page.evaluate(async ({ base, names, ids }) => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle("picked-model", { create: true });
    for (const n of names) {
      const w = await (await dir.getFileHandle(n, { create: true })).createWritable();
      await w.write(await (await fetch(`${base}/model/${n}`)).arrayBuffer());
      await w.close();
    }
    const M = Reflect.get(globalThis, "rlvrModel") as RlvrModelApi;
    const model = await M.loadHfModel(new M.DirectoryHandleSource(dir));
    let missing = "";
    try {
      await new M.DirectoryHandleSource(dir).read("absent.bin");
    } catch (e) {
      missing = String(e);
    }
    return { lp: M.referenceLogprobs(model.config, model.weights, [ids])[0], missing };
  }, { base, names: [...files.keys()], ids });
  const bf16 = makeTinyModel("qwen3", { seed: 61 });
  for (const t of bf16.weights.values()) t.data.set(fromBf16(toBf16(t.data)));
  const want = referenceLogprobs(bf16.config, bf16.weights, [ids])[0];
  const maxDiff = (a: number[]) => Math.max(...a.map((v, i) => Math.abs(v - want[i])));
  const result = {
    chromium: browser.version(),
    firstLoadRequests: afterFirst,
    secondLoadRequests: afterSecond - afterFirst,
    cachedEqual: JSON.stringify(first) === JSON.stringify(second),
    lpDiffUrl: maxDiff(first.lp),
    lpDiffHandle: maxDiff(viaHandle.lp),
    missing: viaHandle.missing,
    errors,
  };
  console.log(JSON.stringify(result, null, 2));
  const ok = result.firstLoadRequests > 0 && result.secondLoadRequests === 0 && result.cachedEqual &&
    result.lpDiffUrl === 0 &&
    result.lpDiffHandle === 0 && /absent\.bin not found in picked folder picked-model/.test(result.missing) &&
    errors.length === 0;
  console.log(ok ? "browser check: ok" : "browser check: FAILED");
  if (!ok) Deno.exitCode = 1;
} finally {
  await browser.close();
  await server.shutdown();
}
