// <rl-cell-gpu>: what the user's GPU can do — adapter, the features this project uses, storage
// limits — and a one-click matmul micro-benchmark. All GPU work happens in the GPU worker.
import { html, LitElement, nothing } from "lit";
import type { GpuProbe, MatmulBenchResult } from "../../workers/gpu.api.ts";
import { Comlink, gpuWorker } from "./gpu-client.ts";
import { cellStyles } from "./styles.ts";

const FEATURE_NOTES: Record<string, string> = {
  "shader-f16": "half-precision storage and math (faster, half the memory)",
  subgroups: "subgroup reductions in kernels",
  "timestamp-query": "per-kernel GPU timings",
};

/** The matmul check measured this device (the run plan estimates times from it). */
export class GpuSpeedEvent extends Event {
  constructor(readonly gflops: number) {
    super("gpu-speed", { bubbles: true, composed: true });
  }
}

type BenchState =
  | { kind: "idle" }
  | { kind: "running"; fraction: number }
  | { kind: "done"; result: MatmulBenchResult }
  | { kind: "error"; message: string };

export class RlCellGpu extends LitElement {
  static override properties = { probe: { state: true }, bench: { state: true } };
  static override styles = [cellStyles];

  probe: GpuProbe | null = null;
  bench: BenchState = { kind: "idle" };

  override connectedCallback(): void {
    super.connectedCallback();
    if (!this.probe) void this.runProbe();
  }

  private async runProbe(): Promise<void> {
    if (typeof Worker === "undefined") {
      this.probe = { available: false, reason: "this page cannot start workers" };
      return;
    }
    try {
      this.probe = await gpuWorker().probe();
    } catch (e) {
      this.probe = { available: false, reason: e instanceof Error ? e.message : String(e) };
    }
  }

  private async runBench(): Promise<void> {
    this.bench = { kind: "running", fraction: 0 };
    try {
      const result = await gpuWorker().benchmarkMatmul(
        512,
        Comlink.proxy((fraction: number) => {
          this.bench = { kind: "running", fraction };
        }),
      );
      this.bench = { kind: "done", result };
      this.dispatchEvent(new GpuSpeedEvent(result.gflops));
    } catch (e) {
      this.bench = { kind: "error", message: e instanceof Error ? e.message : String(e) };
    }
  }

  override render() {
    const p = this.probe;
    if (!p) return html`<p class="muted">Looking for a WebGPU adapter…</p>`;
    if (!p.available) {
      return html`<div class="error" role="alert" data-testid="no-webgpu">
        <strong>No WebGPU here</strong> (${p.reason}).
        <p>RLVR Lab trains on your GPU through WebGPU. Open this page in Chrome or Edge 113 or newer with
        hardware acceleration on (<code>chrome://settings/system</code>). On Linux, start Chrome with
        <code>--enable-unsafe-webgpu --enable-features=Vulkan</code>; <code>chrome://gpu</code> shows what
        WebGPU reports. Headless runs work without a browser: <code>npx rlvr gpu</code>.</p>
      </div>`;
    }
    const { info } = p;
    const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
    return html`
      <table data-testid="gpu-info">
        <tr><th>Vendor</th><td data-testid="gpu-vendor">${info.vendor || "unknown"}</td></tr>
        <tr><th>Architecture</th><td data-testid="gpu-arch">${info.architecture || "unknown"}</td></tr>
        ${info.description
          ? html`
            <tr>
              <th>Description</th>
              <td>${info.description}</td>
            </tr>
          `
          : nothing}
        ${Object.entries(info.features).map(([name, on]) =>
          html`
            <tr>
              <th><code>${name}</code></th>
              <td class=${on ? "good" : "muted"} data-testid=${`feature-${name}`}>${on ? "yes" : "no"}
                        <span class="muted">— ${FEATURE_NOTES[name]}${on
                          ? ""
                          : name === "shader-f16"
                          ? "; kernels use their f32 path"
                          : ""}</span></td>
            </tr>
          `
        )}
        <tr><th>Largest storage buffer binding</th><td data-testid="gpu-max-binding">${mib(
          info.limits.maxStorageBufferBindingSize,
        )}</td></tr>
        <tr><th>Largest buffer</th><td>${mib(info.limits.maxBufferSize)}</td></tr>
        <tr><th>Workgroup memory</th><td>${(info.limits.maxComputeWorkgroupStorageSize / 1024).toFixed(0)} KiB</td></tr>
      </table>
      <p>${this.renderBench()}</p>
    `;
  }

  private renderBench() {
    const b = this.bench;
    switch (b.kind) {
      case "idle":
        return html`
          <button @click=${this.runBench} data-testid="bench-run">Run matmul benchmark</button>
          <span class="muted">512×512×512 f32, a few seconds; Run all measures it too, to plan the run</span>
        `;
      case "running":
        return html`<button disabled>Running…</button> <progress max="1" value=${b.fraction}></progress>`;
      case "done":
        return html`
          <button class="secondary" @click=${this.runBench}>Run again</button>
          <strong data-testid="bench-gflops">${b.result.gflops.toFixed(1)} GFLOP/s</strong>
          <span class="muted">(${b.result.iterations} runs of ${b.result.size}³;
                    self-check against a float64 reference
                    <span class=${b.result.checkPassed
                      ? "good"
                      : "bad"} data-testid="bench-check">${b.result.checkPassed ? "passed" : "FAILED"}</span>,
                    max |err| ${b.result.checkMaxAbsErr.toExponential(1)})</span>
        `;
      case "error":
        return html`
          <span class="error" role="alert">Benchmark failed: ${b.message}</span>
          <button class="secondary" @click=${this.runBench}>Retry</button>
        `;
    }
  }
}

customElements.define("rl-cell-gpu", RlCellGpu);

declare global {
  interface HTMLElementTagNameMap {
    "rl-cell-gpu": RlCellGpu;
  }
}
