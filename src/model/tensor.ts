// Dense float32 tensors and the weight map every model consumer (ONNX builder, WGSL trainer,
// float64 reference) reads. Names follow Hugging Face; linear weights are (out, in) as in PyTorch.

/** A dense row-major float32 tensor. */
export interface Tensor {
  shape: number[];
  data: Float32Array;
}

/** Model weights under their Hugging Face names (`model.layers.0.self_attn.q_proj.weight`, ...). */
export type Weights = Map<string, Tensor>;

/** Number of elements of a shape. */
export function numel(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** The (cols, rows) transpose of a row-major (rows, cols) matrix: a layer weight (out, in) as (in, out). */
export function transpose2d(a: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    for (let c = 0; c < cols; c++) out[c * rows + r] = a[base + c];
  }
  return out;
}

/** A tensor of the given shape; throws when the data length does not match. */
export function tensor(shape: number[], data: Float32Array, name = "tensor"): Tensor {
  if (data.length !== numel(shape)) {
    throw new Error(`${name}: data has ${data.length} elements, shape [${shape.join(", ")}] needs ${numel(shape)}`);
  }
  return { shape, data };
}

/** The tensor `name` from `w`, or an error naming it (and the expected shape when given). */
export function getTensor(w: Weights, name: string, shape?: readonly number[]): Tensor {
  const t = w.get(name);
  if (!t) throw new Error(`missing tensor ${name}${shape ? ` (expected shape [${shape.join(", ")}])` : ""}`);
  if (shape && !sameShape(t.shape, shape)) {
    throw new Error(`tensor ${name} has shape [${t.shape.join(", ")}], expected [${shape.join(", ")}]`);
  }
  return t;
}

/** True when two shapes are equal. */
export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}
