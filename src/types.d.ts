// WGSL sources are imported as text: `import src from "./op.wgsl" with { type: "text" }`.
// Deno reads them natively; Vite through the plugin in vite.config.ts.
declare module "*.wgsl" {
  const source: string;
  export default source;
}
