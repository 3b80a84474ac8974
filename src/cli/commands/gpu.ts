import { int, num, parseFlags } from "../args.ts";
import { benchmarkMatmul } from "../../gpu/bench.ts";
import { requestGpu } from "../../gpu/device.ts";
import { currentEngine } from "../../gpu/engine.deno.ts";
import type { Command } from "./index.ts";

export const command: Command = {
  name: "gpu",
  summary: "show the WebGPU adapter and run the matmul micro-benchmark",
  usage: "rlvr gpu [--size N (default 1024)] [--seconds S (default 1)] [--no-bench]",
  async run(argv) {
    const { values } = parseFlags(argv, {
      size: { type: "string" },
      seconds: { type: "string" },
      "no-bench": { type: "boolean" },
    });
    const gpu = await requestGpu();
    const { info } = gpu;
    const webgpu = currentEngine()?.engine ?? "deno";
    console.log(`webgpu: ${webgpu}`);
    console.log(
      `adapter: ${info.vendor || "?"} ${info.architecture || ""} ${info.description || info.device || ""}`.trim(),
    );
    console.log(`features: ${Object.entries(info.features).map(([k, v]) => `${k}=${v ? "yes" : "no"}`).join(" ")}`);
    if (info.features.subgroups) {
      console.log(
        `subgroups: sizes ${info.subgroupMinSize}-${info.subgroupMaxSize}; subgroup matrices: ${
          info.subgroupMatrixConfigs.join(", ") || "none"
        }`,
      );
    }
    console.log(
      `maxStorageBufferBindingSize: ${
        (info.limits.maxStorageBufferBindingSize / 2 ** 20).toFixed(0)
      } MiB, maxBufferSize: ${(info.limits.maxBufferSize / 2 ** 20).toFixed(0)} MiB`,
    );
    if (values["no-bench"]) return { webgpu, adapter: info };
    const bench = await benchmarkMatmul(gpu.device, {
      size: int(values, "size", 1024, 1, 16384),
      minSeconds: num(values, "seconds", 1, { min: 0, max: 3600 }),
    });
    console.log(
      `matmul ${bench.size}^3: ${bench.gflops.toFixed(1)} GFLOP/s over ${bench.iterations} runs (self-check max |err| ${
        bench.checkMaxAbsErr.toExponential(2)
      })`,
    );
    if (!bench.checkPassed) throw new Error(`matmul self-check failed: max |err| ${bench.checkMaxAbsErr}`);
    return { webgpu, adapter: info, bench };
  },
};
