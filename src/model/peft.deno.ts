// Writes PEFT adapter folders to disk (Deno).
import type { LoraAdapter } from "./lora.ts";
import { peftFiles } from "./peft.ts";
import type { FloatDtype } from "./safetensors.ts";

/** Writes adapter_config.json and adapter_model.safetensors into `dir`. */
export async function writePeftFolder(
  dir: string,
  a: LoraAdapter,
  o: { baseModel?: string | null; dtype?: FloatDtype } = {},
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (const [name, bytes] of peftFiles(a, o)) await Deno.writeFile(`${dir}/${name}`, bytes);
}
