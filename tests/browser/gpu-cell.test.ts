// The page on SwiftShader: the notebook renders, the GPU cell describes the adapter, and the
// one-click benchmark runs real WGSL in the GPU worker and passes its self-check.
import { assert } from "../assert.ts";
import { launchChromium, screenshot, serveStatic, watchErrors } from "./harness.ts";

Deno.test("page: GPU cell fills in on SwiftShader and the matmul benchmark runs", async () => {
  const server = serveStatic();
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = watchErrors(page);
    await page.goto(server.url);
    await page.getByTestId("nb-title").waitFor();
    await page.getByTestId("gpu-info").waitFor({ timeout: 30_000 });
    const arch = await page.getByTestId("gpu-arch").textContent();
    assert(arch !== null && arch.length > 0, "architecture is shown");
    const binding = await page.getByTestId("gpu-max-binding").textContent();
    assert(/\d+ MiB/.test(binding ?? ""), `storage limit shown: ${binding}`);
    for (const f of ["shader-f16", "subgroups", "timestamp-query"]) {
      const t = await page.getByTestId(`feature-${f}`).textContent();
      assert(/yes|no/.test(t ?? ""), `feature ${f} reported`);
    }
    await page.getByTestId("bench-run").click();
    await page.getByTestId("bench-gflops").waitFor({ timeout: 120_000 });
    const gflops = parseFloat((await page.getByTestId("bench-gflops").textContent()) ?? "");
    assert(gflops > 0, `benchmark figure ${gflops}`);
    assert(
      (await page.getByTestId("bench-check").textContent()) === "passed",
      "self-check against the float64 reference passed",
    );
    console.log(
      `SwiftShader (${arch}): matmul 512^3 ${gflops} GFLOP/s; screenshot ${await screenshot(page, "gpu-cell")}`,
    );
    assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
  } finally {
    await browser.close();
    await server.close();
  }
});

Deno.test("page: without WebGPU the GPU cell says so and how to enable it", async () => {
  const server = serveStatic();
  const browser = await launchChromium({ webgpu: false });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 700 } });
    await page.goto(server.url);
    const msg = page.getByTestId("no-webgpu");
    const gotInfo = page.getByTestId("gpu-info");
    await Promise.race([msg.waitFor({ timeout: 30_000 }), gotInfo.waitFor({ timeout: 30_000 })]);
    if (await gotInfo.isVisible()) {
      console.log("NOTICE: this Chromium exposes WebGPU even with it disabled by flags; fallback not exercised");
      return;
    }
    const text = (await msg.textContent()) ?? "";
    assert(/No WebGPU/.test(text) && /enable-unsafe-webgpu/.test(text), `explains how to enable WebGPU: ${text}`);
    await screenshot(page, "no-webgpu");
  } finally {
    await browser.close();
    await server.close();
  }
});
