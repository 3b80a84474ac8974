// The WebGPU trainer in Chromium (Dawn/Tint compiles every WGSL kernel it uses; SwiftShader runs
// them on a CPU machine): forward logprobs and LoRA gradients against the float64 reference on
// three architectures, and a GRPO step, in a page built from tests/browser/trainer-page.ts.
import { assert } from "../assert.ts";
import { launchChromium, ROOT, serveStatic, watchErrors } from "./harness.ts";

Deno.test({
  name: "browser: WebGPU trainer logprobs and LoRA gradients match the float64 reference on Chromium",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "trainer-page-" });
    const bundle = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--platform",
        "browser",
        "-o",
        `${dir}/trainer-page.js`,
        `${ROOT}/tests/browser/trainer-page.ts`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert(bundle.code === 0, `deno bundle failed: ${new TextDecoder().decode(bundle.stderr)}`);
    await Deno.writeTextFile(
      `${dir}/index.html`,
      `<!doctype html><meta charset="utf-8"><title>trainer</title><script type="module" src="/trainer-page.js"></script>`,
    );
    const server = serveStatic(dir);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const errors = watchErrors(page);
      await page.goto(server.url);
      await page.waitForFunction(() => (globalThis as { __trainer?: unknown }).__trainer !== undefined, undefined, {
        timeout: 300_000,
      });
      const out = await page.evaluate(() =>
        (globalThis as {
          __trainer?: {
            results?: {
              arch: string;
              logpMaxErr: number;
              fdMaxRelErr: number;
              fdChecked: number;
              stepSkipped: boolean;
            }[];
            error?: string;
          };
        }).__trainer
      );
      assert(out !== undefined && !out.error, `page error: ${out?.error}`);
      const results = out.results ?? [];
      assert(results.length === 3, "three architectures");
      for (const r of results) {
        console.log(
          `${r.arch}: max |logp - ref| ${
            r.logpMaxErr.toExponential(2)
          }, ${r.fdChecked} FD checks, max |grad - fd| / max|grad| ${r.fdMaxRelErr.toExponential(2)}`,
        );
        assert(r.logpMaxErr < 2e-3, `${r.arch} logprobs`);
        assert(r.fdMaxRelErr < 1e-3, `${r.arch} gradients`);
        assert(r.fdChecked === 28 && !r.stepSkipped, `${r.arch}: every tensor checked, the GRPO step applied`);
      }
      assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
    } finally {
      await browser.close();
      await server.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
