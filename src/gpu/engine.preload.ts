// Preloaded by `npm test` (deno test --preload) and usable with `deno run --preload`: selects the
// WebGPU engine from RLVR_WEBGPU (dawn, deno or auto) before any test module asks for a GPU.
import { selectWebGpuFromArgs } from "./engine.deno.ts";

await selectWebGpuFromArgs([], Deno.env.get("RLVR_WEBGPU_QUIET") === "1");
