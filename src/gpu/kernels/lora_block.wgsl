// One part of a captured decoder's packed LoRA inputs (model/captured.ts, decoder.ts LoraStack): a target's A or B,
// (rows, cols) row-major as the policy feeds it, written to `dst` with strides: element (i, j) goes to
// base + i * row_stride + j * col_stride + t * rep_stride for t = 0..reps-1. That covers a B block of a block-diagonal B
// (row_stride R, col_stride 1), an A transposed into the columns of a stacked A^T (row_stride 1, col_stride R) and a
// B block repeated along the columns (reps S, rep_stride R). The other entries of `dst` are left as they are (zeros).
// Exact (f32 moves).

struct Params {
  rows: u32,
  cols: u32,
  base: u32,
  row_stride: u32,
  col_stride: u32,
  reps: u32,
  rep_stride: u32,
  _pad0: u32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;        // (rows, cols) the part's A or B
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;  // the packed input
@group(0) @binding(2) var<uniform> p: Params;

// x: element i of the part's rows * cols values, 256 a workgroup; y: 65535 workgroups a step along x.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x + gid.y * 65535u * 256u;
  if (i >= p.rows * p.cols) { return; }
  let row = i / p.cols;
  let col = i - row * p.cols;
  let v = src[i];
  let at = p.base + row * p.row_stride + col * p.col_stride;
  for (var t = 0u; t < p.reps; t++) {
    dst[at + t * p.rep_stride] = v;
  }
}
