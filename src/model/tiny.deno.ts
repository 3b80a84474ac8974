// Writes tiny models as Hugging Face folders on disk (Deno).
import { hfFolderFiles, type TinyModel, tinyTokenizerFiles } from "./tiny.ts";
import type { FloatDtype } from "./safetensors.ts";

/** Writes config.json, model.safetensors, tokenizer.json, tokenizer_config.json (ChatML template) and generation_config.json into `dir`. */
export async function writeHfFolder(
  dir: string,
  model: TinyModel,
  tokenizer: ReturnType<typeof tinyTokenizerFiles> = tinyTokenizerFiles(),
  o: { dtype?: FloatDtype } = {},
): Promise<string[]> {
  await Deno.mkdir(dir, { recursive: true });
  const files = hfFolderFiles(model, { dtype: o.dtype, tokenizer });
  for (const [name, bytes] of files) await Deno.writeFile(`${dir}/${name}`, bytes);
  return [...files.keys()];
}
