// The LoRA tail's bindings and loads, before a tile kernel that runs the tail (matmul_t96h.wgsl, q4matmul_t128.wgsl
// both ways): a2 (rows, r), b2 (cols, r) when TAIL_TRANS_B, else (r, cols), the Tail uniform, and the
// loads, zero outside the kernel's {{TAIL_ROWS}} rows and {{TAIL_COLS}} columns and r, the scale folded into a2. QUADS:
// both bound as vec4 along their fastest side, loaded a quad at a time.
struct Tail { r: u32, scale: f32, _pad0: u32, _pad1: u32 }
// #if QUADS
@group(0) @binding({{TAIL_A}}) var<storage, read> a2: array<vec4f>; // (rows, r), quads along r
@group(0) @binding({{TAIL_B}}) var<storage, read> b2: array<vec4f>; // (cols, r) when TAIL_TRANS_B, else (r, cols): quads along the fastest side
// #else
@group(0) @binding({{TAIL_A}}) var<storage, read> a2: array<f32>; // (rows, r)
@group(0) @binding({{TAIL_B}}) var<storage, read> b2: array<f32>; // (cols, r) when TAIL_TRANS_B, else (r, cols)
// #endif
@group(0) @binding({{TAIL_U}}) var<uniform> tail: Tail;
const TAIL_TRANS_B: bool = {{TAIL_TRANS_B}};
// #if QUADS
fn tailA4(m: u32, j: u32) -> vec4f {
  if (m >= {{TAIL_ROWS}} || j >= tail.r) { return vec4f(0.0); }
  return tail.scale * a2[(m * tail.r + j) / 4u];
}
fn tailB4(j: u32, n: u32) -> vec4f {
  if (n >= {{TAIL_COLS}} || j >= tail.r) { return vec4f(0.0); }
  if (TAIL_TRANS_B) { return b2[(n * tail.r + j) / 4u]; }
  return b2[(j * {{TAIL_COLS}} + n) / 4u];
}
// #else
fn tailA(m: u32, j: u32) -> f32 {
  if (m >= {{TAIL_ROWS}} || j >= tail.r) { return 0.0; }
  return tail.scale * a2[m * tail.r + j];
}
fn tailB(j: u32, n: u32) -> f32 {
  if (n >= {{TAIL_COLS}} || j >= tail.r) { return 0.0; }
  if (TAIL_TRANS_B) { return b2[n * tail.r + j]; }
  return b2[j * {{TAIL_COLS}} + n];
}
// #endif
