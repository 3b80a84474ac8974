// The WGSL files that kernel templates include (`// #include FILE`), and the expansion of a template with them.
import { expandTemplate, type TemplateVars } from "./wgsl-template.ts";
import queryRolesSource from "./attention_query_roles.wgsl" with { type: "text" };
import fma8x8Source from "./matmul_fma8x8.wgsl" with { type: "text" };
import store8x8Source from "./matmul_store8x8.wgsl" with { type: "text" };
import fmaSource from "./matmul_t96h_fma.wgsl" with { type: "text" };
import t96hTailSource from "./matmul_t96h_tail.wgsl" with { type: "text" };
import tailPreludeSource from "./matmul_tail_prelude.wgsl" with { type: "text" };
import tailSource from "./matmul_tail.wgsl" with { type: "text" };

/** The files the templates include, by name. */
const PARTS: Record<string, string> = {
  "attention_query_roles.wgsl": queryRolesSource,
  "matmul_fma8x8.wgsl": fma8x8Source,
  "matmul_store8x8.wgsl": store8x8Source,
  "matmul_t96h_fma.wgsl": fmaSource,
  "matmul_t96h_tail.wgsl": t96hTailSource,
  "matmul_tail_prelude.wgsl": tailPreludeSource,
  "matmul_tail.wgsl": tailSource,
};

/** A kernel template's text (`name`: its file, for errors) expanded with `vars` and the shared parts. */
export function expandKernel(name: string, source: string, vars: TemplateVars = {}): string {
  return expandTemplate(name, source, vars, PARTS);
}
