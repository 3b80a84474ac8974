// The WGSL text of the matmul kernels: the operand prelude (element types and vec4 loads: WGSL has no type-valued
// override constants), matmul_common.wgsl, and the kernel body. tile96h and the q4 128-tile kernels are templates
// (wgsl-template.ts) whose variants this file names: the contracted step, the LoRA tail (with quad loads or not) and
// vec4 stores of C. tile96hBody and typedSource give any variant's text; generate.ts writes the most-run ones to
// generated/ (the kernel a profile names is a file you can read).
import type { VecLoads } from "./matmul-plan.ts";
import { NO_VEC } from "./matmul-plan.ts";
import { expandKernel } from "./wgsl-parts.ts";
import type { TemplateVars } from "./wgsl-template.ts";
import commonSource from "./matmul_common.wgsl" with { type: "text" };
import t96hSource from "./matmul_t96h.wgsl" with { type: "text" };
import q4t128Source from "./q4matmul_t128.wgsl" with { type: "text" };

/** A LoRA tail's variables: its bindings, b2's layout, the kernel's output rows and columns (WGSL expressions), quad loads. */
export interface TailVars {
  bindings: readonly [number, number, number];
  transB: boolean;
  rows: string;
  cols: string;
  quads: boolean;
}

function tailVars(t: TailVars | undefined): TemplateVars {
  if (!t) return { TAIL: false, QUADS: false };
  const [a, b, u] = t.bindings;
  return {
    TAIL: true,
    QUADS: t.quads,
    TAIL_A: a,
    TAIL_B: b,
    TAIL_U: u,
    TAIL_TRANS_B: String(t.transB),
    TAIL_ROWS: t.rows,
    TAIL_COLS: t.cols,
  };
}

/** The body of tile96h at contracted step `tk`, with the LoRA tail (b2 layout `tailB`, quad loads where `tq`) or without (undefined), and vec4 stores of C where `c4`. */
export function tile96hBody(tk: 8 | 16, tailB: boolean | undefined, tq: boolean, c4: boolean): string {
  const tail = tailB === undefined
    ? undefined
    : { bindings: [4, 5, 6] as const, transB: tailB, rows: "dims.M", cols: "dims.N", quads: tq };
  return expandKernel("matmul_t96h.wgsl", t96hSource, { TK: tk, STEP8: tk === 8, C4: c4, ...tailVars(tail) });
}

/** A q4 128-tile kernel's body (q4matmul_t128.wgsl; `trans`: dx = dy W) at step `tk`, with the LoRA tail or not. */
export function q4TileBody(trans: boolean, tk: 8 | 16, tail: Omit<TailVars, "quads"> | undefined): string {
  return expandKernel("q4matmul_t128.wgsl", q4t128Source, {
    TK: tk,
    TRANS: trans,
    ...tailVars(tail && { ...tail, quads: false }),
  });
}

/**
 * Operand X's ("A" or "B", binding x) part of a kernel's prelude (matmul_common.wgsl describes it): the binding's element
 * type, elemX (one element as f32), quadX (four as a vec4f) and VEC_X. The kernels read X through them only, so either
 * form of the binding compiles with the same kernel text; only tile96h calls quadX (under VEC_X).
 */
function operandPrelude(X: "A" | "B", f16: boolean, vec: boolean): string {
  const x = X.toLowerCase();
  if (vec) {
    return `alias ${X}Elem = vec4f;\nconst VEC_${X}: bool = true;\n` +
      `fn elem${X}(i: u32) -> f32 { return ${x}[i / 4u][i % 4u]; }\nfn quad${X}(q: u32) -> vec4f { return ${x}[q]; }\n`;
  }
  return `alias ${X}Elem = ${
    f16 ? "f16" : "f32"
  };\nconst VEC_${X}: bool = false;\nfn elem${X}(i: u32) -> f32 { return f32(${x}[i]); }\n` +
    `fn quad${X}(q: u32) -> vec4f { return vec4f(elem${X}(4u * q), elem${X}(4u * q + 1u), elem${X}(4u * q + 2u), elem${X}(4u * q + 3u)); }\n`;
}

/** A kernel's full source: the operand prelude, matmul_common.wgsl (C bound as vec4 where `c4`), the kernel body. */
export function typedSource(body: string, aF16: boolean, bF16: boolean, vec: VecLoads = NO_VEC, c4 = false): string {
  const common = expandKernel("matmul_common.wgsl", commonSource, { C4: c4 });
  return `${aF16 || bF16 ? "enable f16;\n" : ""}${operandPrelude("A", aF16, vec.a)}${
    operandPrelude("B", bF16, vec.b)
  }${common}\n${body}`;
}
