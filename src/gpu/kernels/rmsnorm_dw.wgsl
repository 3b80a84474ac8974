// RMSNorm backward to the weight: dw[c] = sum over rows of dy[r, c] * x[r, c] * rstd[r]
// (+ dw[c] when ACCUMULATE). Each workgroup owns 64 columns; its 4 row slices are summed in a
// fixed order, so the result is deterministic. Dimension letters: R rows, C channels.

struct Params {
  rows: u32, // R
  C: u32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> dy: array<f32>;        // (R, C)
@group(0) @binding(1) var<storage, read> x: array<f32>;         // (R, C)
@group(0) @binding(2) var<storage, read> rstd: array<f32>;      // (R)
@group(0) @binding(3) var<storage, read_write> dw: array<f32>;  // (C)
@group(0) @binding(4) var<uniform> p: Params;

override ACCUMULATE: bool = false;

const COLS: u32 = 64u;  // columns per workgroup (threads along x, adjacent in memory)
const SLICES: u32 = 4u; // row slices per workgroup (threads along y)

var<workgroup> partial: array<f32, 256>; // (SLICES, COLS)

@compute @workgroup_size(64, 4)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let c = wg.x * COLS + lid.x;
  var s = 0.0;
  if (c < p.C) {
    for (var r = lid.y; r < p.rows; r += SLICES) {
      s = fma(dy[r * p.C + c] * x[r * p.C + c], rstd[r], s);
    }
  }
  partial[lid.y * COLS + lid.x] = s;
  workgroupBarrier();
  if (lid.y == 0u && c < p.C) {
    var v = (partial[lid.x] + partial[COLS + lid.x]) + (partial[2u * COLS + lid.x] + partial[3u * COLS + lid.x]);
    if (ACCUMULATE) { v += dw[c]; }
    dw[c] = v;
  }
}
