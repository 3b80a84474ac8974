// Imported first by every GPU bench: chooses the WebGPU engine before anything asks for a GPU
// (`--webgpu dawn|deno|auto` or `webgpu=...` among the bench's arguments, else RLVR_WEBGPU; by
// default Dawn where it starts), prints the one-line note, and hands the bench its arguments
// without the flag. Every bench's JSON names the engine from here.
import { selectWebGpuFromArgs } from "../src/gpu/engine.deno.ts";

const { choice, rest } = await selectWebGpuFromArgs(Deno.args);

/** "dawn" or "deno": the engine this bench runs on. */
export const webgpu = choice.engine;
/** The bench's command-line arguments without the engine flag. */
export const args: readonly string[] = rest;
