// The part every matmul kernel shares (matmul-source.ts prepends it, after the operand prelude, to
// matmul.wgsl, matmul_t96h.wgsl and matmul_narrow.wgsl; a template: C4 binds C as vec4): the Dims contract,
// the bindings, the transpose/accumulate overrides and the bounds-checked element loads (f16 widened to f32).
// The prelude (matmul-source.ts operandPrelude) defines, per operand X = A, B: `alias XElem` (the binding's
// element: f32, f16, or vec4f where tile96h loads X as vec4), `fn elemX(i)` (element i as f32, whatever the
// binding's element), `fn quadX(q)` (elements 4q .. 4q + 3 as one vec4f; a single load only where XElem is
// vec4f) and `const VEC_X: bool` (XElem is vec4f).
// Split-K: with kTotal != 0 the batch index z is a slice of the contracted dimension:
// slice z covers k in [z K, min((z + 1) K, kTotal)); the caller lays the slices out with the strides
// (a slice of a k-fastest operand, plain A or transposed B, starts K columns further along rows that
// stay kTotal long).

struct Dims {
  M: u32,
  N: u32,
  K: u32,
  alpha: f32,
  strideA: u32, // elements between batches of A (0 broadcasts one A to every batch)
  strideB: u32, // elements between batches of B
  strideC: u32, // elements between batches of C
  kTotal: u32,  // 0, or the whole contracted length when batches are split-K slices
}

@group(0) @binding(0) var<storage, read> a: array<AElem>;      // (b, M, K), or (b, K, M) when TRANS_A
@group(0) @binding(1) var<storage, read> b: array<BElem>;      // (b, K, N), or (b, N, K) when TRANS_B
// #if C4
@group(0) @binding(2) var<storage, read_write> c: array<vec4f>;  // (b, M, N) as row quads (tile96h where N % 4 == 0)
// #else
@group(0) @binding(2) var<storage, read_write> c: array<f32>;  // (b, M, N) (the narrow kernel: (b, N, M) when TRANS_C)
// #endif
@group(0) @binding(3) var<uniform> dims: Dims;

override TRANS_A: bool = false;
override TRANS_B: bool = false;
override ACCUMULATE: bool = false;

// Row length of a k-fastest operand: K, or the whole contracted length when split.
fn rowK() -> u32 {
  if (dims.kTotal == 0u) { return dims.K; }
  return dims.kTotal;
}

fn loadA(base: u32, m: u32, k: u32, kEnd: u32) -> f32 {
  if (m >= dims.M || k >= kEnd) { return 0.0; }
  if (TRANS_A) { return elemA(base + k * dims.M + m); }
  return elemA(base + m * rowK() + k);
}

fn loadB(base: u32, k: u32, n: u32, kEnd: u32) -> f32 {
  if (k >= kEnd || n >= dims.N) { return 0.0; }
  if (TRANS_B) { return elemB(base + n * rowK() + k); }
  return elemB(base + k * dims.N + n);
}

// End of batch z's contracted range: dims.K, or the split-K slice's end.
fn sliceEnd(z: u32) -> u32 {
  if (dims.kTotal == 0u) { return dims.K; }
  return min(dims.K, dims.kTotal - min(dims.kTotal, z * dims.K));
}
