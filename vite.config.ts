import { readFileSync } from "node:fs";
import { defineConfig, type Plugin } from "vite";

/** Serves `.wgsl` files as text modules, the same way Deno's `with { type: "text" }` imports do. */
function wgslText(): Plugin {
  return {
    name: "rlvr-wgsl-text",
    enforce: "pre",
    load(id) {
      const path = id.split("?")[0];
      if (!path.endsWith(".wgsl")) return null;
      return `export default ${JSON.stringify(readFileSync(path, "utf8"))};`;
    },
  };
}

export default defineConfig({
  plugins: [wgslText()],
  server: { port: 5173, strictPort: true },
  preview: { port: 5173, strictPort: true },
  worker: { format: "es", plugins: () => [wgslText()] },
  // onnxruntime-web loads its own wasm and workers relative to its files: serve it unbundled.
  optimizeDeps: { exclude: ["onnxruntime-web"] },
  build: { target: "es2022", chunkSizeWarningLimit: 4096 },
});
