// The layers of the source tree: a module may import from its own layer and the layers below it, never from one above;
// ui and top are siblings at the top and import neither each other. Lowest first:
//   core      src/core: pure logic (SQL, rewards, GRPO maths, metrics), no GPU, no model files
//   kernels   src/gpu/*.ts and src/gpu/kernels: the WebGPU device, recorder, knobs and the kernels with their wrappers
//   model     src/model: model files, tokenizer, the CPU reference, the ORT policy (which runs gpu/kernels' samplers)
//   trainer   src/gpu/model and src/gpu/trainer: the GPU model and its training steps (they read model's config,
//             tensors, LoRA and quantisation)
//   runtime   src/runtime: recipes, pretraining, stores, run planning
//   ui        src/ui: the notebook's elements and controllers
//   top       src/cli, workers: entry points, beside ui (a worker's *.api.ts contract counts as runtime: both sides
//             import it; the request path never reaches into the UI)
// So src/model and src/gpu do not import each other in a cycle: model may use gpu/kernels (below it), and the GPU
// trainer uses model (below it), but gpu/kernels never imports model and model never imports the trainer.
import { assert } from "../tests/assert.ts";

const LAYERS = ["core", "kernels", "model", "trainer", "runtime", "ui", "top"] as const;
type Layer = (typeof LAYERS)[number];

/** Whether a module of layer `from` may import one of layer `to`. */
export function mayImport(from: Layer, to: Layer): boolean {
  const rank = (l: Layer) => (l === "top" ? LAYERS.indexOf("ui") : LAYERS.indexOf(l));
  return from === to || (rank(to) < rank(from));
}

/** The layer of a file (a path from the repository root), or undefined for files outside the layered tree. */
export function layerOf(path: string): Layer | undefined {
  if (path.startsWith("src/core/")) return "core";
  if (path.startsWith("src/gpu/model/") || path.startsWith("src/gpu/trainer/")) return "trainer";
  if (path.startsWith("src/gpu/")) return "kernels";
  if (path.startsWith("src/model/")) return "model";
  if (path.startsWith("src/runtime/")) return "runtime";
  if (path.startsWith("src/ui/")) return "ui";
  // A worker's comlink contract (CONVENTIONS: one *.api.ts per worker, imported by both sides) sits with the runtime.
  if (/^workers\/[^/]+\.api\.ts$/.test(path)) return "runtime";
  if (path.startsWith("src/cli/") || path.startsWith("workers/")) return "top";
  return undefined;
}

const root = new URL("../", import.meta.url);

function walk(dir: string, out: string[] = []): string[] {
  for (const e of Deno.readDirSync(new URL(dir, root))) {
    const p = `${dir}${e.name}`;
    if (e.isDirectory) walk(`${p}/`, out);
    else if (/\.ts$/.test(e.name) && !/\.test\.ts$/.test(e.name)) out.push(p);
  }
  return out;
}

/** The relative module specifiers `text` imports or re-exports, statically or dynamically. */
export function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    out.push(m[1]);
  }
  for (const m of text.matchAll(/(?:^|\n)\s*import\s*["'](\.{1,2}\/[^"']+)["']/g)) out.push(m[1]);
  for (const m of text.matchAll(/\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g)) out.push(m[1]);
  return out;
}

function resolve(from: string, spec: string): string {
  const parts = from.split("/").slice(0, -1);
  for (const s of spec.split("/")) {
    if (s === "..") parts.pop();
    else if (s !== ".") parts.push(s);
  }
  return parts.join("/");
}

Deno.test("layers: importsOf finds static, re-exported, side-effect and dynamic relative imports", () => {
  const got = importsOf(
    'import { a } from "./a.ts";\nimport type { B } from "../b.ts";\nexport { c } from "./c.ts";\nimport "./d.ts";\nconst e = await import("../e.ts");\nimport x from "npm:x";\n',
  );
  assert(
    JSON.stringify(got) === JSON.stringify(["./a.ts", "../b.ts", "./c.ts", "./d.ts", "../e.ts"]),
    JSON.stringify(got),
  );
  assert(
    layerOf("src/gpu/kernels/matmul.ts") === "kernels" && layerOf("src/gpu/trainer/grad.ts") === "trainer" &&
      layerOf("src/model/lora.ts") === "model",
    "layerOf",
  );
  assert(
    layerOf("workers/gpu.api.ts") === "runtime" && layerOf("workers/run-host.ts") === "top",
    "a worker's contract and the worker",
  );
  // The rule: the GPU trainer may read the model layer, gpu/kernels may not; the workers may not reach into the UI (as
  // workers/run-host.ts did through src/ui/run-plan.ts) nor the UI into the workers but through their contracts.
  assert(
    mayImport("trainer", "model") && !mayImport("kernels", "model") && mayImport("model", "kernels") &&
      !mayImport("model", "trainer"),
    "model vs gpu",
  );
  assert(
    !mayImport("top", "ui") && !mayImport("ui", "top") && mayImport("ui", "runtime") && mayImport("top", "runtime"),
    "ui vs top",
  );
});

Deno.test("layers: no module imports from a layer above its own (core < kernels < model < trainer < runtime < ui | cli, workers)", () => {
  const bad: string[] = [];
  let checked = 0;
  for (const file of [...walk("src/"), ...walk("workers/")]) {
    const from = layerOf(file);
    if (!from) continue;
    for (const spec of importsOf(Deno.readTextFileSync(new URL(file, root)))) {
      const target = resolve(file, spec);
      const to = layerOf(target);
      checked++;
      if (to && !mayImport(from, to)) bad.push(`${file} (${from}) imports ${target} (${to})`);
    }
  }
  assert(checked > 500, `only ${checked} imports found: the walk or the parser is broken`);
  assert(bad.length === 0, `${bad.length} imports from a higher layer:\n${bad.join("\n")}`);
});
